package httpitl_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelitl/itl/internal/wraptest"
)

// rawServer hands every connection's request to f after reading the request's headers and body,
// for answers no http.Handler writes: cut connections, resets, lying framing.
func rawServer(t testing.TB, f func(c net.Conn, rw *bufio.ReadWriter)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		c, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		f(c, rw)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// stallServer streams two chunks and then nothing, until the client goes away or the test ends.
func stallServer(t testing.TB, h2 bool) *httptest.Server {
	done := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: "+chunkA+"\n\n"+"data: "+chunkA+"\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	if h2 {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(func() { close(done); srv.Close() })
	return srv
}

// addrs are the loopback addresses in an error's text, which differ from one connection to another.
var addrs = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)

func baseFor(srv *httptest.Server) http.RoundTripper {
	if srv.TLS != nil {
		tr := srv.Client().Transport.(*http.Transport).Clone()
		tr.ForceAttemptHTTP2 = true
		return tr
	}
	return &http.Transport{}
}

// TestAttackStalledStream: an upstream that sends two chunks and then stalls forever. The caller
// blocked in Read gets out when its context is cancelled, its deadline passes, or its
// http.Client's Timeout passes, over HTTP/1.1 and HTTP/2, and the span ends at once, named
// cancelled or timeout, with the two chunks.
func TestAttackStalledStream(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		proto := map[bool]string{false: "HTTP/1.1", true: "HTTP/2.0"}[h2]
		srv := stallServer(t, h2)
		for _, tc := range []struct {
			name, want string
			setup      func(c *http.Client) (context.Context, context.CancelFunc)
		}{
			{"cancel", "cancelled", func(*http.Client) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(150*time.Millisecond, cancel)
				return ctx, cancel
			}},
			{"deadline", "timeout", func(*http.Client) (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 150*time.Millisecond)
			}},
			{"client timeout", "timeout", func(c *http.Client) (context.Context, context.CancelFunc) {
				c.Timeout = 300 * time.Millisecond // room for a TLS handshake under -race
				return context.WithCancel(context.Background())
			}},
		} {
			t.Run(proto+"/"+tc.name, func(t *testing.T) {
				// http.Client's Timeout and the deadline it gives the request's context are two
				// timers for one instant: which fires first varies, and each order is tried.
				for range map[bool]int{false: 1, true: 4}[strings.HasPrefix(tc.name, "client")] {
					c, exp := tracedOver(t, baseFor(srv))
					check := wraptest.NoLeak(t, c)
					ctx, cancel := tc.setup(c)
					start := time.Now()
					res, got, err := post(ctx, t, c, srv.URL+"/v1/chat/completions", chatReq)
					cancel()
					if err == nil {
						t.Fatal("the read of a stalled stream returned no error")
					}
					if d := time.Since(start); d > 2*time.Second {
						t.Errorf("the caller got out after %v", d)
					}
					if res == nil || res.Proto != proto || string(got) != "data: "+chunkA+"\n\ndata: "+chunkA+"\n\n" {
						t.Fatalf("response %v, body %q", res, got)
					}
					a := attrsOf(waitSpans(t, exp, 1)[0])
					if g := a["error.type"].AsString(); g != tc.want {
						t.Errorf("error.type %q, want %q (the caller's read failed with %v)", g, tc.want, err)
					}
					if g := a["otelitl.chunk.count"].AsInt64(); g != 2 {
						t.Errorf("%d chunks, want 2", g)
					}
					check()
				}
			})
		}
	}
}

// TestAttackNoHeaders: an upstream that never answers. The caller's http.Client Timeout, context
// deadline or cancellation ends the request, and the span is named timeout or cancelled.
func TestAttackNoHeaders(t *testing.T) {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the server sees the client go away
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	defer srv.Close()
	defer close(done)
	for _, tc := range []struct {
		name, want string
		setup      func(c *http.Client) (context.Context, context.CancelFunc)
	}{
		{"cancel", "cancelled", func(*http.Client) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			return ctx, cancel
		}},
		{"deadline", "timeout", func(*http.Client) (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 100*time.Millisecond)
		}},
		{"client timeout", "timeout", func(c *http.Client) (context.Context, context.CancelFunc) {
			c.Timeout = 60 * time.Millisecond
			return context.WithCancel(context.Background())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range map[bool]int{false: 1, true: 8}[strings.HasPrefix(tc.name, "client")] { // both timers' orders
				c, exp := tracedOver(t, &http.Transport{})
				check := wraptest.NoLeak(t, c)
				ctx, cancel := tc.setup(c)
				_, _, err := post(ctx, t, c, srv.URL+"/v1/chat/completions", chatReq)
				cancel()
				if err == nil {
					t.Fatal("no error")
				}
				a := attrsOf(waitSpans(t, exp, 1)[0])
				if g := a["error.type"].AsString(); g != tc.want {
					t.Errorf("error.type %q, want %q (the caller got %v)", g, tc.want, err)
				}
				check()
			}
		})
	}
}

