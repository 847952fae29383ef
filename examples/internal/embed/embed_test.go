package embed

import (
	"net"
	"strings"
	"testing"
)

// TestServeAddressInUse: a -serve address already taken is refused before the collector starts,
// in one message that names the address and what to do.
func TestServeAddressInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := Start(Options{Serve: l.Addr().String()})
	if err == nil {
		c.Stop()
		t.Fatal("Start served on an address in use")
	}
	if want := "cannot serve the metrics at " + l.Addr().String(); !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "give -serve another address") {
		t.Errorf("error %q, want one containing %q and what to do", err, want)
	}
}
