//go:build !race

package wsclient

const raceEnabled = false
