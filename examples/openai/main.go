// Command openai streams a chat completion and a Responses API reply with openai-go, instrumented by
// otelitl's openaiitl wrapper, and prints the figures the collector derives for each.
//
//	go run ./examples/openai                                         # against an in-process fakellm
//	OPENAI_BASE_URL=https://api.openai.com/v1 OPENAI_API_KEY=... go run ./examples/openai -model gpt-4o
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/otelitl/itl/examples/internal/demo"
	"github.com/otelitl/itl/otelitl/openaiitl"
)

func main() {
	model := flag.String("model", "fake-gpt", "model to ask")
	flag.Parse()
	if err := run(*model); err != nil {
		fmt.Fprintln(os.Stderr, "openai example:", err)
		os.Exit(1)
	}
}

func run(model string) error {
	base, stop, err := demo.BaseURL("OPENAI_BASE_URL", "/v1/")
	if err != nil {
		return err
	}
	defer stop()
	tel, err := demo.Start("openai-example")
	if err != nil {
		return err
	}
	key := os.Getenv("OPENAI_API_KEY")
	if key == "" {
		key = "fakellm"
	}
	client := openai.NewClient(option.WithBaseURL(base), option.WithAPIKey(key))
	ctx := context.Background()

	fmt.Println("\nchat completion:")
	stream := openaiitl.NewChatStreaming(ctx, tel.In, &client.Chat.Completions, openai.ChatCompletionNewParams{
		Model:         model,
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Explain inter-token latency in one paragraph.")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	for stream.Next() {
		for _, c := range stream.Current().Choices {
			fmt.Print(c.Delta.Content)
		}
	}
	if err := stream.Err(); err != nil {
		return err
	}

	fmt.Println("\n\nresponses API:")
	rs := openaiitl.NewResponseStreaming(ctx, tel.In, &client.Responses, responses.ResponseNewParams{
		Model: model, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("And time to first token?")},
	})
	for rs.Next() {
		if ev := rs.Current(); ev.Type == "response.output_text.delta" {
			fmt.Print(ev.Delta)
		}
	}
	if err := rs.Err(); err != nil {
		return err
	}
	_ = rs.Close()
	fmt.Println()
	return tel.Finish()
}
