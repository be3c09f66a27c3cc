// Package omnimetrics is the Prometheus metric core shared by the omnibench
// simulator (server side, families named like a vLLM-Omni server) and the
// client-side exporter (prefix "omnibench:" plus constant labels naming the
// run).
//
// One table, PipelineFamilies, defines every vLLM-Omni pipeline, audio and
// transfer family (docs/reference/metric-families.md, section 3): name
// without prefix, type, label
// names, buckets and HELP text. UpstreamFamilies does the same for the subset
// of upstream vLLM per-engine families (docs/reference/metric-families.md,
// section 4.2) that vLLM-Omni
// relabels with stage and replica. Registration builds collectors from these
// tables only, so a name or bucket is written down exactly once.
//
// A Metrics value owns one private prometheus.Registry; nothing is registered
// globally. Gating follows docs/reference/metric-families.md, section 2: with stats off every pipeline
// family is registered and exposed as HELP and TYPE lines only, the observe
// methods do nothing, and the upstream vllm:* families are not registered at
// all. client_golang drops families that have no children, so Handler
// serves a Gatherer that puts them back (see Gatherer) and writes the text
// format itself for those, because expfmt's text encoder refuses a family
// with no metrics.
package omnimetrics
