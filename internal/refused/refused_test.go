package refused

import (
	"errors"
	"net"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestRefusedAndHeld: a connection to the address is refused, and a listener cannot take its port
// while the test holds it.
func TestRefusedAndHeld(t *testing.T) {
	a := Addr(t)
	c, err := net.DialTimeout("tcp", a, 5*time.Second)
	if err == nil {
		c.Close()
		t.Fatalf("a connection to %s was accepted", a)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial %s: %v, want connection refused", a, err)
	}
	if runtime.GOOS == "windows" {
		return // the fallback does not hold the port
	}
	if l, err := net.Listen("tcp", a); err == nil {
		l.Close()
		t.Errorf("a listener took %s while it was held", a)
	}
}