// TestAttackCutOff: an upstream that stops in the middle of an event, however the body is framed
// and however the connection ends (EOF, TCP reset, HTTP/2 RST_STREAM), gives the caller the bytes
// and the error it gives without httpitl, and the span incomplete_stream with the chunks before
// the cut. A reset after the end marker leaves the complete reply without an error.
func TestAttackCutOff(t *testing.T) {
	const partial = "data: " + chunkA + "\n\ndata: {\"choices\":[{\"ind"
	resetConn := func(c net.Conn) {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // the close sends RST
		}
	}
	h2 := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, partial)
		w.(http.Flusher).Flush()
		time.Sleep(10 * time.Millisecond)
		panic(http.ErrAbortHandler) // HTTP/2: RST_STREAM
	}))
	h2.EnableHTTP2 = true
	h2.StartTLS()
	defer h2.Close()
	for _, tc := range []struct {
		name string
		srv  *httptest.Server
	}{
		{"content-length short", rawServer(t, func(c net.Conn, rw *bufio.ReadWriter) {
			_, _ = rw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 1000\r\n\r\n" + partial)
			_ = rw.Flush()
		})},
		{"close-delimited, clean close", rawServer(t, func(c net.Conn, rw *bufio.ReadWriter) {
			_, _ = rw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" + partial)
			_ = rw.Flush()
		})},
		{"chunked, reset", rawServer(t, func(c net.Conn, rw *bufio.ReadWriter) {
			_, _ = rw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
			_, _ = rw.WriteString(strconv.FormatInt(int64(len(partial)), 16) + "\r\n" + partial + "\r\n")
			_ = rw.Flush()
			time.Sleep(20 * time.Millisecond)
			resetConn(c)
		})},
		{"close-delimited, reset", rawServer(t, func(c net.Conn, rw *bufio.ReadWriter) {
			_, _ = rw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" + partial)
			_ = rw.Flush()
			time.Sleep(20 * time.Millisecond)
			resetConn(c)
		})},
		{"HTTP/2 stream reset", h2},
		{"reset after [DONE]", rawServer(t, func(c net.Conn, rw *bufio.ReadWriter) {
			_, _ = rw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" + partial + "\n\ndata: [DONE]\n\n")
			_ = rw.Flush()
			time.Sleep(20 * time.Millisecond)
			resetConn(c)
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain := &http.Client{Transport: baseFor(tc.srv)}
			traced, exp := tracedOver(t, baseFor(tc.srv))
			check := wraptest.NoLeak(t, plain, traced)
			_, want, werr := post(context.Background(), t, plain, tc.srv.URL+"/v1/chat/completions", chatReq)
			_, got, gerr := post(context.Background(), t, traced, tc.srv.URL+"/v1/chat/completions", chatReq)
			if string(got) != string(want) || !strings.HasPrefix(string(got), partial) || (gerr == nil) != (werr == nil) || (gerr != nil && addrs.ReplaceAllString(gerr.Error(), "") != addrs.ReplaceAllString(werr.Error(), "")) {
				t.Errorf("with httpitl the caller got %q, %v; without %q, %v", got, gerr, want, werr)
			}
			a := attrsOf(waitSpans(t, exp, 1)[0])
			wantType, chunks := "incomplete_stream", int64(1)
			if strings.HasSuffix(string(got), "[DONE]\n\n") {
				wantType = "" // the reply was complete: what comes after its end is no failure of it
			}
			if g := a["error.type"].AsString(); g != wantType {
				t.Errorf("error.type %q, want %q (the read failed with %T %v)", g, wantType, errors.Unwrap(gerr), gerr)
			}
			if g := a["otelitl.chunk.count"].AsInt64(); g != chunks {
				t.Errorf("%d chunks, want %d", g, chunks)
			}
			check()
		})
	}
}
