package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/internal/sdkptrace"
	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/httpitl"
)

// TestRedirectHopNotAGeneration: a streamed call an HTTP client follows through a 307 makes two
// spans through httpitl, one a hop; the collector's reader takes only the second, with its chunks,
// for a model call, so that the redirect adds no generation and no duration of its own. In
// process: no collector to build, so it runs without OTELITL_E2E.
func TestRedirectHopNotAGeneration(t *testing.T) {
	var events []wraptest.Event
	for _, tok := range []string{"a", "b", "c"} {
		events = append(events, wraptest.Event{Data: fmt.Sprintf(`{"model":"gpt-4o","choices":[{"index":0,"delta":{"content":%q}}]}`, tok), Content: true})
	}
	upstream := wraptest.NewServer(t, append(events, wraptest.Event{Data: "[DONE]"}), 0)
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, upstream.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer gateway.Close()

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	client := &http.Client{Transport: httpitl.NewTransport(nil, httpitl.WithInstrumentation(otelitl.New(otelitl.WithTracerProvider(tp))))}
	body := `{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	req, err := http.NewRequest(http.MethodPost, gateway.URL+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	td := sdkptrace.Traces(exp.GetSpans().Snapshots())
	if td.SpanCount() != 2 {
		t.Fatalf("%d spans, want the hop's and the generation's", td.SpanCount())
	}
	d := genaispan.New(genaispan.Config{})
	var calls, chunks int
	pwalk.Spans(td, func(_ pcommon.Map, span ptrace.Span) {
		if c := d.Read(span, false); c.ModelCall {
			calls++
			chunks = c.Timeline.Len()
		}
	})
	if calls != 1 || chunks != 3 {
		t.Errorf("%d model calls, the last with %d chunks; want one, the second hop's, with 3", calls, chunks)
	}
}
