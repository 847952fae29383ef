package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl/httpitl"
)

// The adversarial tests of the proxy: hostile clients over real loopback connections.

const attackChunk = `data: {"choices":[{"index":0,"delta":{"content":"a"}}]}` + "\n\n"

// attackStack is an upstream serving h and the proxy in front of it, with the proxy's own server
// settings (newServer), recording spans in memory.
type attackStack struct {
	up, proxy *httptest.Server
	exp       *tracetest.InMemoryExporter
	rt        *httpitl.Transport
}

func newAttackStack(t *testing.T, h http.HandlerFunc) *attackStack {
	s := &attackStack{exp: tracetest.NewInMemoryExporter()}
	s.up = httptest.NewServer(h)
	u, _ := url.Parse(s.up.URL)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(s.exp))
	s.rt = httpitl.NewTransport(&http.Transport{}, httpitl.WithTracerProvider(tp))
	logger := log.New(io.Discard, "", 0)
	s.proxy = httptest.NewUnstartedServer(nil)
	s.proxy.Config = newServer("", newHandler(config{upstream: map[string]*url.URL{"openai": u}}, s.rt, logger), logger)
	s.proxy.Start()
	t.Cleanup(func() {
		s.proxy.Close()
		s.up.Close()
		s.rt.CloseIdleConnections()
		_ = tp.Shutdown(context.Background())
	})
	return s
}

func (s *attackStack) waitSpans(t *testing.T, n int) tracetest.SpanStubs {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(s.exp.GetSpans()) < n && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	spans := s.exp.GetSpans()
	if len(spans) != n {
		t.Fatalf("%d spans, want %d", len(spans), n)
	}
	return spans
}

func spanAttr(s tracetest.SpanStub, k string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == k {
			return kv.Value.String()
		}
	}
	return ""
}

// endlessUpstream streams a chunk every 2 ms until the client goes away, and counts the streams
// that began and those that saw their client go.
func endlessUpstream(seen, gone *atomic.Int32) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for {
			if _, err := io.WriteString(w, attackChunk); err != nil {
				gone.Add(1)
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				gone.Add(1)
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}
}

// TestAttackProxyClientVanishes: clients that drop their connection mid-stream, before the
// upstream answered, and in the middle of sending the request body. Every generation that
// started ends cancelled, the upstream sees the client go, and no goroutine is left.
func TestAttackProxyClientVanishes(t *testing.T) {
	var seen, gone atomic.Int32
	s := newAttackStack(t, endlessUpstream(&seen, &gone))
	noLeak := wraptest.NoLeak(t, s.rt)
	const n = 20
	for i := range n {
		c, err := net.Dial("tcp", s.proxy.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		body := `{"model":"m","stream":true}`
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		br := bufio.NewReader(c)
		if i%2 == 0 {
			// mid-stream: read the headers and some events, then vanish
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(res.Body, make([]byte, 3*len(attackChunk))); err != nil {
				t.Fatal(err)
			}
		}
		if tc, ok := c.(*net.TCPConn); ok && i%4 == 0 {
			_ = tc.SetLinger(0) // a reset rather than a FIN
		}
		c.Close()
	}
	spans := s.waitSpans(t, n)
	for _, sp := range spans {
		if e := spanAttr(sp, "error.type"); e != "cancelled" {
			t.Errorf("error.type %q, want cancelled", e)
		}
	}
	// A client gone before the proxy asked the upstream never reaches it; every stream that
	// began at the upstream sees its client go.
	deadline := time.Now().Add(5 * time.Second)
	for gone.Load() < seen.Load() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if g, s := gone.Load(), seen.Load(); g != s || s < n/2 {
		t.Errorf("the upstream saw %d of the %d streams it began go (%d clients)", g, s, n)
	}
	noLeak()
}

// TestAttackProxyHalfSentBody: a client that sends its headers and half its body, then stalls and
// vanishes: the proxy holds nothing once it is gone.
func TestAttackProxyHalfSentBody(t *testing.T) {
	var seen, gone atomic.Int32
	s := newAttackStack(t, endlessUpstream(&seen, &gone))
	noLeak := wraptest.NoLeak(t, s.rt)
	for _, size := range []int{100, 3 << 20} {
		c, err := net.Dial("tcp", s.proxy.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n{\"model\":\"m\",\"x\":\"%s", 2*size, strings.Repeat("x", size))
		time.Sleep(50 * time.Millisecond)
		c.Close()
	}
	noLeak()
	for _, sp := range s.exp.GetSpans() {
		if e := spanAttr(sp, "error.type"); e == "" {
			t.Errorf("a generation whose request never arrived whole has no error.type")
		}
	}
}

// TestAttackProxySlowloris: 200 connections that trickle their headers do not keep a streaming
// request from being served, and leave nothing behind once closed.
func TestAttackProxySlowloris(t *testing.T) {
	s := newAttackStack(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, attackChunk+"data: [DONE]\n\n")
	})
	noLeak := wraptest.NoLeak(t, s.rt, http.DefaultTransport.(*http.Transport))
	var conns []net.Conn
	for range 200 {
		c, err := net.Dial("tcp", s.proxy.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Slow: ")
		conns = append(conns, c)
	}
	start := time.Now()
	res, err := http.Post(s.proxy.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != attackChunk+"data: [DONE]\n\n" || time.Since(start) > time.Second {
		t.Errorf("with 200 slow clients, the stream took %v: %q", time.Since(start), b)
	}
	for _, c := range conns {
		_, _ = io.WriteString(c, "a")
		c.Close()
	}
	http.DefaultClient.CloseIdleConnections()
	noLeak()
	if sp := s.waitSpans(t, 1)[0]; spanAttr(sp, "error.type") != "" || spanAttr(sp, "otelitl.chunk.count") != "1" {
		t.Errorf("span %v", sp.Attributes)
	}
}

// TestAttackProxyHugeHeaders: headers past the proxy's 1 MiB are refused with 431 before any
// upstream is asked, and the proxy goes on serving.
func TestAttackProxyHugeHeaders(t *testing.T) {
	var calls atomic.Int32
	s := newAttackStack(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	})
	req, _ := http.NewRequest(http.MethodPost, s.proxy.URL+"/v1/chat/completions", strings.NewReader(`{}`))
	req.Header.Set("X-Huge", strings.Repeat("h", 2<<20))
	res, err := http.DefaultClient.Do(req)
	if err == nil {
		res.Body.Close()
		if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("status %d, want 431", res.StatusCode)
		}
	}
	if calls.Load() != 0 || len(s.exp.GetSpans()) != 0 {
		t.Errorf("the upstream was called %d times, %d spans", calls.Load(), len(s.exp.GetSpans()))
	}
	res, err = http.Post(s.proxy.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("after the huge headers: %v %v", res, err)
	}
	res.Body.Close()
}

