//go:build !unix

package refused

import (
	"net"
	"testing"
)

// addr falls back to a port picked free and closed: outside Unix, the syscall package has no
// socket that can be bound without listening.
func addr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("refused.Addr: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}
