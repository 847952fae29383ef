// Command anthropic streams a Messages reply with anthropic-sdk-go, instrumented by otelitl's
// anthropicitl wrapper, and prints the figures the collector derives for it.
//
//	go run ./examples/anthropic                                   # against a fakellm inside the example
//	go run ./examples/fakellm -addr 127.0.0.1:8000 &              # or a standalone one
//	ANTHROPIC_BASE_URL=http://127.0.0.1:8000 go run ./examples/anthropic
//	ANTHROPIC_BASE_URL=https://api.anthropic.com ANTHROPIC_API_KEY=... go run ./examples/anthropic -model claude-sonnet-4-5
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/otelitl/itl/examples/internal/demo"
	"github.com/otelitl/itl/otelitl/anthropicitl"
)

func main() {
	model := flag.String("model", "fake-claude", "model to ask")
	flag.Parse()
	if err := run(*model, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "anthropic example:", err)
		os.Exit(1)
	}
}

func run(model string, out io.Writer) error {
	base, stop, err := demo.Anthropic.BaseURL(out)
	if err != nil {
		return err
	}
	defer stop()
	tel, err := demo.Start("anthropic-example")
	if err != nil {
		return err
	}
	defer tel.Close()
	client := anthropic.NewClient(option.WithBaseURL(base), option.WithAPIKey(demo.Anthropic.Key()))
	fmt.Fprintln(out, "\nmessage:")
	stream := anthropicitl.NewStreaming(context.Background(), tel.In, &client.Messages, anthropic.MessageNewParams{
		Model: anthropic.Model(model), MaxTokens: 120,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Why do streamed replies stutter?"))},
	})
	for stream.Next() {
		if ev := stream.Current(); ev.Type == "content_block_delta" {
			fmt.Fprint(out, ev.Delta.Text)
		}
	}
	if err := stream.Err(); err != nil {
		var apiErr *anthropic.Error
		if errors.As(err, &apiErr) {
			return demo.Anthropic.Explain(err, base, model, apiErr.StatusCode, apiErr.RawJSON())
		}
		return demo.Anthropic.Explain(err, base, model, 0, "")
	}
	_ = stream.Close()
	fmt.Fprintln(out)
	return tel.Finish(out)
}
