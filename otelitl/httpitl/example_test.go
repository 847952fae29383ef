package httpitl_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/httpitl"
)

// Wrap the transport of the *http.Client an SDK uses: every streamed reply becomes a generation
// span with its full timeline, in the TracerProvider set with otel.SetTracerProvider (or
// WithInstrumentation). The caller reads the stream as the server sent it, each event as it
// arrives.
func ExampleNewTransport() {
	// A server streaming an OpenAI Chat Completions reply, standing in for api.openai.com.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, tok := range []string{"Hello", ",", " world"} {
			fmt.Fprintf(w, "data: {\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", tok)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()

	client := &http.Client{Transport: httpitl.NewTransport(http.DefaultTransport)}
	// openai.NewClient(option.WithHTTPClient(client)), genai.ClientConfig{HTTPClient: client}, ...
	resp, err := client.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"Hi"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close() // ends the span: three chunks, their arrivals kept
	fmt.Print(string(body))
	// Output:
	// data: {"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"Hello"}}]}
	//
	// data: {"model":"gpt-4o","choices":[{"index":0,"delta":{"content":","}}]}
	//
	// data: {"model":"gpt-4o","choices":[{"index":0,"delta":{"content":" world"}}]}
	//
	// data: [DONE]
}

// Share an Instrumentation (for its metrics or encoding) with the SDK wrappers.
func ExampleWithInstrumentation() {
	in := otelitl.New(otelitl.WithEncoding(otelitl.EncodingCompact))
	client := &http.Client{Transport: httpitl.NewTransport(nil, httpitl.WithInstrumentation(in))}
	_ = client
}

// A Go server or gateway that streams these protocols records a SERVER span per generation, timed
// at the flushes that send each chunk to the client.
func ExampleNewHandler() {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		// ... write each chunk, then w.(http.Flusher).Flush()
	})
	srv := &http.Server{Addr: "127.0.0.1:8000", Handler: httpitl.NewHandler(mux)}
	_ = srv
}
