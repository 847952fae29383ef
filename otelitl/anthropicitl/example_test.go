package anthropicitl_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/anthropicitl"
)

// The reading loop of anthropic-sdk-go does not change: NewStreaming returns the SDK's stream. Here
// a local server stands in for the API; the spans go to the global tracer provider (set it with
// otel.SetTracerProvider, or give otelitl.WithTracerProvider).
func ExampleNewStreaming() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`,
			`{"type":"message_stop"}`,
		} {
			var e struct{ Type string }
			_ = json.Unmarshal([]byte(ev), &e)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.Type, ev)
		}
	}))
	defer srv.Close()

	client := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("key"))
	in := otelitl.New()
	stream := anthropicitl.NewStreaming(context.Background(), in, &client.Messages, anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 100,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	})
	defer stream.Close()
	for stream.Next() {
		if d, ok := stream.Current().AsAny().(anthropic.ContentBlockDeltaEvent); ok {
			fmt.Print(d.Delta.Text)
		}
	}
	fmt.Println()
	fmt.Println("error:", stream.Err())
	// Output:
	// Hello
	// error: <nil>
}

// An endpoint no URL tells is named with WithProvider, here on the client for every call: a
// gateway of one's own that serves Anthropic's Messages API in front of Amazon Bedrock, whose
// spans and metrics then say gen_ai.provider.name "aws.bedrock", where its URL (/v1/messages) would
// say "anthropic". (A client of anthropic-sdk-go's bedrock or vertex package needs no option: the
// wrapper tells them from the URL the SDK sends to, as httpitl's transport does.)
func ExampleWithProvider() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"+
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	defer srv.Close()

	client := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("key"), anthropicitl.WithProvider("aws.bedrock"))
	in := otelitl.New()
	stream := anthropicitl.NewStreaming(context.Background(), in, &client.Messages, anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 100,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	})
	defer stream.Close()
	for stream.Next() {
		if d, ok := stream.Current().AsAny().(anthropic.ContentBlockDeltaEvent); ok {
			fmt.Print(d.Delta.Text)
		}
	}
	fmt.Println()
	fmt.Println("error:", stream.Err())
	// Output:
	// Hi
	// error: <nil>
}
