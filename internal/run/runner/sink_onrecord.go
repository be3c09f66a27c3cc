package runner

import (
	"bytes"

	"github.com/omnibench/omnibench/internal/run/results"
)

// onRecordSink hands every record to Config.OnRecord (the exporter).
type onRecordSink func(*results.Record)

func (f onRecordSink) add(rec *results.Record, _ *bytes.Buffer) error {
	f(rec)
	return nil
}

func (onRecordSink) close(*Outcome) error { return nil }
