package runner

import (
	"bytes"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
)

// setSink keeps every measured request's figures (Outcome.Set), not the
// records, so that memory stays bounded per request.
type setSink summary.Set

func (s *setSink) add(rec *results.Record, _ *bytes.Buffer) error {
	(*summary.Set)(s).Add(rec)
	return nil
}

func (*setSink) close(*Outcome) error { return nil }

// worstSink keeps the worst response's full record (Outcome.Worst) for
// the HTML's timeline chart.
type worstSink summary.WorstPicker

func (s *worstSink) add(rec *results.Record, _ *bytes.Buffer) error {
	(*summary.WorstPicker)(s).Offer(rec)
	return nil
}

func (*worstSink) close(*Outcome) error { return nil }

// refusedModelSink keeps the first model the server refused (see
// modelRefused), for the hint that lists the models it serves.
type refusedModelSink struct {
	noClose
	model string
}

func (s *refusedModelSink) add(rec *results.Record, _ *bytes.Buffer) error {
	if m, ok := modelRefused(rec); ok && s.model == "" {
		s.model = m
	}
	return nil
}
