//go:build race

package wsclient

// raceEnabled skips allocation counts, which the race detector inflates
// (and a sync.Pool under it drops some of what it is given).
const raceEnabled = true
