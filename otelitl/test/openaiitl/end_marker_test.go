package openaiitl_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/httpitl"
	"github.com/otelitl/itl/otelitl/openaiitl"
)

// TestChatEndMarkerDiffers pins a documented difference (the package doc): a Chat Completions
// stream's end marker is a choice's finish_reason for the wrapper, which cannot see [DONE] (openai-go
// reports [DONE] and the end of the body alike), and [DONE] for httpitl. Between the two (where the
// usage chunk comes) a connection cut, or an application that stops at the finish reason and
// closes the stream, leaves a complete reply in the wrapper's span and a failure in httpitl's; a
// [DONE] without any finish reason the reverse.
func TestChatEndMarkerDiffers(t *testing.T) {
	stopAtFinish := func(c openai.Client, in *otelitl.Instrumentation) {
		var s interface {
			Next() bool
			Current() openai.ChatCompletionChunk
			Close() error
		}
		if in == nil {
			s = c.Chat.Completions.NewStreaming(context.Background(), chatParams)
		} else {
			s = openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, chatParams)
		}
		for s.Next() {
			if ch := s.Current().Choices; len(ch) > 0 && ch[0].FinishReason != "" {
				break
			}
		}
		_ = s.Close()
	}
	readAll := func(c openai.Client, in *otelitl.Instrumentation) { _, _ = readChat(c, in) }
	for _, tc := range []struct {
		name             string
		events           []wraptest.Event
		cut, hold        int
		read             func(c openai.Client, in *otelitl.Instrumentation)
		httpitl, wrapper string
	}{
		{"cut after the finish reason", []wraptest.Event{chatEvents[2], finishChunk("stop"), usageChunk, done}, 2, 0, readAll, itlconv.ErrorTypeIncompleteStream, ""},
		{"closed at the finish reason", []wraptest.Event{chatEvents[2], finishChunk("stop"), usageChunk, done}, 0, 2, stopAtFinish, itlconv.ErrorTypeCancelled, ""},
		{"[DONE] without a finish reason", []wraptest.Event{chatEvents[2], usageChunk, done}, 0, 0, readAll, "", itlconv.ErrorTypeIncompleteStream},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The application closes the stream at the finish reason before the rest is sent: the
			// server holds it until the client has gone.
			srv := wraptest.NewServer(t, tc.events, 5*time.Millisecond)
			srv.Cut, srv.Hold = tc.cut, tc.hold

			in, exp := wraptest.Tracing(t)
			hc := &http.Client{Transport: httpitl.NewTransport(http.DefaultTransport, httpitl.WithInstrumentation(in))}
			tc.read(openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test"), option.WithMaxRetries(0), option.WithHTTPClient(hc)), nil)
			_, a := wraptest.OneSpan(t, exp)
			viaTransport := a[semconv.ErrorTypeKey].AsString()

			in, exp = wraptest.Tracing(t)
			tc.read(client(srv), in)
			_, a = wraptest.OneSpan(t, exp)
			if wrapped := a[semconv.ErrorTypeKey].AsString(); viaTransport != tc.httpitl || wrapped != tc.wrapper {
				t.Errorf("httpitl recorded error.type %q, openaiitl %q; the documented difference is %q and %q", viaTransport, wrapped, tc.httpitl, tc.wrapper)
			}
		})
	}
}
