package httpitl_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelitl/itl/otelitl/httpitl"
)

// The helpers of the adversarial tests (attack_*_test.go): hostile upstreams over real loopback
// HTTP, and the SDK's in-memory exporter.

// tracedOver returns a client whose transport is httpitl's over base, and its exporter.
func tracedOver(t testing.TB, base http.RoundTripper, opts ...httpitl.Option) (*http.Client, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return &http.Client{Transport: httpitl.NewTransport(base, append([]httpitl.Option{httpitl.WithTracerProvider(tp)}, opts...)...)}, exp
}

// waitSpans waits up to 5 s for n spans and returns them.
func waitSpans(t testing.TB, exp *tracetest.InMemoryExporter, n int) tracetest.SpanStubs {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(exp.GetSpans()) < n && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	s := exp.GetSpans()
	if len(s) != n {
		t.Fatalf("%d spans, want %d", len(s), n)
	}
	return s
}

func attrsOf(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// serveRaw answers every request with contentType and the pieces, each written and flushed.
func serveRaw(t testing.TB, contentType string, pieces ...string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		for _, p := range pieces {
			_, _ = io.WriteString(w, p)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// post sends a chat (or other) request and reads the whole body; it returns the body and the
// read error.
func post(ctx context.Context, t testing.TB, c *http.Client, url, body string) (*http.Response, []byte, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res, b, err
}

// cutRT makes the response body's reads end at the given offsets, so that the bytes reach httpitl
// split exactly there (and maybe elsewhere too).
type cutRT struct {
	base http.RoundTripper
	cuts []int // ascending offsets; every=1 cuts at every byte
	each bool  // cut after every byte
}

func (c cutRT) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := c.base.RoundTrip(r)
	if err == nil {
		res.Body = &cutBody{rc: res.Body, cuts: c.cuts, each: c.each}
	}
	return res, err
}

type cutBody struct {
	rc   io.ReadCloser
	cuts []int
	each bool
	pos  int
}

func (b *cutBody) Read(p []byte) (int, error) {
	for len(b.cuts) > 0 && b.cuts[0] <= b.pos {
		b.cuts = b.cuts[1:]
	}
	if b.each && len(p) > 1 {
		p = p[:1]
	}
	if len(b.cuts) > 0 && len(p) > b.cuts[0]-b.pos {
		p = p[:b.cuts[0]-b.pos]
	}
	n, err := b.rc.Read(p)
	b.pos += n
	return n, err
}

func (b *cutBody) Close() error { return b.rc.Close() }

// checkBounded fails when a string attribute, an event attribute or the span's name or status is
// longer than max bytes or not valid UTF-8.
func checkBounded(t testing.TB, s tracetest.SpanStub, max int) {
	t.Helper()
	check := func(what, v string) {
		if len(v) > max {
			t.Errorf("%s is %d bytes, past the bound of %d", what, len(v), max)
		}
		if !utf8.ValidString(v) {
			t.Errorf("%s is not valid UTF-8: %q", what, v[:min(len(v), 80)])
		}
	}
	check("the span name", s.Name)
	check("the status description", s.Status.Description)
	for _, kv := range s.Attributes {
		switch kv.Value.Type() {
		case attribute.STRING:
			check(string(kv.Key), kv.Value.AsString())
		case attribute.STRINGSLICE:
			for _, v := range kv.Value.AsStringSlice() {
				check(string(kv.Key), v)
			}
		}
	}
	for _, ev := range s.Events {
		for _, kv := range ev.Attributes {
			check(ev.Name+"/"+string(kv.Key), kv.Value.String())
		}
	}
}

// allocated runs f and returns how many bytes the process allocated meanwhile.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}
