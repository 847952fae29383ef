package openaiitl_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/openaiitl"
)

// The reading loop of openai-go does not change: NewChatStreaming returns the SDK's stream. Here a
// local server stands in for the API; the spans go to the global tracer provider (set it with
// otel.SetTracerProvider, or give otelitl.WithTracerProvider).
func ExampleNewChatStreaming() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, delta := range []string{`{"content":"Hel"}`, `{"content":"lo"}`} {
			fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":%s}]}\n\n", delta)
		}
		fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()

	client := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("key"))
	in := otelitl.New()
	stream := openaiitl.NewChatStreaming(context.Background(), in, &client.Chat.Completions, openai.ChatCompletionNewParams{
		Model:    "gpt-4o",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	defer stream.Close()
	for stream.Next() {
		for _, c := range stream.Current().Choices {
			fmt.Print(c.Delta.Content)
		}
	}
	fmt.Println()
	fmt.Println("error:", stream.Err())
	// Output:
	// Hello
	// error: <nil>
}

// An OpenAI-compatible server of another provider is named with WithProvider, here on the client
// for every call: its spans and metrics say gen_ai.provider.name "deepseek", where its URL would
// say "openai". (A client of openai-go's azure package needs no option: the wrappers tell Azure
// OpenAI from the URL the SDK sends to, "azure.ai.openai", as httpitl's transport does.)
func ExampleWithProvider() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"deepseek-chat\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()

	client := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("key"), openaiitl.WithProvider("deepseek"))
	in := otelitl.New()
	stream := openaiitl.NewChatStreaming(context.Background(), in, &client.Chat.Completions, openai.ChatCompletionNewParams{
		Model:    "deepseek-chat",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	defer stream.Close()
	for stream.Next() {
		for _, c := range stream.Current().Choices {
			fmt.Print(c.Delta.Content)
		}
	}
	fmt.Println()
	fmt.Println("error:", stream.Err())
	// Output:
	// Hi
	// error: <nil>
}
