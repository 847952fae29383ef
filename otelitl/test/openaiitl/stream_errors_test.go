package openaiitl_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl/httpitl"
	"github.com/otelitl/itl/otelitl/openaiitl"
)

// TestChatErrorEventLikeHTTPITL: an error event in a Chat Completions stream gets the error.type
// httpitl's transport records when openai-go reads the same bytes through it, for each event of
// wraptest.ChatErrorEvents (a code, only a type, neither, a code too long or free text, an error
// that is no object). The wrapper recorded "stream_error" for all of them.
func TestChatErrorEventLikeHTTPITL(t *testing.T) {
	for _, ev := range wraptest.ChatErrorEvents() {
		t.Run(ev.Name, func(t *testing.T) {
			srv := wraptest.NewServer(t, []wraptest.Event{chatEvents[2], {Data: ev.Data}}, time.Millisecond)

			in, exp := wraptest.Tracing(t)
			hc := &http.Client{Transport: httpitl.NewTransport(http.DefaultTransport, httpitl.WithInstrumentation(in))}
			c := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test"), option.WithMaxRetries(0), option.WithHTTPClient(hc))
			viaTransport := drainChat(t, c.Chat.Completions.NewStreaming(context.Background(), chatParams), exp)

			in, exp = wraptest.Tracing(t)
			c = client(srv)
			wrapped := drainChat(t, openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, chatParams), exp)

			if viaTransport != ev.Want {
				t.Errorf("httpitl recorded error.type %q, want %q", viaTransport, ev.Want)
			}
			if wrapped != viaTransport {
				t.Errorf("openaiitl recorded error.type %q, httpitl %q for the same stream", wrapped, viaTransport)
			}
		})
	}
}

// drainChat reads a stream that must end in the SDK's error for an error event, closes it, and
// returns the error.type of the one span exp holds.
func drainChat(t *testing.T, s *ssestream.Stream[openai.ChatCompletionChunk], exp *tracetest.InMemoryExporter) string {
	t.Helper()
	for s.Next() {
	}
	var sErr *ssestream.StreamError
	if !errors.As(s.Err(), &sErr) {
		t.Fatalf("openai-go gave %v, want its error for an error event", s.Err())
	}
	_ = s.Close()
	_, a := wraptest.OneSpan(t, exp)
	return a[semconv.ErrorTypeKey].AsString()
}
