package httpitl_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelitl/itl/examples/fakellm/engine"
	"github.com/otelitl/itl/examples/fakellm/server"
	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl/httpitl"
)

func serverTracing(t *testing.T) (trace.TracerProvider, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, exp
}

// TestHandlerFakellm: fakellm behind the middleware records a SERVER span per generation whose
// gaps follow the engine's, for every protocol.
func TestHandlerFakellm(t *testing.T) {
	quietGC(t)
	eng, err := engine.New(engine.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	tp, exp := serverTracing(t)
	srv := httptest.NewServer(httpitl.NewHandler(server.New(eng, []string{"m"}), httpitl.WithTracerProvider(tp)))
	defer srv.Close()
	// One request first, unchecked: the first uses of the code paths in this process (page faults,
	// type caches) can stall it by milliseconds.
	if res, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true,"max_tokens":3,"messages":[{"role":"user","content":"hi"}]}`)); err == nil {
		_, _ = io.ReadAll(res.Body)
		res.Body.Close()
	}
	time.Sleep(10 * time.Millisecond)
	for _, tc := range []struct{ path, body, provider string }{
		{"/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"max_tokens":6,"messages":[{"role":"user","content":"hi"}]}`, "openai"},
		{"/v1/responses", `{"model":"m","stream":true,"max_output_tokens":6,"input":"hi"}`, "openai"},
		{"/v1/messages", `{"model":"m","stream":true,"max_tokens":6,"messages":[{"role":"user","content":"hi"}]}`, "anthropic"},
		{"/v1beta/models/m:streamGenerateContent?alt=sse", `{"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":6}}`, "gcp.gemini"},
		{"/v1beta/models/m:streamGenerateContent", `{"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":6}}`, "gcp.gemini"},
		{"/api/chat", `{"model":"m","messages":[{"role":"user","content":"hi"}],"options":{"num_predict":6}}`, "ollama"},
		{"/api/generate", `{"model":"m","prompt":"hi","options":{"num_predict":6}}`, "ollama"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			exp.Reset()
			res, err := http.Post(srv.URL+tc.path, "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.ReadAll(res.Body)
			res.Body.Close()
			id := res.Header.Get(server.RequestIDHeader)
			deadline := time.Now().Add(2 * time.Second)
			for len(exp.GetSpans()) == 0 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond) // the span ends after the handler returns
			}
			span, attrs := wraptest.OneSpan(t, exp)
			if span.SpanKind != trace.SpanKindServer {
				t.Errorf("span kind %v, want server", span.SpanKind)
			}
			var n uint64
			for _, c := range id {
				n = n*10 + uint64(c-'0')
			}
			wraptest.CheckTimeline(t, span, attrs, eng.Arrivals(n), wraptest.Busy())
			for k, want := range map[string]string{"gen_ai.provider.name": tc.provider, "gen_ai.usage.output_tokens": "6", "otelitl.chunk.count": "6", "error.type": ""} {
				if got := attrs[attrKey(k)].String(); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
		})
	}
}

