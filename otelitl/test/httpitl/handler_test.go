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
// flushes through http.Flusher or http.ResponseController; unflushed chunks at the end.
func TestHandlerFlushAndController(t *testing.T) {
	tp, exp := serverTracing(t)
	const pause = 40 * time.Millisecond
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		if err := rc.SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
			t.Errorf("ResponseController does not reach the server's writer: %v", err)
		}
		_, _ = io.WriteString(w, chatChunk("a"))
		_, _ = io.WriteString(w, chatChunk("b"))
		time.Sleep(pause) // a and b are not sent yet
		w.(http.Flusher).Flush()
		time.Sleep(pause)
		_, _ = io.WriteString(w, chatChunk("c"))
		if err := rc.Flush(); err != nil {
			t.Errorf("ResponseController.Flush: %v", err)
		}
		time.Sleep(pause)
		_, _ = io.WriteString(w, chatChunk("d")+"data: [DONE]\n\n") // flushed when the handler returns
		time.Sleep(pause)
	})
	srv := httptest.NewServer(httpitl.NewHandler(h, httpitl.WithTracerProvider(tp)))
	defer srv.Close()
	res, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"x","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(res.Body)
	res.Body.Close()
	time.Sleep(20 * time.Millisecond)
	span, attrs := wraptest.OneSpan(t, exp)
	var at []time.Duration
	for _, ev := range span.Events {
		at = append(at, ev.Time.Sub(span.StartTime))
	}
	if len(at) != 4 || attrs[attrKey("error.type")].String() != "" {
		t.Fatalf("chunks at %v, error.type %q", at, attrs[attrKey("error.type")].String())
	}
	near := func(d, want time.Duration) bool { return d >= want && d < want+pause/2 }
	if !near(at[0], pause) || !near(at[1], pause) || !near(at[2], 2*pause) || !near(at[3], 4*pause) {
		t.Errorf("chunks at %v; want a and b at the first flush (%v), c at the second (%v), d at the end (%v)", at, pause, 2*pause, 4*pause)
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
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(`{"model":"x","stream":true}`))
	if res, err := http.DefaultClient.Do(req); err == nil {
		_, _ = io.ReadAll(res.Body)
		res.Body.Close()
	}
	res, err := http.Post(srv.URL+"/v2/chat/completions", "application/json", strings.NewReader(`{}`))
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
