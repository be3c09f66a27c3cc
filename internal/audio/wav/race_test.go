//go:build race

package wav

// raceEnabled skips allocation counts, which the race detector inflates.
const raceEnabled = true
