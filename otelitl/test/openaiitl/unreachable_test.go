package openaiitl_test

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelitl/itl/internal/refused"
	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/openaiitl"
)

// TestUnreachable: openai-go against a closed port, for Chat Completions and Responses: the span's
// error.type and status description are connection_refused, as httpitl's transport names the same
// failure; the application gets openai-go's error unchanged.
func TestUnreachable(t *testing.T) {
	c := openai.NewClient(option.WithBaseURL("http://"+refused.Addr(t)+"/v1/"), option.WithAPIKey("test"), option.WithMaxRetries(0))
	for name, call := range map[string]func(*otelitl.Instrumentation) error{
		"chat": func(in *otelitl.Instrumentation) error {
			s := openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, chatParams)
			defer s.Close()
			return s.Err()
		},
		"responses": func(in *otelitl.Instrumentation) error {
			s := openaiitl.NewResponseStreaming(context.Background(), in, &c.Responses, responses.ResponseNewParams{Model: "gpt-4o"})
			defer s.Close()
			return s.Err()
		},
	} {
		t.Run(name, func(t *testing.T) {
			in, exp := wraptest.Tracing(t)
			checkRefused(t, exp, call(in))
		})
	}
}

// checkRefused checks the one span of a call refused a connection, and the call's error.
func checkRefused(t *testing.T, exp *tracetest.InMemoryExporter, err error) {
	t.Helper()
	var typed interface{ ErrorType() string }
	if !errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &typed) {
		t.Errorf("the application got %v, want the SDK's connection refused, without an error type", err)
	}
	s, a := wraptest.OneSpan(t, exp)
	if got := a["error.type"].AsString(); got != "connection_refused" || s.Status.Description != got {
		t.Errorf("error.type %q, status %q; want connection_refused", got, s.Status.Description)
	}
}
