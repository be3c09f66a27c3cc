// Package scrape fetches, parses, stores and compares Prometheus expositions
// of a vLLM-Omni (or any) server's /metrics endpoint.
//
// The package is the single place where exposition formats are understood:
// Fetch negotiates protobuf, OpenMetrics or text like a Prometheus server
// does; Parse decodes any of them (and the Python and Go client dialects of
// the text format) into Families, keyed by a canonical family name so that
// the two vLLM-Omni prefixes (`vllm_omni:X` and `vllm:omni_X`) are one
// family; ParseSelected decodes only the families a caller keeps, and a
// Selector does so for the repeated scrapes of one server, reading only the
// values of a scrape whose kept lines differ from those of the last scrape
// it decoded in full in their values alone; Snapshot keeps the raw bytes of
// one scrape on disk; Diff turns two scrapes into per-series deltas with
// restart (counter reset) detection; and
// HistogramQuantile estimates quantiles from bucket deltas exactly as
// Prometheus' histogram_quantile does.
//
// Every scrape is bounded (Options): a deadline from connect to last byte
// (DefaultTimeout, 10 s), a cap on the bytes read (MaxBodyBytes) and on the
// samples decoded (DefaultMaxSamples), counted before any decoder runs. A
// bound that is hit is a typed error (*TimeoutError, *LimitError) that
// callers turn into a note naming the flag that raises it.
//
// Comparisons are always made on parsed values, never on text: `1.0` and `1`,
// `le="1024.0"` and `le="1024"`, any label order and either order of `_sum`
// and `_count` are the same data.
package scrape
