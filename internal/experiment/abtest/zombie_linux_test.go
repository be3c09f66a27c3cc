package abtest

import "strconv"

// zombie reports whether pid has exited but not been reaped.
func zombie(pid int) bool {
	state, _, ok := procStat(strconv.Itoa(pid))
	return ok && (state == 'Z' || state == 'X')
}
