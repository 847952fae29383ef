package httpitl_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelitl/itl/examples/fakellm/engine"
	"github.com/otelitl/itl/examples/fakellm/server"
	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl/httpitl"
)

// fake is an in-process fakellm whose request ids the client side sees through a recording
// transport under httpitl.
type fake struct {
	*httptest.Server
	eng *engine.Engine

	mu  sync.Mutex
	ids []uint64
}

func newFake(t *testing.T, models ...string) *fake {
	t.Helper()
	return newFakeWith(t, func(*engine.Config) {}, models...)
}

// newFakeWith is newFake with its engine's configuration changed by set.
func newFakeWith(t *testing.T, set func(*engine.Config), models ...string) *fake {
	t.Helper()
	quietGC(t)
	cfg := engine.DefaultConfig()
	cfg.StepBase = 8 * time.Millisecond
	set(&cfg)
	eng, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := &fake{eng: eng}
	f.Server = httptest.NewServer(server.New(eng, models))
	t.Cleanup(func() { f.Close(); eng.Close() })
	return f
}

// RoundTrip records fakellm's request id of every answer.
func (f *fake) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		if id, perr := strconv.ParseUint(res.Header.Get(server.RequestIDHeader), 10, 64); perr == nil {
			f.mu.Lock()
			f.ids = append(f.ids, id)
			f.mu.Unlock()
		}
	}
	return res, err
}

// lastArrivals returns when fakellm flushed each chunk of the last request.
func (f *fake) lastArrivals(t *testing.T) []time.Time {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.ids) == 0 {
		t.Fatal("fakellm answered no generation")
	}
	return f.eng.Arrivals(f.ids[len(f.ids)-1])
}

// client returns an HTTP client whose transport is httpitl's over the recording transport, and the
// exporter holding its spans.
func (f *fake) client(t *testing.T) (*http.Client, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return &http.Client{Transport: httpitl.NewTransport(f, httpitl.WithTracerProvider(tp))}, exp
}

func checkSpan(t *testing.T, f *fake, exp *tracetest.InMemoryExporter, want map[string]string) (tracetest.SpanStub, map[attribute.Key]attribute.Value) {
	t.Helper()
	span, attrs := wraptest.OneSpan(t, exp)
	wraptest.CheckTimeline(t, span, attrs, f.lastArrivals(t), wraptest.Busy())
	return checkAttrs(t, span, attrs, want)
}

// lateStart is how late the Ollama clients may read the first chunks: they do slow work between
// the response headers and their first Read (the client allocates an 8 MiB buffer there), and
// fakellm sends the headers with the first chunk, so the first chunk reaches them late, and the
// chunks fakellm sent while they were busy reach them together. Under -race, with both cores busy,
// that start was seen up to 60 ms late. These tests ask for 24 chunks 8 ms apart: a start this
// late, the chunks sent meanwhile read together, leaves 14 of them on time.
const lateStart = 80 * time.Millisecond

// checkSpanAfterFirst is checkSpan for the clients that start late (lateStart).
func checkSpanAfterFirst(t *testing.T, f *fake, exp *tracetest.InMemoryExporter, want map[string]string) (tracetest.SpanStub, map[attribute.Key]attribute.Value) {
	t.Helper()
	span, attrs := wraptest.OneSpan(t, exp)
	l := wraptest.Busy()
	l.Start = lateStart
	wraptest.CheckTimeline(t, span, attrs, f.lastArrivals(t), l)
	return checkAttrs(t, span, attrs, want)
}

func checkAttrs(t *testing.T, span tracetest.SpanStub, attrs map[attribute.Key]attribute.Value, want map[string]string) (tracetest.SpanStub, map[attribute.Key]attribute.Value) {
	t.Helper()
	for k, v := range want {
		if got := attrs[attribute.Key(k)].String(); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	return span, attrs
}

func hostPort(raw string) (string, string) {
	u, _ := url.Parse(raw)
	return u.Hostname(), u.Port()
}

func attrKey(k string) attribute.Key { return attribute.Key(k) }

func oneSpan(t *testing.T, exp *tracetest.InMemoryExporter) (tracetest.SpanStub, map[attribute.Key]attribute.Value) {
	t.Helper()
	return wraptest.OneSpan(t, exp)
}

// quietGC turns the garbage collector off for the test. The client and fakellm share this process,
// and a collection (the Ollama client allocates an 8 MiB line buffer per request) stalls both for
// milliseconds, which shows as a gap at the client that fakellm never made.
func quietGC(t *testing.T) {
	runtime.GC()
	old := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(old) })
}
