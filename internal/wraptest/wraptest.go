// Package wraptest helps the SDK wrappers' tests: a local SSE server that speaks a provider's wire
// format with real pauses between events, and an SDK tracer whose spans the test reads back.
package wraptest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/itlconv/timeline"
	"github.com/otelitl/itl/otelitl"
)

// Event is one server-sent event. An empty Name writes a data-only event, as OpenAI does.
type Event struct {
	Name string
	Data string
	// Content marks an event that carries generated content: the wrapper must count it as a chunk.
	Content bool
}

// ChatErrorEvent is an error a server sends inside an OpenAI Chat Completions stream, as a
// data-only event, with the error.type httpitl records for it.
type ChatErrorEvent struct {
	Name string
	Data string
	Want string // httpitl's error.type
}

// ChatErrorEvents are the error events every instrumentation of a Chat Completions stream must name
// as httpitl does: the first non-empty of the error's code, type and status when it is a code (1 to
// 64 letters, digits, '_', '-' or '.'), else "stream_error". The message is never a name.
func ChatErrorEvents() []ChatErrorEvent {
	free := "Invalid prompt: " + strings.Repeat("the prompt you sent ", 3)
	return []ChatErrorEvent{
		{"code and type", `{"error":{"message":"The server is overloaded","type":"server_error","param":null,"code":"overloaded"}}`, "overloaded"},
		// OpenAI's own error events mid-stream come with "code": null.
		{"null code, a type", `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`, "server_error"},
		{"only a type", `{"error":{"message":"m","type":"server_error"}}`, "server_error"},
		{"numeric code", `{"error":{"message":"m","type":"server_error","code":429}}`, "429"},
		{"neither code nor type", `{"error":{"message":"The server had an error"}}`, itlconv.ErrorTypeStreamError},
		// A code that is no code does not fall back to the type: the first non-empty names the error.
		{"huge code", `{"error":{"message":"m","type":"server_error","code":"` + strings.Repeat("x", 4096) + `"}}`, itlconv.ErrorTypeStreamError},
		{"code of 65 bytes", `{"error":{"message":"m","type":"server_error","code":"` + strings.Repeat("x", 65) + `"}}`, itlconv.ErrorTypeStreamError},
		{"free-text code", `{"error":{"message":"m","type":"server_error","code":"` + free + `"}}`, itlconv.ErrorTypeStreamError},
		{"free-text type", `{"error":{"message":"m","type":"` + free + `"}}`, itlconv.ErrorTypeStreamError},
		{"string error", `{"error":"The server is overloaded"}`, itlconv.ErrorTypeStreamError},
		{"array error", `{"error":["server_error"]}`, itlconv.ErrorTypeStreamError},
	}
}

