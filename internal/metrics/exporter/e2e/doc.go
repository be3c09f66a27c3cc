// Package e2e holds the exporter's end-to-end test against a real
// Prometheus: it scrapes the simulator's /metrics and omnibench's exporter
// during a short run, then checks through Prometheus's HTTP API that
// histogram_quantile, increase and rate over both sides agree with
// omnibench's own report within the bucket resolution, that every query of
// the Grafana dashboard returns data, and that promtool accepts both
// expositions apart from the design's naming.
//
// The test needs the prometheus and promtool binaries (Debian's prometheus
// package; .ci/run installs it). Outside CI (CI unset) it skips when they are
// missing; in CI it fails.
package e2e
