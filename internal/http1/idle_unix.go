//go:build unix

package http1

import (
	"errors"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// closedOrUnsolicited reports whether an idle connection has something to
// read: the server's FIN (it closed the connection), a reset, or bytes no
// request asked for. It peeks without blocking or consuming, so a live
// connection is left as it was. Without this check a stale connection is
// found only by the request sent on it.
func closedOrUnsolicited(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	readable := false
	err = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		// EAGAIN: nothing pending, the connection is idle. Anything else
		// is bytes (n > 0), the FIN (n == 0) or an error.
		readable = !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR)
		return true
	})
	return readable || err != nil
}
