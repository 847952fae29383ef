package goopenaiitl_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.opentelemetry.io/otel/attribute"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl/goopenaiitl"
	"github.com/otelitl/itl/otelitl/httpitl"
)

// recvRawAll reads a stream with RecvRaw until it fails, and returns the raw responses' count and
// the error.
func recvRawAll(recv func() ([]byte, error)) (int, error) {
	n := 0
	for {
		if _, err := recv(); err != nil {
			return n, err
		}
		n++
	}
}

// TestRecvRawLikeHTTPITL: an application that reads the stream with RecvRaw (go-openai's stream
// method for the raw JSON of each response, which the wrapper's stream has too) gets the span
// httpitl's transport records when go-openai reads the same bytes through it: the chunks, finish
// reason and usage, the end at [DONE], an error event's name. RecvRaw returns exactly what the
// SDK's does. The SDK's RecvRaw, promoted through the wrapper's stream, bypassed it: no chunk, and
// the generation ended only at Close, "cancelled".
func TestRecvRawLikeHTTPITL(t *testing.T) {
	req := openai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}
	for _, tc := range []struct {
		name   string
		events []wraptest.Event
		want   string // error.type
	}{
		{"whole", events, ""},
		{"an error event", []wraptest.Event{events[2], {Data: `{"error":{"message":"m","type":"server_error","code":"overloaded"}}`}}, "overloaded"},
		{"an error event go-openai cannot decode", []wraptest.Event{events[2], {Data: `{"error":"The server is overloaded"}`}, events[3], finish("stop"), {Data: `[DONE]`}}, itlconv.ErrorTypeStreamError},
		{"cut off", events[:4], itlconv.ErrorTypeIncompleteStream},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wraptest.NewServer(t, tc.events, time.Millisecond)
			cfg := openai.DefaultConfig("test")
			cfg.BaseURL = srv.URL + "/v1"

			in, exp := wraptest.Tracing(t)
			withTransport := cfg
			withTransport.HTTPClient = &http.Client{Transport: httpitl.NewTransport(http.DefaultTransport, httpitl.WithInstrumentation(in))}
			plain, err := openai.NewClientWithConfig(withTransport).CreateChatCompletionStream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			plainN, plainErr := recvRawAll(plain.RecvRaw)
			_ = plain.Close()
			_, viaTransport := wraptest.OneSpan(t, exp)

			in, exp = wraptest.Tracing(t)
			s, err := goopenaiitl.CreateChatCompletionStream(context.Background(), in, openai.NewClientWithConfig(cfg), req, goopenaiitl.WithBaseURL(cfg.BaseURL))
			if err != nil {
				t.Fatal(err)
			}
			n, err := recvRawAll(s.RecvRaw)
			_ = s.Close()
			if n != plainN || err.Error() != plainErr.Error() {
				t.Errorf("RecvRaw returned %d responses and %v, the SDK's %d and %v", n, err, plainN, plainErr)
			}
			if tc.want == "" && !errors.Is(err, io.EOF) {
				t.Errorf("RecvRaw ended with %v, want io.EOF", err)
			}
			_, wrapped := wraptest.OneSpan(t, exp)

			for _, k := range []attribute.Key{"error.type", itlconv.ChunkCountKey, "gen_ai.response.finish_reasons", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.response.id"} {
				if got, want := wrapped[k].String(), viaTransport[k].String(); got != want {
					t.Errorf("%s: the wrapper recorded %q, httpitl %q", k, got, want)
				}
			}
			if got := wrapped["error.type"].AsString(); got != tc.want {
				t.Errorf("the wrapper recorded error.type %q, want %q", got, tc.want)
			}
		})
	}
}
