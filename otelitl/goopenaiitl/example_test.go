package goopenaiitl_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	openai "github.com/sashabaranov/go-openai"

	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/goopenaiitl"
)

// The reading loop of go-openai does not change: the stream has the SDK stream's methods. WithBaseURL
// names the server the client was configured with, which go-openai does not show. Here a local
// server stands in for the API; the spans go to the global tracer provider (set it with
// otel.SetTracerProvider, or give otelitl.WithTracerProvider).
func ExampleCreateChatCompletionStream() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, delta := range []string{`{"content":"Hel"}`, `{"content":"lo"}`} {
			fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":%s}]}\n\n", delta)
		}
		fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()

	cfg := openai.DefaultConfig("key")
	cfg.BaseURL = srv.URL + "/v1"
	client := openai.NewClientWithConfig(cfg)
	in := otelitl.New()
	stream, err := goopenaiitl.CreateChatCompletionStream(context.Background(), in, client, openai.ChatCompletionRequest{
		Model:    "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi"}},
	}, goopenaiitl.WithBaseURL(cfg.BaseURL))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stream.Close()
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			fmt.Println("error:", err)
			return
		}
		for _, c := range resp.Choices {
			fmt.Print(c.Delta.Content)
		}
	}
	fmt.Println()
	// Output:
	// Hello
}
