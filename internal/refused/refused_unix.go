//go:build unix

package refused

import (
	"fmt"
	"syscall"
	"testing"
)

func addr(t testing.TB) string {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatalf("refused.Addr: socket: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	// Without SO_REUSEADDR, which Go's listeners set, no other socket can bind the port while
	// this one holds it; and a socket that never listens answers every connection with a reset.
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("refused.Addr: bind 127.0.0.1:0: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("refused.Addr: getsockname: %v", err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		t.Fatalf("refused.Addr: bound to %T, not an IPv4 address", sa)
	}
	return fmt.Sprintf("127.0.0.1:%d", in4.Port)
}
