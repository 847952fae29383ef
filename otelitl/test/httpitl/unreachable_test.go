package httpitl_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelitl/itl/internal/refused"
)

// TestUnreachableErrorType: a generation whose request gets no response (an http.Client over
// NewTransport, against upstreams that fail each way over loopback) ends with an error.type that
// says why, from itlconv's fixed set: connection_refused, dns_error, tls_error, timeout, and
// connection_error for the rest; the span status description is the same word. The context's end
// stays cancelled or timeout, and a base transport's error that names its own type keeps it. The
// caller gets the transport's error unchanged. Before, the span held the error's Go type
// (*net.OpError for a refused connection and an unresolved name alike).
func TestUnreachableErrorType(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer plain.Close()
	plain.Config.ErrorLog = log.New(io.Discard, "", 0)
	untrusted := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0) // the client's refusal of its certificate
	untrusted.StartTLS()
	defer untrusted.Close()
	silent := listenRaw(t, func(net.Conn) {})                    // accepts, never answers
	closing := listenRaw(t, func(c net.Conn) { c.Close() })      // accepts, closes at once
	resetting := listenRaw(t, func(c net.Conn) { resetConn(c) }) // reads the request, resets

	// transport returns Go's transport with a resolver that resolves nothing without asking the
	// machine's DNS server.
	transport := func() *http.Transport {
		base := http.DefaultTransport.(*http.Transport).Clone()
		base.DialContext = (&net.Dialer{Resolver: &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
			return nil, errors.New("no DNS server in this test")
		}}}).DialContext
		return base
	}
	for _, tc := range []struct {
		name, url, want string
		client          func(*http.Client, *http.Transport) // adjusts the client or its transport
		base            func(*http.Transport) http.RoundTripper
		ctx             func() (context.Context, context.CancelFunc)
	}{
		{name: "closed port", url: "http://" + refused.Addr(t), want: "connection_refused"},
		{name: "name that does not resolve", url: "http://upstream.invalid", want: "dns_error"},
		{name: "TLS to a plain-text server", url: strings.Replace(plain.URL, "http://", "https://", 1), want: "tls_error"},
		{name: "certificate not trusted", url: untrusted.URL, want: "tls_error"},
		{name: "TLS handshake timeout", url: "https://" + silent, want: "timeout",
			client: func(_ *http.Client, tr *http.Transport) { tr.TLSHandshakeTimeout = 200 * time.Millisecond }},
		{name: "no answer, response header timeout", url: "http://" + silent, want: "timeout",
			client: func(_ *http.Client, tr *http.Transport) { tr.ResponseHeaderTimeout = 200 * time.Millisecond }},
		{name: "no answer, client timeout", url: "http://" + silent, want: "timeout",
			client: func(c *http.Client, _ *http.Transport) { c.Timeout = 200 * time.Millisecond }},
		{name: "no answer, context cancelled", url: "http://" + silent, want: "cancelled",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(200*time.Millisecond, cancel)
				return ctx, cancel
			}},
		{name: "connection reset", url: "http://" + resetting, want: "connection_error"},
		{name: "closed before answering", url: "http://" + closing, want: "connection_error"},
		{name: "base error that names its type", url: "http://" + refused.Addr(t), want: "my_error",
			base: func(*http.Transport) http.RoundTripper {
				return roundTripFunc(func(*http.Request) (*http.Response, error) {
					return nil, typedError("my_error")
				})
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := transport()
			defer tr.CloseIdleConnections()
			var base http.RoundTripper = tr
			if tc.base != nil {
				base = tc.base(tr)
			}
			c, exp := tracedOver(t, base)
			if tc.client != nil {
				tc.client(c, tr)
			}
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tc.ctx != nil {
				ctx, cancel = tc.ctx()
			}
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, tc.url+"/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true}`))
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.Do(req)
			if err == nil {
				res.Body.Close()
				t.Fatalf("the request got %s, want no response", res.Status)
			}
			// The caller's error is the transport's, not one of httpitl's making.
			var typed interface{ ErrorType() string }
			if errors.As(err, &typed) && tc.base == nil {
				t.Errorf("the caller's error carries an error type %q: %v", typed.ErrorType(), err)
			}
			s := waitSpans(t, exp, 1)[0]
			if got := attrsOf(s)["error.type"].AsString(); got != tc.want || s.Status.Description != tc.want {
				t.Errorf("error.type %q, status %q; want %q (the caller got %T: %v)", got, s.Status.Description, tc.want, errors.Unwrap(err), err)
			}
		})
	}
}

type typedError string

func (e typedError) Error() string     { return "typed: " + string(e) }
func (e typedError) ErrorType() string { return string(e) }

// listenRaw serves each connection to a new loopback listener with serve, on its own goroutine,
// until the test ends, and returns the listener's address.
func listenRaw(t *testing.T, serve func(net.Conn)) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go serve(c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// resetConn reads the start of a request and resets the connection (a close with SO_LINGER 0 sends
// an RST), so that the client's read fails with ECONNRESET.
func resetConn(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.Read(make([]byte, 4096))
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
