// Package breakdown tells where the time of a run went, from the server's
// own metrics: per stage and replica (the upstream vllm:* families that
// vLLM-Omni labels with stage and replica), per edge between two replicas
// of adjacent stages (the transfer families), and an attribution of the
// listener's latency to the stages, the transfers, the rest of the server
// (queueing, orchestration) and what lies between the server and the
// client.
//
// The input is scrapes of the server's /metrics: Select keeps only the
// families a breakdown reads, so a caller scraping during a run holds a few
// kilobytes between scrapes, not whole expositions. Compute turns two such
// selections (the run's first and last, or the edges of any window inside
// it) and the client's own figures over the same requests into a
// Breakdown. A Timeline accumulates the gauges and rates of every interval
// between scrapes, with a cap on its points.
//
// Means are exact: a histogram's sum increase divided by its count
// increase. Quantiles are estimates from bucket increases, interpolated the
// way Prometheus' histogram_quantile does (scrape.HistogramQuantile), and
// carry the bounds of the bucket the true value lies in. Where the server's
// figures cannot be split (its stats are off, a family is missing, a
// stage counted other requests than the pipeline, the stages overlap in
// time), the breakdown says why instead of giving a number.
package breakdown
