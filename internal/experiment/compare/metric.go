package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/omnibench/omnibench/internal/run/results"
)

// Metric is one compared quantity of a request record.
type Metric struct {
	Name  string // the name in --fail-on-regression and the JSON output, e.g. "ttfp"
	Field string // the results.Record JSON field it reads, e.g. "ttfp_s"
	Unit  string // unit of the record value and of the JSON output: "s" or "ratio"
	// Display is the unit of table cells and Scale converts a record value
	// into it (seconds to milliseconds for latencies).
	Display string
	Scale   float64
	// Value returns the metric of one record, or false when the record does
	// not carry it (no audio, no text).
	Value func(r *results.Record) (float64, bool)
}

// Label is the row label of a table: name and display unit, "ttfp (ms)".
func (m Metric) Label() string { return fmt.Sprintf("%s (%s)", m.Name, m.Display) }

// Metrics returns the compared metrics in row order. For every one of them
// larger is worse (for audio duration: a change in how much audio the server
// produced for the same prompts, which a gate should catch too). Latencies
// (ttfp, ttft, e2e) are read through results.Record.Latency, from the
// origin the record says (the intended start of an open-loop request, so a
// late send counts), as every other consumer reads them; the RTFs keep the
// benchmark's send-relative definitions.
func Metrics() []Metric {
	audio := func(r *results.Record) bool { return r.HasAudio() }
	withDuration := func(r *results.Record) bool { return r.HasAudio() && r.AudioDurationS > 0 }
	return []Metric{
		{Name: "ttfp", Field: "ttfp_s", Unit: "s", Display: "ms", Scale: 1000,
			Value: func(r *results.Record) (float64, bool) { return r.Latency(r.TTFPS), audio(r) }},
		{Name: "ttft", Field: "ttft_s", Unit: "s", Display: "ms", Scale: 1000,
			Value: func(r *results.Record) (float64, bool) { return r.Latency(r.TTFTS), r.TTFTS > 0 }},
		{Name: "e2e", Field: "e2e_s", Unit: "s", Display: "ms", Scale: 1000,
			Value: func(r *results.Record) (float64, bool) { return r.Latency(r.E2ES), true }},
		{Name: "rtf_last_chunk", Field: "rtf_last_chunk", Unit: "ratio", Display: "x", Scale: 1,
			Value: func(r *results.Record) (float64, bool) { return r.RTFLastChunk, withDuration(r) }},
		{Name: "rtf_e2e", Field: "rtf_e2e", Unit: "ratio", Display: "x", Scale: 1,
			Value: func(r *results.Record) (float64, bool) { return r.RTFE2E, withDuration(r) }},
		{Name: "underrun", Field: "continuity.max_underrun_s", Unit: "s", Display: "ms", Scale: 1000,
			Value: func(r *results.Record) (float64, bool) {
				if r.Continuity == nil {
					return 0, false
				}
				return r.Continuity.MaxUnderrunS, true
			}},
		{Name: "audio_duration", Field: "audio_duration_s", Unit: "s", Display: "s", Scale: 1,
			Value: func(r *results.Record) (float64, bool) { return r.AudioDurationS, audio(r) }},
		// A run transcribed with --asr-url: its results file's asr lines.
		{Name: "wer", Field: "asr.wer", Unit: "ratio", Display: "%", Scale: 100,
			Value: func(r *results.Record) (float64, bool) {
				if r.ASR == nil {
					return 0, false
				}
				return r.ASR.WER, true
			}},
	}
}

// MetricNames returns the names of Metrics in row order.
func MetricNames() []string {
	ms := Metrics()
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name
	}
	return names
}

// LookupMetric finds a metric by name (case-insensitive; "-" may stand for
// "_"). The error lists the valid names.
func LookupMetric(name string) (Metric, error) { return lookupMetric(name, Metrics()) }

func lookupMetric(name string, ms []Metric) (Metric, error) {
	key := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
	if i := slices.IndexFunc(ms, func(m Metric) bool { return m.Name == key }); i >= 0 {
		return ms[i], nil
	}
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name
	}
	return Metric{}, fmt.Errorf("unknown metric %q (want one of %s)", name, strings.Join(names, ", "))
}
