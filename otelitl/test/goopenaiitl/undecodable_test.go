package goopenaiitl_test

import (
	"strings"
	"testing"
	"time"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/itlconv"
)

// TestUndecodableEvent: an event go-openai cannot decode (data that is not JSON, JSON cut short),
// and a run of more keep-alive lines than go-openai takes between two events (300 by default:
// Recv fails with ErrTooManyEmptyStreamMessages), end the stream with the SDK's error for an
// application that stops there, and the reply is cut off for it: the span says
// "incomplete_stream", as httpitl says of a Bedrock chunk the SDKs cannot decode. The wrapper
// recorded the error's Go type ("*json.SyntaxError", "*errors.errorString"), which names the
// library that read the stream, not what happened to the reply. (httpitl's transport, which cannot
// tell an event the SDK failed on from one it read, sees the application close the body:
// "cancelled".)
func TestUndecodableEvent(t *testing.T) {
	keepAlives := events[2]
	keepAlives.Data += "\n\n" + strings.Repeat(": keep-alive\n", 301)
	for _, tc := range []struct {
		name   string
		events []wraptest.Event
	}{
		{"JSON cut short", []wraptest.Event{events[2], {Data: `{"id":"chatcmpl-9",`}, events[3], finish("stop"), {Data: `[DONE]`}}},
		{"not JSON", []wraptest.Event{events[2], {Data: `not json`}, events[3], finish("stop"), {Data: `[DONE]`}}},
		{"too many keep-alives", []wraptest.Event{keepAlives, events[3], finish("stop"), {Data: `[DONE]`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wraptest.NewServer(t, tc.events, time.Millisecond)
			viaTransport, wrapped := errorTypes(t, srv)
			if wrapped != itlconv.ErrorTypeIncompleteStream {
				t.Errorf("goopenaiitl recorded error.type %q, want %s (httpitl %q)", wrapped, itlconv.ErrorTypeIncompleteStream, viaTransport)
			}
		})
	}
}
