// Command goopenai streams a chat completion with github.com/sashabaranov/go-openai, instrumented by
// otelitl's goopenaiitl wrapper, and prints the figures the collector derives for it.
//
//	go run ./examples/goopenai                                      # against an in-process fakellm
//	OPENAI_BASE_URL=https://api.openai.com/v1 OPENAI_API_KEY=... go run ./examples/goopenai -model gpt-4o
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/otelitl/itl/examples/internal/demo"
	"github.com/otelitl/itl/otelitl/goopenaiitl"
)

func main() {
	model := flag.String("model", "fake-gpt", "model to ask")
	flag.Parse()
	if err := run(*model); err != nil {
		fmt.Fprintln(os.Stderr, "goopenai example:", err)
		os.Exit(1)
	}
}

func run(model string) error {
	base, stop, err := demo.BaseURL("OPENAI_BASE_URL", "/v1")
	if err != nil {
		return err
	}
	defer stop()
	tel, err := demo.Start("goopenai-example")
	if err != nil {
		return err
	}
	cfg := goopenai.DefaultConfig(os.Getenv("OPENAI_API_KEY"))
	cfg.BaseURL = strings.TrimSuffix(base, "/")
	stream, err := goopenaiitl.CreateChatCompletionStream(context.Background(), tel.In, goopenai.NewClientWithConfig(cfg),
		goopenai.ChatCompletionRequest{
			Model:         model,
			Messages:      []goopenai.ChatCompletionMessage{{Role: goopenai.ChatMessageRoleUser, Content: "What is TPOT?"}},
			StreamOptions: &goopenai.StreamOptions{IncludeUsage: true},
		}, goopenaiitl.WithBaseURL(cfg.BaseURL))
	if err != nil {
		return err
	}
	defer stream.Close()
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		for _, c := range resp.Choices {
			fmt.Print(c.Delta.Content)
		}
	}
	fmt.Println()
	return tel.Finish()
}
