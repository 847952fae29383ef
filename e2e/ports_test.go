package e2e

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Ports for the processes a test starts are chosen below the kernel's ephemeral range, not by
// binding port 0.
//
// A bind to port 0 takes a port from the ephemeral range (net.ipv4.ip_local_port_range), the
// range every outbound connection takes its source port from. Between freePort closing its
// listener and the child process binding the port, any connection this test binary opens, and
// the attack tests open hundreds in parallel, can take that port, and the child then fails with
// "address already in use". Below the range, only another listener can take a port, and freePort
// never hands out the same port twice. startShipped still starts a collector again on new ports
// if one is taken all the same (by another program on the machine).
const (
	lowestPort    = 20000 // below it sit many services' well-known ports
	ephemeralLow  = 32768 // Linux's default start of the ephemeral range, when it cannot be read
	minPortChoice = 1000  // fewer ports than this below the range: bind port 0 instead
)

var ports struct {
	sync.Mutex
	handed map[int]bool
}

// freePort returns a loopback address (127.0.0.1:port) on which nothing listens, for a process the
// test starts to bind.
func freePort(t *testing.T) string {
	t.Helper()
	ports.Lock()
	defer ports.Unlock()
	if ports.handed == nil {
		ports.handed = map[int]bool{}
	}
	if high := ephemeralStart(); high-lowestPort >= minPortChoice {
		for range 200 {
			p := lowestPort + rand.IntN(high-lowestPort)
			if ports.handed[p] {
				continue
			}
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
			l, err := net.Listen("tcp", addr)
			if err != nil {
				continue // something listens there
			}
			l.Close()
			ports.handed[p] = true
			return addr
		}
	}
	// No room below the ephemeral range (or every try was taken): let the kernel choose.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("no free loopback port: %v", err)
	}
	defer l.Close()
	ports.handed[l.Addr().(*net.TCPAddr).Port] = true
	return l.Addr().String()
}

// ephemeralStart is the first port of the kernel's ephemeral range: read on Linux, Linux's
// default elsewhere (macOS starts its range higher, at 49152).
func ephemeralStart() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return ephemeralLow
	}
	f := strings.Fields(string(b)) // "32768\t60999"
	if len(f) == 0 {
		return ephemeralLow
	}
	low, err := strconv.Atoi(f[0])
	if err != nil || low <= 0 || low > 65535 {
		return ephemeralLow
	}
	return low
}

// The ports freePort hands out are distinct, below the ephemeral range, and bindable.
func TestFreePort(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		addr := freePort(t)
		if seen[addr] {
			t.Fatalf("%s handed out twice", addr)
		}
		seen[addr] = true
		p, err := strconv.Atoi(portOf(addr))
		if err != nil {
			t.Fatalf("%q: %v", addr, err)
		}
		if high := ephemeralStart(); high-lowestPort >= minPortChoice && (p < lowestPort || p >= high) {
			t.Fatalf("port %d is outside [%d, %d)", p, lowestPort, high)
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("%s cannot be bound: %v", addr, err)
		}
		l.Close()
	}
}
