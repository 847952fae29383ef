package anthropicitl_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/otelitl/itl/itlconv"
)

// rawServer answers every request with body as an SSE stream, written as it is.
func rawServer(t *testing.T, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// sse writes events as a server does: "event:" and "data:" lines, a blank line after each.
func sse(n int) string {
	var b strings.Builder
	for _, e := range events[:n] {
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", e.Name, e.Data)
	}
	return b.String()
}

// TestEventsAsTheSDKReadsThem: the wrapper reads the stream's events as anthropic-sdk-go (and
// httpitl) read them, by the SSE rules: an event counts once the blank line after it dispatches it,
// and its data lines are joined. A body that ends after message_stop's data line, before the blank
// line that would dispatch it, never gave the application message_stop (the SDK drops an event
// not dispatched at the end of the body): the reply was cut off, "incomplete_stream", as httpitl
// names it. An event whose JSON is split over two data lines is one event: an error event so sent
// names the generation. The wrapper read each data line as an event of its own as soon as its line
// ended: it took the undispatched message_stop for the reply's end (no error), and read the split
// error event as two halves of no JSON (no error, "incomplete_stream").
func TestEventsAsTheSDKReadsThem(t *testing.T) {
	stop := events[len(events)-1]
	for _, tc := range []struct {
		name, body, want string
	}{
		{"message_stop not dispatched", sse(len(events)-1) + "event: message_stop\ndata: " + stop.Data + "\n", itlconv.ErrorTypeIncompleteStream},
		{"message_stop's line not ended", sse(len(events)-1) + "event: message_stop\ndata: " + stop.Data, itlconv.ErrorTypeIncompleteStream},
		{"an error event on two data lines", sse(7) + "event: error\ndata: {\"type\":\"error\",\ndata: \"error\":{\"type\":\"overloaded_error\",\"message\":\"m\"}}\n\n", "overloaded_error"},
		{"whole", sse(len(events)), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			viaTransport, wrapped := errorTypes(t, rawServer(t, tc.body))
			if viaTransport != tc.want {
				t.Errorf("httpitl recorded error.type %q, want %q", viaTransport, tc.want)
			}
			if wrapped != tc.want {
				t.Errorf("anthropicitl recorded error.type %q, want %q (httpitl %q)", wrapped, tc.want, viaTransport)
			}
		})
	}
}

// unnamed writes events as sse does, leaving out the event: line of those named in drop.
func unnamed(drop ...string) string {
	var b strings.Builder
	for _, e := range events {
		if slices.Contains(drop, e.Name) {
			fmt.Fprintf(&b, "data: %s\n\n", e.Data)
			continue
		}
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", e.Name, e.Data)
	}
	return b.String()
}

// TestUnnamedEventsAsTheSDKReadsThem: anthropic-sdk-go passes over an SSE event without an
// event: line, whatever its data says (as Anthropic's Python and TypeScript SDKs do), so the
// application sees none of it: the transport and the wrapper record none of it either. Unnamed
// deltas are no chunks; an unnamed message_stop does not end the reply (incomplete_stream); an
// unnamed error event names nothing. Both counted the deltas' chunks, and the wrapper took an
// unnamed error for the generation's.
func TestUnnamedEventsAsTheSDKReadsThem(t *testing.T) {
	errEvent := "data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"m\"}}\n\n"
	for _, tc := range []struct {
		name, body    string
		chunks, error string
	}{
		{"named", sse(len(events)), "4", ""},
		{"unnamed deltas", unnamed("content_block_delta"), "0", ""},
		{"an unnamed message_stop", unnamed("message_stop"), "4", itlconv.ErrorTypeIncompleteStream},
		{"an unnamed error event", sse(len(events)-1) + errEvent + "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", "4", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			viaTransport, wrapped := spanAttrs(t, rawServer(t, tc.body))
			for _, got := range []struct {
				by string
				a  map[string]string
			}{{"httpitl", viaTransport}, {"anthropicitl", wrapped}} {
				if got.a["otelitl.chunk.count"] != tc.chunks || got.a["error.type"] != tc.error {
					t.Errorf("%s recorded %s chunks and error.type %q, want %s and %q", got.by, got.a["otelitl.chunk.count"], got.a["error.type"], tc.chunks, tc.error)
				}
			}
		})
	}
}
