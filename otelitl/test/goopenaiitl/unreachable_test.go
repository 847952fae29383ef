package goopenaiitl_test

import (
	"context"
	"errors"
	"syscall"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/otelitl/itl/internal/refused"
	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl/goopenaiitl"
)

// TestUnreachable: go-openai against a closed port: the span's error.type and status description
// are connection_refused, as httpitl's transport names the same failure; the application gets
// go-openai's error unchanged.
func TestUnreachable(t *testing.T) {
	in, exp := wraptest.Tracing(t)
	cfg := openai.DefaultConfig("test")
	cfg.BaseURL = "http://" + refused.Addr(t) + "/v1"
	s, err := goopenaiitl.CreateChatCompletionStream(context.Background(), in, openai.NewClientWithConfig(cfg),
		openai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}},
		goopenaiitl.WithBaseURL(cfg.BaseURL))
	if s != nil {
		t.Fatal("a stream from a closed port")
	}
	var typed interface{ ErrorType() string }
	if !errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &typed) {
		t.Errorf("the application got %v, want go-openai's connection refused, without an error type", err)
	}
	span, a := wraptest.OneSpan(t, exp)
	if got := a["error.type"].AsString(); got != "connection_refused" || span.Status.Description != got {
		t.Errorf("error.type %q, status %q; want connection_refused", got, span.Status.Description)
	}
}
