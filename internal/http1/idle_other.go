//go:build !unix

package http1

import "net"

// closedOrUnsolicited cannot peek at a socket here: a stale idle
// connection is found by the request sent on it, which is then retried once
// on a new connection (see Transport.RoundTrip).
func closedOrUnsolicited(net.Conn) bool { return false }
