// Package rss measures the resident memory of a whole `omnibench run`
// process over a long run, as the operating system sees it: garbage
// collector headroom, the end-of-run summary and everything else that grows
// per request included, which an in-process heap figure leaves out.
//
// BenchmarkRunRSS builds omnibench, starts `omnibench serve` with short
// responses and runs `omnibench run` against it at a fixed rate, sampling
// the run's VmRSS and VmHWM from /proc (Linux only). Run it alone, once:
//
//	go test ./internal/bench/rss/ -run '^$' -bench RunRSS -benchtime 1x -timeout 30m
//
// Flags -rss.rate and -rss.requests set the scale (200 requests/s; 10,000
// and 40,000 requests).
package rss
