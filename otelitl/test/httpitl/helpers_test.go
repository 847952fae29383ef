package httpitl_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelitl/itl/examples/fakellm/engine"
	"github.com/otelitl/itl/examples/fakellm/server"
	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/itlconv"
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
	quietGC(t)
	cfg := engine.DefaultConfig()
	cfg.StepBase = 8 * time.Millisecond
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

// slack is how far a gap on the span may be from fakellm's: the span reads the time when the
// client's Read returns, fakellm when its step ends, a few scheduling delays apart on a busy
// machine.
const slack = 6 * time.Millisecond

func checkSpan(t *testing.T, f *fake, exp *tracetest.InMemoryExporter, want map[string]string) (tracetest.SpanStub, map[attribute.Key]attribute.Value) {
	t.Helper()
	span, attrs := wraptest.OneSpan(t, exp)
	checkGaps(t, span, attrs, f.lastArrivals(t), 0)
	return checkAttrs(t, span, attrs, want)
}

// checkGaps compares the span's gaps, from chunk from+1 on, with the server's: each within slack,
// except that a machine shared by parallel test binaries may stall one goroutine once or twice a
// stream: up to two gaps may be off by up to 25 ms (a late chunk makes its gap longer and the next
// one shorter by the same amount).
func checkGaps(t *testing.T, span tracetest.SpanStub, attrs map[attribute.Key]attribute.Value, sent []time.Time, from int) {
	t.Helper()
	got := chunkTimes(span)
	if n := attrs[itlconv.ChunkCountKey].AsInt64(); int(n) != len(sent) || len(got) != len(sent) {
		t.Fatalf("otelitl.chunk.count %d, %d chunk events; the server sent %d", n, len(got), len(sent))
	}
	var off []string
	for i := from + 1; i < len(got); i++ {
		g, s := got[i].Sub(got[i-1]), sent[i].Sub(sent[i-1])
		d := g - s
		if d > slack || d < -slack {
			off = append(off, fmt.Sprintf("gap %d is %v on the span, %v at the server", i, g, s))
			if d > 25*time.Millisecond || d < -25*time.Millisecond {
				off = append(off, "(beyond any scheduling stall)", "")
			}
		}
	}
	if len(off) > 2 {
		t.Errorf("the span's gaps do not follow the server's:\n%s", strings.Join(off, "\n"))
	}
}

// checkSpanAfterFirst is checkSpan for clients that do slow work between the response headers and
// their first Read (the Ollama client allocates an 8 MiB buffer there): fakellm sends the headers
// with the first chunk, so the first chunk reaches that caller late, and the chunks fakellm sent
// while it was busy reach it together. The gaps are compared from the first chunk after the first
// that reached the caller within slack of fakellm's sending it, and at least minCompared of them
// must be: these tests ask for 16 chunks, so a caller may start up to six chunks (about 50 ms) late.
func checkSpanAfterFirst(t *testing.T, f *fake, exp *tracetest.InMemoryExporter, want map[string]string) (tracetest.SpanStub, map[attribute.Key]attribute.Value) {
	t.Helper()
	span, attrs := wraptest.OneSpan(t, exp)
	sent := f.lastArrivals(t)
	got := chunkTimes(span)
	from := 1
	for from < min(len(got), len(sent)) && got[from].Sub(sent[from]) > slack {
		from++
	}
	checkGaps(t, span, attrs, sent, from) // first: it stops the test unless every chunk is on the span
	const minCompared = 8
	if compared := len(sent) - 1 - from; compared < minCompared {
		t.Errorf("the caller read chunks 1 to %d of %d late (the last %v after fakellm sent it): too few gaps left to compare (%d, want %d)",
			from-1, len(sent), got[from-1].Sub(sent[from-1]), compared, minCompared)
	}
	return checkAttrs(t, span, attrs, want)
}

// chunkTimes returns the times of the span's chunk events.
func chunkTimes(span tracetest.SpanStub) []time.Time {
	var got []time.Time
	for _, ev := range span.Events {
		if ev.Name == itlconv.ChunkEventName {
			got = append(got, ev.Time)
		}
	}
	return got
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

// noLeak fails the test when goroutines started during it are still running after the idle
// connections are closed.
func noLeak(t *testing.T, clients ...*http.Client) func() {
	before := runtime.NumGoroutine()
	return func() {
		t.Helper()
		for _, c := range clients {
			c.CloseIdleConnections()
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			n := runtime.NumGoroutine()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Fatalf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
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
