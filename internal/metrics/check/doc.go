// Package check validates a server's Prometheus metrics against rules: the
// built-in vllm-omni profile (the metric families of the vLLM-Omni design,
// their types, labels and buckets, naming conventions, histogram invariants,
// stats gating, promlint) and rules written in YAML. Rules may compare a
// series' value or its increase between two scrapes with a number or with a
// figure the client observed during a run (RunFigures), within a stated
// tolerance, and a histogram's quantile estimate with a number.
//
// Evaluate turns an Input (one scrape or a before/after pair, optionally run
// figures) and a list of Rules into a Report of one Result per rule (a rule
// with a "*" label expands into one result per value). Reports render as a
// table, JSON or JUnit XML.
package check
