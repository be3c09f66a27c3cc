//go:build unix && !linux

package abtest

// groupAlive reports whether any process of the group still exists.
func groupAlive(pgid int) bool { return groupExists(pgid) }
