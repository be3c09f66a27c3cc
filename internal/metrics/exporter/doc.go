// Package exporter publishes what an omnibench run measures as Prometheus
// series, so the client's view can sit beside the server's on one dashboard:
// live on an HTTP /metrics endpoint during the run (`omnibench run
// --metrics-addr`), as a text file for node_exporter's textfile collector
// (`--metrics-out`) and pushed to a Pushgateway (`--push`).
//
// # Families
//
// The audio and pipeline families are the metric core's (omnimetrics) under
// the prefix "omnibench:", with the same types, buckets and label keys as the
// server's: an Exporter wraps an omnimetrics.Metrics and observes through its
// methods, so no family is defined twice. The run's identity is in the
// model_name label, which every family carries, and in two constant labels,
// endpoint (the request path) and scenario. Label values come from small
// fixed sets, so the number of series is bounded whatever the run does.
//
// The load generator's own health has families of its own, defined once in
// Families and registered on the core's registry: arrivals scheduled,
// started and dropped, warm-up requests, scheduling lag, client queue time
// (the wait for a connection), errors by class, the stall-and-resume player,
// and the process's health from package selfmon (CPU share of the usable
// cores, scheduling latency p99, GC pauses, memory, and at the end whether
// it was saturated). Requests in flight are the core's num_requests_running
// gauge (num_requests_waiting stays 0: a request waiting for a connection is
// in flight from the load's point of view; its wait is client_queue_seconds).
//
// # What the client observes
//
// Each finished request is observed once, from its results.Record, with the
// conventions of omnibench's own report (package summary), so that the series
// and the report agree:
//
//   - Warm-up requests count only in warmup_requests_total and
//     num_requests_running, as the report leaves them out; requests of a
//     load ramp count as started and in flight only, unless IncludeRamp.
//   - A failed request increments requests_success_total
//     {finished_reason="abort"} (as the server counts failures) and
//     errors_total{class}; it records no latency and no audio.
//   - audio_ttfp_s is observed for every successful response with audio, on
//     any endpoint (servers observe it on streaming chat, and since
//     September 2026 on speech streams too).
//   - audio_rtf is the report's audio_rtf: the time of the last audio chunk
//     after the send divided by the audio duration for chat, and the
//     end-to-end time divided by the duration for speech (the vLLM-Omni
//     benchmark's definitions). The server's audio_rtf is its generation
//     time divided by the duration.
//   - audio_underrun_s and audio_continuity_ok_total come from the core's
//     continuity simulation over the record's chunk arrivals, in the run's
//     continuity mode (the client defaults to continuity.Default; servers use
//     continuity.Reference).
//   - TTFP and end-to-end latency are read through results.Record.Latency,
//     from the origin the record carries (the intended start in an open loop),
//     as the report measures them, so coordinated omission does not hide a
//     stalled server.
//   - The client cannot see a pipeline stage, so the audio families carry
//     stage="0" and replica="0": the label keys match the server's, the
//     values say "the whole pipeline as one".
//
// # Serving, files and pushing
//
// Listen serves Handler on an address and keeps serving for a linger time
// after the run so that the last scrape sees the final values. WriteFile
// writes the final text exposition atomically. Push sends the final series
// to a Pushgateway with a job name and grouping labels.
package exporter
