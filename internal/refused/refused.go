// Package refused gives tests an address where every connection is refused, and stays refused.
//
// The usual way, binding port 0, reading the port and closing the listener, leaves the port free:
// any process, or a connection this test binary opens, may take it before the test dials it, and
// the test then meets a server, or a stranger's port, where it expected a refusal.
package refused

import "testing"

// Addr returns a loopback address (127.0.0.1:port) whose port is held by a socket that is bound but
// never listens, until t ends: the kernel refuses every connection to it, and no other socket can
// bind it meanwhile.
func Addr(t testing.TB) string {
	t.Helper()
	return addr(t)
}
