// Command anthropic streams a Messages reply with anthropic-sdk-go, instrumented by otelitl's
// anthropicitl wrapper, and prints the figures the collector derives for it.
//
//	go run ./examples/anthropic                                   # against an in-process fakellm
//	ANTHROPIC_BASE_URL=https://api.anthropic.com ANTHROPIC_API_KEY=... go run ./examples/anthropic -model claude-sonnet-4-5
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/otelitl/itl/examples/internal/demo"
	"github.com/otelitl/itl/otelitl/anthropicitl"
)

func main() {
	model := flag.String("model", "fake-claude", "model to ask")
	flag.Parse()
	if err := run(*model); err != nil {
		fmt.Fprintln(os.Stderr, "anthropic example:", err)
		os.Exit(1)
	}
}

func run(model string) error {
	base, stop, err := demo.BaseURL("ANTHROPIC_BASE_URL", "")
	if err != nil {
		return err
	}
	defer stop()
	tel, err := demo.Start("anthropic-example")
	if err != nil {
		return err
	}
	key := os.Getenv("ANTHROPIC_API_KEY")
	if key == "" {
		key = "fakellm"
	}
	client := anthropic.NewClient(option.WithBaseURL(base), option.WithAPIKey(key))
	stream := anthropicitl.NewStreaming(context.Background(), tel.In, &client.Messages, anthropic.MessageNewParams{
		Model: anthropic.Model(model), MaxTokens: 120,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Why do streamed replies stutter?"))},
	})
	for stream.Next() {
		if ev := stream.Current(); ev.Type == "content_block_delta" {
			fmt.Print(ev.Delta.Text)
		}
	}
	if err := stream.Err(); err != nil {
		return err
	}
	_ = stream.Close()
	fmt.Println()
	return tel.Finish()
}
