// Command goopenai streams a chat completion with github.com/sashabaranov/go-openai, instrumented by
// otelitl's goopenaiitl wrapper, and prints the figures the collector derives for it.
//
//	go run ./examples/goopenai                                      # against a fakellm inside the example
//	go run ./examples/fakellm -addr 127.0.0.1:8000 &                # or a standalone one
//	OPENAI_BASE_URL=http://127.0.0.1:8000/v1 go run ./examples/goopenai
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
	if err := run(*model, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "goopenai example:", err)
		os.Exit(1)
	}
}

func run(model string, out io.Writer) error {
	base, stop, err := demo.OpenAI.BaseURL(out)
	if err != nil {
		return err
	}
	defer stop()
	tel, err := demo.Start("goopenai-example")
	if err != nil {
		return err
	}
	defer tel.Close()
	cfg := goopenai.DefaultConfig(demo.OpenAI.Key())
	cfg.BaseURL = strings.TrimSuffix(base, "/")
	fmt.Fprintln(out, "\nchat completion:")
	stream, err := goopenaiitl.CreateChatCompletionStream(context.Background(), tel.In, goopenai.NewClientWithConfig(cfg),
		goopenai.ChatCompletionRequest{
			Model:         model,
			Messages:      []goopenai.ChatCompletionMessage{{Role: goopenai.ChatMessageRoleUser, Content: "What is TPOT?"}},
			StreamOptions: &goopenai.StreamOptions{IncludeUsage: true},
		}, goopenaiitl.WithBaseURL(cfg.BaseURL))
	if err != nil {
		return explain(err, base, model)
	}
	defer stream.Close()
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return explain(err, base, model)
		}
		for _, c := range resp.Choices {
			fmt.Fprint(out, c.Delta.Content)
		}
	}
	fmt.Fprintln(out)
	return tel.Finish(out)
}

// explain adds a hint to go-openai's errors, which carry the status code and the server's message.
func explain(err error, base, model string) error {
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	switch {
	case errors.As(err, &apiErr):
		return demo.OpenAI.Explain(err, base, model, apiErr.HTTPStatusCode, apiErr.Message)
	case errors.As(err, &reqErr):
		return demo.OpenAI.Explain(err, base, model, reqErr.HTTPStatusCode, string(reqErr.Body))
	}
	return demo.OpenAI.Explain(err, base, model, 0, "")
}