// TestHandlerFlushAndController: chunks are timed at the Flush that sends them, whether the handler
// flushes through http.Flusher or http.ResponseController; unflushed chunks at the end. The handler
// notes the clock on either side of each flush and before it returns: each chunk must be timed
// within its flush's bracket, which a pause after the write keeps apart from the write itself.
func TestHandlerFlushAndController(t *testing.T) {
	tp, exp := serverTracing(t)
	const pause = 40 * time.Millisecond
	// marks: the first flush's bracket, the second's, then the handler's return.
	marks := make(chan [5]time.Time, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m [5]time.Time
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		if err := rc.SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
			t.Errorf("ResponseController does not reach the server's writer: %v", err)
		}
		_, _ = io.WriteString(w, chatChunk("a"))
		_, _ = io.WriteString(w, chatChunk("b"))
		time.Sleep(pause) // a and b are not sent yet
		m[0] = time.Now()
		w.(http.Flusher).Flush()
		m[1] = time.Now()
		time.Sleep(pause)
		_, _ = io.WriteString(w, chatChunk("c"))
		m[2] = time.Now()
		if err := rc.Flush(); err != nil {
			t.Errorf("ResponseController.Flush: %v", err)
		}
		m[3] = time.Now()
		time.Sleep(pause)
		_, _ = io.WriteString(w, chatChunk("d")+"data: [DONE]\n\n") // flushed when the handler returns
		time.Sleep(pause)
		m[4] = time.Now()
		marks <- m
	})
	srv := httptest.NewServer(httpitl.NewHandler(h, httpitl.WithTracerProvider(tp)))
	defer srv.Close()
	res, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"x","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(res.Body)
	res.Body.Close()
	m := <-marks
	span, attrs := wraptest.OneSpan(t, exp)
	var at []time.Time
	for _, ev := range span.Events {
		at = append(at, ev.Time)
	}
	if len(at) != 4 || attrs[attrKey("error.type")].String() != "" {
		t.Fatalf("%d chunks, error.type %q", len(at), attrs[attrKey("error.type")].String())
	}
	// Chunk times are whole microseconds after the start, truncated, read off the cycle counter:
	// 5 µs covers that, as in TestChunkTimesOnTheMonotonicClock.
	const slack = 5 * time.Microsecond
	within := func(x, from, to time.Time) bool { return !x.Before(from.Add(-slack)) && !x.After(to.Add(slack)) }
	rel := func(x time.Time) time.Duration { return x.Sub(span.StartTime) }
	if !within(at[0], m[0], m[1]) || !within(at[1], m[0], m[1]) || !within(at[2], m[2], m[3]) || !within(at[3], m[4], span.EndTime) {
		t.Errorf("chunks at %v, %v, %v, %v; want a and b within the first flush (%v to %v), c within the second (%v to %v), d at the end (%v to %v)",
			rel(at[0]), rel(at[1]), rel(at[2]), rel(at[3]), rel(m[0]), rel(m[1]), rel(m[2]), rel(m[3]), rel(m[4]), rel(span.EndTime))
	}
}

// TestHandlerClientGone: a client that goes away mid-stream ends the SERVER span "cancelled"; an
// error status ends it with the code.
func TestHandlerClientGone(t *testing.T) {
	tp, exp := serverTracing(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/v2/") {
			http.Error(w, `{"error":{"type":"overloaded"}}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for {
			if _, err := io.WriteString(w, chatChunk("a")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	srv := httptest.NewServer(httpitl.NewHandler(h, httpitl.WithTracerProvider(tp)))
	defer srv.Close()
	// The client goes away once the stream has begun: after its first chunk, whatever the time.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(`{"model":"x","stream":true}`))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(res.Body, make([]byte, len(chatChunk("a")))); err != nil {
		t.Fatalf("the first chunk: %v", err)
	}
	cancel()
	_, _ = io.ReadAll(res.Body)
	res.Body.Close()
	res, err = http.Post(srv.URL+"/v2/chat/completions", "application/json", strings.NewReader(`{}`))
	if err == nil {
		res.Body.Close()
	}
	deadline := time.Now().Add(2 * time.Second)
	for len(exp.GetSpans()) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	got := map[string]bool{}
	for _, s := range exp.GetSpans() {
		for _, kv := range s.Attributes {
			if kv.Key == "error.type" {
				got[kv.Value.String()] = true
			}
		}
	}
	if !got["cancelled"] || !got["503"] {
		t.Errorf("error types %v, want cancelled and 503", got)
	}
}

// TestHandlerLongPrompt: a request whose model and stream members come after a prompt longer than
// the part read before the handler runs (WithMaxRequestBytes) gets them from the rest, as the
// handler reads it: the span's name, its model and its stream flag.
func TestHandlerLongPrompt(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.PrefillPerTok = 0
	eng, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	tp, exp := serverTracing(t)
	srv := httptest.NewServer(httpitl.NewHandler(server.New(eng, []string{"m"}), httpitl.WithTracerProvider(tp)))
	defer srv.Close()
	body := `{"messages":[{"role":"user","content":"` + strings.Repeat("a \\\"quoted\\\" {prompt}", 1<<17) + `"}],"model":"m","stream":true,"max_tokens":3}`
	if len(body) <= httpitl.DefaultMaxRequestBytes {
		t.Fatalf("a body of %d bytes does not pass the bound", len(body))
	}
	res, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", struct{ io.Reader }{strings.NewReader(body)})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(res.Body)
	res.Body.Close()
	deadline := time.Now().Add(2 * time.Second)
	for len(exp.GetSpans()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // the span ends after the handler returns
	}
	span, attrs := wraptest.OneSpan(t, exp)
	if span.Name != "chat m" {
		t.Errorf("span name %q, want chat m", span.Name)
	}
	for k, want := range map[string]string{"gen_ai.request.model": "m", "gen_ai.request.stream": "true", "otelitl.chunk.count": "3"} {
		if got := attrs[attrKey(k)].String(); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}
