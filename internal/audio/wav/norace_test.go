//go:build !race

package wav

const raceEnabled = false
