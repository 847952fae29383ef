package openaiitl_test

import (
	"testing"
	"time"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/itlconv"
)

// TestUndecodableEvent: an event openai-go cannot decode (data that is not JSON, JSON cut short)
// ends the stream with the SDK's decoding error, and the reply is cut off there for the
// application: the span says "incomplete_stream", as httpitl says of a Bedrock chunk the SDKs
// cannot decode. The wrapper recorded the error's Go type, "*json.SyntaxError", which names the
// library that read the stream, not what happened to the reply. (httpitl's transport, which cannot
// tell an SSE event the SDK failed on from one it read, sees the SDK close the body: "cancelled".)
// After the finish reason the reply is complete, as for a connection cut there.
func TestUndecodableEvent(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []wraptest.Event
		want   string
	}{
		{"JSON cut short", []wraptest.Event{chatEvents[2], {Data: `{"id":"chatcmpl-7",`}, chatEvents[3], finishChunk("stop"), done}, itlconv.ErrorTypeIncompleteStream},
		{"not JSON", []wraptest.Event{chatEvents[2], {Data: `not json`}, chatEvents[3], finishChunk("stop"), done}, itlconv.ErrorTypeIncompleteStream},
		{"after the finish reason", []wraptest.Event{chatEvents[2], finishChunk("stop"), {Data: `not json`}, done}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wraptest.NewServer(t, tc.events, time.Millisecond)
			viaTransport, wrapped := bothWays(t, srv, readChat)
			if wrapped != tc.want {
				t.Errorf("openaiitl recorded error.type %q, want %q (httpitl %q)", wrapped, tc.want, viaTransport)
			}
		})
	}
}