// TestAttackProxyLargeBody: a 64 MiB request body (past every bound of httpitl) reaches the
// upstream byte for byte through the proxy, with what the proxy allocates bounded.
func TestAttackProxyLargeBody(t *testing.T) {
	sums := make(chan [32]byte, 1)
	s := newAttackStack(t, func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		_, _ = io.CopyBuffer(h, r.Body, make([]byte, 64<<10))
		var sum [32]byte
		copy(sum[:], h.Sum(nil))
		sums <- sum
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, attackChunk+"data: [DONE]\n\n")
	})
	size := 64 << 20
	head := `{"model":"m","stream":true,"messages":[{"role":"user","content":"`
	fill := []byte(strings.Repeat("z", 64<<10))
	h := sha256.New()
	h.Write([]byte(head))
	for i := 0; i < size; i += len(fill) {
		h.Write(fill)
	}
	h.Write([]byte(`"}]}`))
	var want [32]byte
	copy(want[:], h.Sum(nil))
	pr, pw := io.Pipe()
	go func() {
		_, _ = io.WriteString(pw, head)
		for i := 0; i < size; i += len(fill) {
			_, _ = pw.Write(fill)
		}
		_, _ = io.WriteString(pw, `"}]}`)
		pw.Close()
	}()
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	res, err := http.Post(s.proxy.URL+"/v1/chat/completions", "application/json", pr)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	runtime.ReadMemStats(&b)
	if string(got) != attackChunk+"data: [DONE]\n\n" || <-sums != want {
		t.Fatalf("the upstream got another body, or the client another stream: %q", got)
	}
	if alloc := b.TotalAlloc - a.TotalAlloc; alloc > 24<<20 {
		t.Errorf("%d MiB allocated for a %d MiB body", alloc>>20, size>>20)
	} else {
		t.Logf("%d KiB allocated for a %d MiB body", alloc>>10, size>>20)
	}
	if sp := s.waitSpans(t, 1)[0]; spanAttr(sp, "gen_ai.request.model") != "m" || spanAttr(sp, "otelitl.chunk.count") != "1" {
		t.Errorf("span %v", sp.Attributes)
	}
}
