package httpitl_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/httpitl"
)

// The span httpitl.NewTransport records for a streamed reply: a CLIENT span named for the
// operation and model, its attributes read from the request and the stream, and one arrival per
// chunk (here as otelitl.chunk events; otelitl.EncodingCompact writes them as
// otelitl.chunk.offsets_us).
func ExampleNewTransport() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, tok := range []string{"Hello", ",", " world"} {
			fmt.Fprintf(w, "data: {\"model\":\"gpt-4o-2024-08-06\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", tok)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: {\"model\":\"gpt-4o-2024-08-06\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":3}}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()

	exp := tracetest.NewInMemoryExporter() // your SDK setup, with its exporter
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	in := otelitl.New(otelitl.WithTracerProvider(tp))
	client := &http.Client{Transport: httpitl.NewTransport(nil, httpitl.WithInstrumentation(in))}

	resp, err := client.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"Hi"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	span := exp.GetSpans()[0]
	fmt.Println(span.Name, span.SpanKind)
	for _, kv := range span.Attributes {
		switch kv.Key {
		case "gen_ai.provider.name", "gen_ai.request.model", "gen_ai.response.model", "otelitl.chunk.count",
			"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.response.finish_reasons":
			fmt.Printf("%s = %s\n", kv.Key, kv.Value.String())
		}
	}
	chunks := 0
	for _, e := range span.Events {
		if e.Name == itlconv.ChunkEventName {
			chunks++
		}
	}
	fmt.Println("chunk events:", chunks)
	// Output:
	// chat gpt-4o client
	// gen_ai.provider.name = openai
	// gen_ai.request.model = gpt-4o
	// otelitl.chunk.count = 3
	// gen_ai.response.model = gpt-4o-2024-08-06
	// gen_ai.response.finish_reasons = ["stop"]
	// gen_ai.usage.input_tokens = 9
	// gen_ai.usage.output_tokens = 3
	// chunk events: 3
}
