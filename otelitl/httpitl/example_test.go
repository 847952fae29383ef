package httpitl_test

import (
	"net/http"

	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/httpitl"
)

// Wrap the transport of the *http.Client an SDK uses: each streamed reply through it becomes a
// generation span with its timeline.
func ExampleNewTransport() {
	client := &http.Client{Transport: httpitl.NewTransport(http.DefaultTransport)}
	_ = client // openai.NewClient(option.WithHTTPClient(client)), genai.ClientConfig{HTTPClient: client}, ...
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
