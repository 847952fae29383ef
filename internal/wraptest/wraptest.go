// Package wraptest helps the SDK wrappers' tests: a local SSE server that speaks a provider's wire
// format with real pauses between events, and an SDK tracer whose spans the test reads back.
package wraptest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
)

// Event is one server-sent event. An empty Name writes a data-only event, as OpenAI does.
type Event struct {
	Name string
	Data string
	// Content marks an event that carries generated content: the wrapper must count it as a chunk.
	Content bool
}

// Server is an httptest server that answers every request with a scripted SSE stream, or with an
// error status and body, and logs when each content event left it.
type Server struct {
	*httptest.Server
	Status int    // when not 0 and not 200, the answer is this status with Body
	Body   string // the error body
	Events []Event
	Gap    time.Duration // pause before each event

	mu   sync.Mutex
	sent []time.Time // when each content event was flushed
	reqs []*http.Request
}

// NewServer starts a server for t and closes it when the test ends.
func NewServer(t testing.TB, events []Event, gap time.Duration) *Server {
	s := &Server{Events: events, Gap: gap}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	s.mu.Unlock()
	if s.Status != 0 && s.Status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(s.Status)
		_, _ = w.Write([]byte(s.Body))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	fl.Flush()
	for _, ev := range s.Events {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(s.Gap):
		}
		// The time is taken before the write: no client can read the event before it. Taken after
		// the flush, as it once was, a server goroutine descheduled between the two could record
		// it milliseconds after the client had read the event (seen under -race on a busy machine).
		sent := time.Now()
		if ev.Name != "" {
			fmt.Fprintf(w, "event: %s\n", ev.Name)
		}
		fmt.Fprintf(w, "data: %s\n\n", ev.Data)
		fl.Flush()
		if ev.Content {
			s.mu.Lock()
			s.sent = append(s.sent, sent)
			s.mu.Unlock()
		}
	}
}

// Headers returns the headers of each request the server received.
func (s *Server) Headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	var hs []http.Header
	for _, r := range s.reqs {
		hs = append(hs, r.Header.Clone())
	}
	return hs
}

// Sent returns when the server began to write each content event: no client reads one earlier.
func (s *Server) Sent() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.sent...)
}

// HostPort returns the server's host and port, as server.address and server.port should say.
func (s *Server) HostPort() (string, int) {
	u, _ := url.Parse(s.URL)
	p, _ := strconv.Atoi(u.Port())
	return u.Hostname(), p
}

// Tracing returns an Instrumentation on an SDK tracer and the exporter holding its spans.
func Tracing(t testing.TB, opts ...otelitl.Option) (*otelitl.Instrumentation, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return otelitl.New(append([]otelitl.Option{otelitl.WithTracerProvider(tp)}, opts...)...), exp
}

// OneSpan returns the only span exported, failing the test otherwise, with its attributes by key.
func OneSpan(t testing.TB, exp *tracetest.InMemoryExporter) (tracetest.SpanStub, map[attribute.Key]attribute.Value) {
	t.Helper()
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("want 1 span, got %d", len(spans))
	}
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range spans[0].Attributes {
		m[kv.Key] = kv.Value
	}
	return spans[0], m
}

// CheckTimeline checks that the span records n chunks whose arrivals follow the server's send times:
// each arrival after its send, and every gap within slack of the server's gap.
func CheckTimeline(t testing.TB, span tracetest.SpanStub, attrs map[attribute.Key]attribute.Value, sent []time.Time, slack time.Duration) {
	t.Helper()
	n := int(attrs[itlconv.ChunkCountKey].AsInt64())
	if n != len(sent) {
		t.Fatalf("otelitl.chunk.count = %d, the server sent %d content events", n, len(sent))
	}
	var arrivals []time.Time
	for _, ev := range span.Events {
		if ev.Name == itlconv.ChunkEventName {
			arrivals = append(arrivals, ev.Time)
		}
	}
	if offs := attrs[itlconv.ChunkOffsetsKey].AsInt64Slice(); offs != nil {
		arrivals = arrivals[:0]
		for _, us := range offs {
			arrivals = append(arrivals, span.StartTime.Add(time.Duration(us)*time.Microsecond))
		}
	}
	if len(arrivals) != n {
		t.Fatalf("%d arrivals on the span, want %d", len(arrivals), n)
	}
	for i := range arrivals {
		if arrivals[i].Before(sent[i].Add(-time.Millisecond)) {
			t.Errorf("chunk %d arrived %v before the server sent it", i, sent[i].Sub(arrivals[i]))
		}
		if i > 0 {
			gotGap, sentGap := arrivals[i].Sub(arrivals[i-1]), sent[i].Sub(sent[i-1])
			if d := gotGap - sentGap; d > slack || d < -slack {
				t.Errorf("gap %d is %v on the span, %v at the server", i, gotGap, sentGap)
			}
		}
	}
}
