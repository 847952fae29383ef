// Command openai streams a chat completion and a Responses API reply with openai-go, instrumented by
// otelitl's openaiitl wrapper, and prints the figures the collector derives for each.
//
//	go run ./examples/openai                                         # against a fakellm inside the example
//	go run ./examples/fakellm -addr 127.0.0.1:8000 &                 # or a standalone one
//	OPENAI_BASE_URL=http://127.0.0.1:8000/v1 go run ./examples/openai
//	OPENAI_BASE_URL=https://api.openai.com/v1 OPENAI_API_KEY=... go run ./examples/openai -model gpt-4o
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
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
	if err := run(*model, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "openai example:", err)
		os.Exit(1)
	}
}

func run(model string, out io.Writer) error {
	base, stop, err := demo.OpenAI.BaseURL(out)
	if err != nil {
		return err
	}
	defer stop()
	tel, err := demo.Start("openai-example")
	if err != nil {
		return err
	}
	defer tel.Close()
	client := openai.NewClient(option.WithBaseURL(base), option.WithAPIKey(demo.OpenAI.Key()))
	ctx := context.Background()

	fmt.Fprintln(out, "\nchat completion:")
	stream := openaiitl.NewChatStreaming(ctx, tel.In, &client.Chat.Completions, openai.ChatCompletionNewParams{
		Model:         model,
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Explain inter-token latency in one paragraph.")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	for stream.Next() {
		for _, c := range stream.Current().Choices {
			fmt.Fprint(out, c.Delta.Content)
		}
	}
	if err := stream.Err(); err != nil {
		return explain(err, base, model)
	}
	_ = stream.Close()

	fmt.Fprintln(out, "\n\nresponses API:")
	rs := openaiitl.NewResponseStreaming(ctx, tel.In, &client.Responses, responses.ResponseNewParams{
		Model: model, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("And time to first token?")},
	})
	for rs.Next() {
		if ev := rs.Current(); ev.Type == "response.output_text.delta" {
			fmt.Fprint(out, ev.Delta)
		}
	}
	if err := rs.Err(); err != nil {
		return explain(err, base, model)
	}
	_ = rs.Close()
	fmt.Fprintln(out)
	return tel.Finish(out)
}

// explain adds the server's message, which openai-go's error summary leaves out, and a hint.
func explain(err error, base, model string) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = apiErr.RawJSON()
		}
		return demo.OpenAI.Explain(err, base, model, apiErr.StatusCode, msg)
	}
	return demo.OpenAI.Explain(err, base, model, 0, "")
}
