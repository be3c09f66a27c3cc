//go:build race

package sse

// raceEnabled skips allocation counts, which the race detector inflates.
const raceEnabled = true
