package runner

import (
	"maps"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/secret"
)

// redactFlags returns the flags of the results header with every known
// credential and every URL's userinfo removed from their values.
func redactFlags(r *secret.Redactor, flags map[string]string) map[string]string {
	if flags == nil {
		return nil
	}
	out := maps.Clone(flags)
	for k, v := range out {
		out[k] = r.String(secret.URL(v))
	}
	return out
}

// redactRecord masks credentials in the server text a record carries, on
// its way to every consumer (summary, JSONL, HTML, exporter). The clients
// redact that text before they clip it; this is the last line of defence.
func redactRecord(r *secret.Redactor, rec *results.Record) {
	if rec.Error != "" {
		rec.Error = r.String(rec.Error)
	}
	if rec.WS != nil && rec.WS.CloseReason != "" {
		rec.WS.CloseReason = r.String(rec.WS.CloseReason)
	}
}
