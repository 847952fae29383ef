package anthropicitl_test

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/otelitl/itl/internal/refused"
	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl/anthropicitl"
)

// TestUnreachable: anthropic-sdk-go against a closed port: the span's error.type and status
// description are connection_refused, as httpitl's transport names the same failure; the
// application gets the SDK's error unchanged.
func TestUnreachable(t *testing.T) {
	in, exp := wraptest.Tracing(t)
	c := anthropic.NewClient(option.WithBaseURL("http://"+refused.Addr(t)), option.WithAPIKey("test"), option.WithMaxRetries(0))
	s := anthropicitl.NewStreaming(context.Background(), in, &c.Messages, anthropic.MessageNewParams{
		Model: "claude-sonnet-4-5", MaxTokens: 16,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	})
	err := s.Err()
	_ = s.Close()
	var typed interface{ ErrorType() string }
	if !errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &typed) {
		t.Errorf("the application got %v, want the SDK's connection refused, without an error type", err)
	}
	span, a := wraptest.OneSpan(t, exp)
	if got := a["error.type"].AsString(); got != "connection_refused" || span.Status.Description != got {
		t.Errorf("error.type %q, status %q; want connection_refused", got, span.Status.Description)
	}
}
