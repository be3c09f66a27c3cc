// Package abtest runs an A/B benchmark of two servers, or of one server with
// and without a setting, and decides whether they differ: `omnibench ab`.
//
// The method follows the A/B test of vLLM-Omni's original metrics design
// (30 sequential audio requests per arm, Welch's t-test, /metrics line counts;
// docs/reference/metric-families.md, section 7):
//
//   - Both arms get the same seeded workload. Each arm's requests are split
//     into rounds run in the interleaved order A B B A A B B A ..., so slow
//     drift of the machine (thermal state, background load, caches) falls on
//     both arms alike instead of on whichever ran second.
//   - Round r of either arm uses the same seed (the run's seed for round 0, a
//     seed derived from it after that), and every round starts with the same
//     number of warm-up requests on both arms. Warm-ups take the first sequence
//     numbers of a round, so the two arms see exactly the same prompts in the
//     same order, and every server start is warmed up.
//   - Requests are sequential (one in flight) by default, so the arms are
//     compared on latency, not on how they queue.
//   - After each arm's last round its /metrics is scraped in the text format
//     and measured: lines, families, series, which families are empty and
//     whether the upstream vllm: families are there.
//
// The analysis uses package stats for each of e2e, TTFP and the audio RTF
// (the vLLM-Omni benchmark's definition: last chunk for chat, end to end for
// speech): per-arm summaries, Welch's t with its confidence interval,
// Mann–Whitney, Hedges' g, the minimum detectable effect and effective sample
// size warnings, with Holm's correction across the three metrics.
//
// Throughput mode (Config.Throughput, throughput.go) also asks whether the
// arms serve as much: every round is a closed loop meant to saturate the
// server and one sample of requests/s and audio s/s, compared across the
// rounds with Welch's t-test beside the per-request latencies.
//
// An arm is a running server (URL), a server command that abtest starts and
// stops itself, or the embedded simulator. Server commands run without a
// shell in their own process group, with "{port}" replaced by a free loopback
// port; their output goes to a log file; abtest waits for GET /health, and
// stops them with SIGTERM to the whole group, then SIGKILL after a grace
// period, on every path out of Run (success, error, interruption). Managed
// servers run one at a time (a GPU rarely holds two models, and an idle
// server's background work would disturb the other arm): consecutive rounds
// of one arm (the B B and A A of the order) share a server start.
package abtest
