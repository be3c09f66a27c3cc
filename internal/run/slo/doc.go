// Package slo parses service-level objectives such as `audio_ttfp_p95<500ms`
// or `continuity_ok_rate>=99%`, checks them against a run's summary, and
// turns the verdicts into a JUnit suite, so CI can gate on a benchmark run.
//
// # Grammar
//
// One expression compares one figure of the run with a limit. Whitespace is
// allowed between tokens; figure names are case-insensitive, units are not.
//
//	slo        = figure op value [ unit ] .
//	figure     = metric "_" stat | scalar | "continuity_ok_rate_" digits "ms" .
//	metric     = "audio_ttfp" | "ttfp" | "ttft" | "e2e" | "e2el" | "itl"
//	           | "rtf_last_chunk" | "rtf_e2e" | "rtf_server" | "audio_rtf"
//	           | "audio_duration" | "audio_underrun" | "underrun"
//	           | "schedule_lag" | "stamp_delay" .
//	stat       = "mean" | "median" | "std" | "min" | "max" | "p" percentile .
//	percentile = digits [ "." digits ] .              (* 0 to 100: p95, p99.9 *)
//	scalar     = "continuity_ok_rate" | "error_rate" | "drop_rate" | "errors" | "completed"
//	           | "request_throughput" | "audio_throughput"
//	           | "goodput_rate" | "goodput_share" | "stall_rate" .
//	op         = "<" | "<=" | ">" | ">=" | "==" .
//	value      = [ "+" | "-" ] mantissa [ ( "e" | "E" ) [ "+" | "-" ] digits ] .
//	mantissa   = digits [ "." [ digits ] ] | "." digits .
//	unit       = "ns" | "us" | "µs" | "ms" | "s" | "m" | "%" .
//	digits     = digit { digit } .
//
// "!=" is not an operator: a benchmark figure is never meant to avoid one
// exact value.
//
// # Units
//
// Times (every metric but the RTFs) need a time unit, so `500` can never be
// read as the wrong one: `audio_ttfp_p95<500` is an error, `<500ms` and
// `<0.5s` mean the same. The limit is converted to the unit the run summary
// stores the figure in (milliseconds for audio_ttfp, ttft, e2e, itl,
// schedule_lag and stamp_delay; seconds for audio_duration and
// audio_underrun) and compared there: `audio_ttfp_p95<500ms` compares the
// summary's p95 TTFP, in ms, with 500.
//
// Rates (continuity_ok_rate, error_rate, drop_rate, goodput_share, stall_rate) are
// fractions between 0 and 1, written plain (0.99) or as a percentage (99%).
// Everything else is a plain number and takes no unit: RTFs, the counts
// errors and completed, request_throughput and goodput_rate (requests per
// second), audio_throughput (audio seconds per wall-clock second).
//
// # Figures
//
// Distributions are over the measured (non-warm-up) requests, exactly as in
// the run summary (package summary): audio_ttfp = time to first audio packet,
// ttft = time to first text token (both over completed responses that had
// one), e2e = whole-request latency of completed requests, itl = gaps between
// text events, rtf_last_chunk / rtf_e2e / rtf_server / audio_rtf = the
// real-time factors of docs/reference/benchmark.md, section 1 (audio_rtf is
// the vLLM-Omni
// benchmark's: last chunk for chat, e2e for speech), audio_duration = audio
// received per response, audio_underrun = worst playback gap per response,
// schedule_lag = open-loop lateness of each send, stamp_delay = client
// receive delay against the simulator's send stamps. In an open-loop run the
// summary measures latencies from each request's intended start (they include
// the scheduling lag, against coordinated omission), and so do the SLOs.
//
// Any percentile can be asked for: one the summary did not report (say p97
// with the default 50,90,95,99) is computed from the run's records with the
// same interpolation. p50 and median are the same value.
//
// Scalars: continuity_ok_rate is the share of audio responses whose worst
// gap stayed within 100 ms (continuity_ok_rate_<N>ms for N ms; computed from
// the records when that threshold was not summarised); error_rate =
// failed / measured requests; drop_rate = open-loop arrivals dropped by
// --max-inflight / (measured requests + dropped arrivals); errors = failed requests; completed =
// completed requests; request_throughput = completed requests per second;
// audio_throughput = audio seconds per second; goodput_rate = requests per
// second that met every --goodput SLO and goodput_share = their share of the
// measured requests (both need --goodput); stall_rate = share of played
// responses in which the stall-and-resume player stalled at least once.
//
// # No data
//
// A figure without data never passes silently: it fails, with Result.NoData
// set and a message saying why (no response carried audio, the server sent no
// send stamps, --goodput was not given, a standard deviation of one value,
// ...). A run that measured no requests fails every SLO.
//
// # Errors and exit status
//
// Parse errors name the expression and point at the offending character
// (ParseError). An unknown figure name comes with the closest known one.
// `omnibench run` exits with these statuses:
//
//	0    every SLO passed (or none were given)
//	1    an error (the run could not be made or reported)
//	2    unusable input (bad flags, a bad SLO expression or scenario)
//	3    ExitSLOMiss: the run completed and at least one SLO missed
//	130  interrupted (Ctrl-C or SIGTERM)
package slo

// ExitSLOMiss is the process exit status of a run that completed but missed
// at least one SLO. It differs from 1 (error) and 2 (unusable input) so CI
// can tell a performance regression from a crash or a typo.
const ExitSLOMiss = 3