// Server is an httptest server that answers every request with a scripted SSE stream, or with an
// error status and body, and logs when each content event left it.
type Server struct {
	*httptest.Server
	Status int    // when not 0 and not 200, the answer is this status with Body
	Body   string // the error body
	Events []Event
	Gap    time.Duration // pause before each event
	Cut    int           // when not 0, the connection is dropped after this many events
	// Hold, when not 0, sends nothing after this many events until the client goes away: a test
	// of a client that stops early then knows the rest was never sent, whatever the machine's load.
	Hold int

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

// NewTLSServer is NewServer over TLS, for a client that sends its key over HTTPS only (openai-go's
// azure package): its Client() trusts the server's certificate, issued to example.com and
// 127.0.0.1.
func NewTLSServer(t testing.TB, events []Event, gap time.Duration) *Server {
	s := &Server{Events: events, Gap: gap}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
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
	for i, ev := range s.Events {
		if s.Cut > 0 && i == s.Cut {
			panic(http.ErrAbortHandler) // the connection dropped mid-reply, the body cut short
		}
		if s.Hold > 0 && i == s.Hold {
			<-r.Context().Done()
			return
		}
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

// URLs returns the URL of each request the server received: its path and query.
func (s *Server) URLs() []*url.URL {
	s.mu.Lock()
	defer s.mu.Unlock()
	var us []*url.URL
	for _, r := range s.reqs {
		u := *r.URL
		us = append(us, &u)
	}
	return us
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

// WaitSpan waits up to a second for exp to hold a span, and reports whether it does: a generation
// that a context's end ends does so on the context's goroutine, which may still be exporting the
// span when the stream's own end returns.
func WaitSpan(exp *tracetest.InMemoryExporter) bool {
	deadline := time.Now().Add(time.Second)
	for len(exp.GetSpans()) == 0 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	return len(exp.GetSpans()) > 0
}

// CheckCancelAbandoned checks what an application that cancels its call's context and stops
// reading, closing nothing, leaves: one span, ended within a second of cancel with error.type
// "cancelled".
func CheckCancelAbandoned(t testing.TB, exp *tracetest.InMemoryExporter, cancel context.CancelFunc) {
	t.Helper()
	cancel()
	if !WaitSpan(exp) {
		t.Fatalf("no span a second after the context was cancelled: the generation never ended")
	}
	_, a := OneSpan(t, exp)
	if got := a["error.type"].AsString(); got != itlconv.ErrorTypeCancelled {
		t.Errorf("error.type %q, want %s", got, itlconv.ErrorTypeCancelled)
	}
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

// CheckTimeline checks that the span records as many chunks as the server sent content events,
// each seen within l of its sending (CheckLateness).
func CheckTimeline(t testing.TB, span tracetest.SpanStub, attrs map[attribute.Key]attribute.Value, sent []time.Time, l Lateness) {
	t.Helper()
	if n := int(attrs[itlconv.ChunkCountKey].AsInt64()); n != len(sent) {
		t.Fatalf("otelitl.chunk.count = %d, the server sent %d content events", n, len(sent))
	}
	CheckLateness(t, Arrivals(span, attrs), sent, l)
	CheckFigures(t, span, attrs)
}

// CheckFigures checks that the figures otelitl wrote on span (itlconv.FigureKeys) are, bit for bit,
// those the collector's code computes from the timeline the span carries: the itl processor keeps
// them instead of computing them again.
func CheckFigures(t testing.TB, span tracetest.SpanStub, attrs map[attribute.Key]attribute.Value) {
	t.Helper()
	arrivals := Arrivals(span, attrs)
	if len(arrivals) == 0 {
		for _, k := range itlconv.FigureKeys {
			if v, ok := attrs[k]; ok {
				t.Errorf("%s = %s on a span without a timeline", k, v.String())
			}
		}
		return
	}
	tl := timeline.Timeline{Offsets: make([]int64, len(arrivals))}
	for i, a := range arrivals {
		tl.Offsets[i] = int64(a.Sub(span.StartTime))
	}
	if toks := attrs[itlconv.ChunkTokensKey].AsInt64Slice(); toks != nil {
		tl.Tokens = toks
	} else {
		for _, ev := range span.Events {
			if ev.Name != itlconv.ChunkEventName {
				continue
			}
			tok := int64(1)
			for _, kv := range ev.Attributes {
				if kv.Key == itlconv.ChunkTokensKey {
					tok = kv.Value.AsInt64()
				}
			}
			tl.Tokens = append(tl.Tokens, tok)
		}
	}
	_, dropped := attrs[itlconv.ChunkDroppedKey]
	in := timeline.Input{Complete: !dropped && attrs[itlconv.ChunkCountKey].AsInt64() == int64(len(arrivals)),
		StallThreshold: itlconv.DefaultStallThreshold, Percentiles: true}
	if v, ok := attrs[semconv.GenAIUsageOutputTokensKey]; ok {
		in.UsageOutputTokens, in.HasUsage = v.AsInt64(), true
	}
	f, _ := timeline.Compute(tl, in, nil)
	want := map[attribute.Key]attribute.Value{itlconv.StallsKey: attribute.IntValue(f.Stalls)}
	if f.HasTPOT {
		want[itlconv.TPOTKey] = attribute.Float64Value(f.TPOT)
	}
	if f.HasGaps {
		want[itlconv.GapP50Key], want[itlconv.GapP90Key] = attribute.Float64Value(f.P50), attribute.Float64Value(f.P90)
		want[itlconv.GapP99Key], want[itlconv.GapMaxKey] = attribute.Float64Value(f.P99), attribute.Float64Value(f.MaxGap)
	}
	for _, k := range itlconv.FigureKeys {
		w, wok := want[k]
		g, gok := attrs[k]
		if wok != gok || g != w {
			t.Errorf("%s = %s (%v), the timeline gives %s (%v)", k, g.String(), gok, w.String(), wok)
		}
	}
}

// Arrivals returns when the span says each chunk arrived: its chunk events' times, or the start
// plus each offset of its compact timeline.
func Arrivals(span tracetest.SpanStub, attrs map[attribute.Key]attribute.Value) []time.Time {
	var arrivals []time.Time
	if offs := attrs[itlconv.ChunkOffsetsKey].AsInt64Slice(); offs != nil {
		for _, us := range offs {
			arrivals = append(arrivals, span.StartTime.Add(time.Duration(us)*time.Microsecond))
		}
		return arrivals
	}
	for _, ev := range span.Events {
		if ev.Name == itlconv.ChunkEventName {
			arrivals = append(arrivals, ev.Time)
		}
	}
	return arrivals
}

// Lateness bounds how late a client may see the chunks of a stream, against the times the server
// sent them, on a machine shared by parallel test binaries under -race.
type Lateness struct {
	// Slack is how late any chunk may be seen: a few scheduling delays between the server's write
	// and the moment the client's instrumentation reads the clock.
	Slack time.Duration
	// Stall is how late the chunks of one stall may be seen. A goroutine descheduled once sees
	// the chunks sent meanwhile together when it runs again: one run of consecutive chunks may be
	// later than Slack, up to Stall. A second run, or a chunk later than Stall, fails.
	Stall time.Duration
	// Start, when not 0, also allows a late start: a run of late chunks from the first, up to
	// Start late, for a client that does slow work between the response headers and its first
	// read (a server that sends the headers with the first chunk then has chunks waiting for it).
	Start time.Duration
}

// Busy is the Lateness every streaming test here allows: each chunk seen within 6 ms of its
// sending, and one stall of up to 25 ms. Seen on the 2-core machines these tests run on, with
// parallel test binaries under -race: clients descheduled for up to about 20 ms, once a stream.
func Busy() Lateness { return Lateness{Slack: 6 * time.Millisecond, Stall: 25 * time.Millisecond} }

// CheckLateness checks that chunk i was seen at got[i], from 1 ms before sent[i] (the two clocks
// are read a few instructions apart, on either side of a write) to within l after it. Within l, the
// gaps and the time to first chunk that the client saw follow the server's: a client that falls
// behind by more than Stall, or is late in two runs of chunks, fails.
func CheckLateness(t testing.TB, got, sent []time.Time, l Lateness) {
	t.Helper()
	if len(got) != len(sent) {
		t.Fatalf("%d chunks seen, the server sent %d", len(got), len(sent))
	}
	var late []string
	runs, inRun, starting := 0, false, l.Start > 0
	for i := range sent {
		by := got[i].Sub(sent[i])
		if by < -time.Millisecond {
			t.Errorf("chunk %d seen %v before the server sent it", i, -by)
		}
		if by <= l.Slack {
			inRun, starting = false, false
			continue
		}
		late = append(late, fmt.Sprintf("chunk %d seen %v late", i, by))
		if !inRun && !starting {
			runs++
		}
		inRun = true
		switch {
		case starting && by > l.Start:
			t.Errorf("chunk %d seen %v late, a start later than %v", i, by, l.Start)
		case !starting && by > l.Stall:
			t.Errorf("chunk %d seen %v after the server sent it, beyond any scheduling stall (%v)", i, by, l.Stall)
		}
	}
	if runs > 1 {
		t.Errorf("%d runs of late chunks, at most one stall allowed:\n%s", runs, strings.Join(late, "\n"))
	}
}

// NoLeak returns a check to run at a test's end: it fails t when goroutines started since NoLeak
// are still running 5 s later. It closes the idle connections of idle on every look, since an
// HTTP/2 connection whose stream was reset is idle only once the reset is processed.
func NoLeak(t testing.TB, idle ...interface{ CloseIdleConnections() }) func() {
	before := runtime.NumGoroutine()
	return func() {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			for _, c := range idle {
				c.CloseIdleConnections()
			}
			n := runtime.NumGoroutine()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Fatalf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
