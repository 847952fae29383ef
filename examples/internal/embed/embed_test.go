package embed

import (
	"net"
	"net/http"
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

// TestPortTakenBeforeTheCollectorBindsIt: the receiver's port is picked free and bound by the
// collector a moment later. When another process took it in between, Start picks another one.
func TestPortTakenBeforeTheCollectorBindsIt(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	picks := 0
	defer func(f func(string) (string, error)) { pickPort = f }(pickPort)
	real := pickPort
	pickPort = func(host string) (string, error) {
		picks++
		if picks == 1 {
			return busy.Addr().String(), nil
		}
		return real(host)
	}
	c, err := Start(Options{})
	if err != nil {
		t.Fatalf("Start gave up on a port taken before the collector bound it: %v", err)
	}
	defer c.Stop()
	if c.Endpoint == busy.Addr().String() || picks != 2 {
		t.Errorf("endpoint %s after %d picks; want another port than the taken %s, picked on the second try", c.Endpoint, picks, busy.Addr())
	}
}

// TestServePortZero: -serve with port 0 serves on a port picked for it, and the Collector names
// that port, so that what the example prints is an address that answers.
func TestServePortZero(t *testing.T) {
	c, err := Start(Options{Serve: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if _, port, _ := net.SplitHostPort(c.Serve); port == "" || port == "0" {
		t.Fatalf("Serve %q: want the port picked for port 0", c.Serve)
	}
	resp, err := http.Get("http://" + c.Serve + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /metrics at %s: %s", c.Serve, resp.Status)
	}
}

// TestServeForms: -serve without a host and port is refused naming the form, where a bare port
// was told to take another address; ":port" (every interface) is announced as an address on
// this machine, where it was announced as http://:port.
func TestServeForms(t *testing.T) {
	if _, err := Start(Options{Serve: "9464"}); err == nil || !strings.Contains(err.Error(), "-serve 9464: give a host and a port, such as 127.0.0.1:9464") {
		t.Errorf("error %v, want one naming the form", err)
	}
	c, err := Start(Options{Serve: ":0"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if !strings.HasPrefix(c.Serve, "127.0.0.1:") {
		t.Errorf("announced %q, want 127.0.0.1:port", c.Serve)
	}
}
