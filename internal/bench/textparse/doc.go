// Package textparse compares omnibench's exposition parsers with the anchor,
// Prometheus's own streaming text parser (model/textparse), on the same
// simulator expositions: `go test -bench . -benchtime 5x` in this directory.
//
// It is a module of its own so that Prometheus's many dependencies stay out
// of omnibench's go.mod; a replace directive points at the main module.
package textparse
