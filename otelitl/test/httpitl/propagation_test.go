package httpitl_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelitl/itl/examples/fakellm/engine"
	"github.com/otelitl/itl/examples/fakellm/server"
	"github.com/otelitl/itl/otelitl/httpitl"
)

// TestTraceContextPropagated: a streamed reply from a server behind NewHandler, read through
// NewTransport, makes one trace: the server's SERVER span is the child of the client's CLIENT
// generation span, whose context the transport put in the request's headers; the caller's request
// keeps its own headers. Before, the two spans were siblings, or in two traces.
func TestTraceContextPropagated(t *testing.T) {
	eng, err := engine.New(engine.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	tp, exp := serverTracing(t)
	tc := propagation.TraceContext{}
	srv := httptest.NewServer(httpitl.NewHandler(server.New(eng, []string{"m"}), httpitl.WithTracerProvider(tp), httpitl.WithPropagators(tc)))
	defer srv.Close()
	client := &http.Client{Transport: httpitl.NewTransport(nil, httpitl.WithTracerProvider(tp), httpitl.WithPropagators(tc))}

	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","stream":true,"max_tokens":4,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if got := req.Header.Get("traceparent"); got != "" {
		t.Errorf("the caller's request was changed: it has traceparent %q", got)
	}

	var spans tracetest.SpanStubs
	for deadline := time.Now().Add(2 * time.Second); len(spans) < 2 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		spans = exp.GetSpans() // the server's span ends after its handler returns
	}
	var clientSpan, serverSpan *tracetest.SpanStub
	for i := range spans {
		switch spans[i].SpanKind {
		case trace.SpanKindClient:
			clientSpan = &spans[i]
		case trace.SpanKindServer:
			serverSpan = &spans[i]
		}
	}
	if clientSpan == nil || serverSpan == nil || len(spans) != 2 {
		t.Fatalf("%d spans, want a CLIENT and a SERVER generation span", len(spans))
	}
	if serverSpan.Parent.TraceID() != clientSpan.SpanContext.TraceID() || serverSpan.Parent.SpanID() != clientSpan.SpanContext.SpanID() {
		t.Errorf("the server's span has parent %s/%s, want the client's generation span %s/%s",
			serverSpan.Parent.TraceID(), serverSpan.Parent.SpanID(), clientSpan.SpanContext.TraceID(), clientSpan.SpanContext.SpanID())
	}
	if !serverSpan.Parent.IsRemote() {
		t.Error("the server's parent is not remote: it did not come over the wire")
	}
}
