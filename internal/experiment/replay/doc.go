// Package replay re-runs the continuity models over recorded chunk timelines:
// trace files (one response per JSONL line) or the results file of an
// omnibench run. It answers "would this stream have played smoothly?" for a
// different threshold, underrun mode or pre-roll buffer without sending a
// request again, and lets traces captured by other tools be judged the same
// way as omnibench's own.
package replay
