package anthropicitl_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl/anthropicitl"
	"github.com/otelitl/itl/otelitl/httpitl"
)

// errorTypes reads the server's stream with anthropic-sdk-go twice, through httpitl's transport
// and through the wrapper, checks that the application sees the same from both, and returns the
// error.type each recorded, for the server at url. The application closes the stream, as it should.
func errorTypes(t *testing.T, url string) (viaTransport, wrapped string) {
	t.Helper()
	a, b := spanAttrs(t, url)
	return a["error.type"], b["error.type"]
}

// spanAttrs is errorTypes with every attribute each span recorded, as text.
func spanAttrs(t *testing.T, url string) (viaTransport, wrapped map[string]string) {
	t.Helper()
	in, exp := wraptest.Tracing(t)
	hc := &http.Client{Transport: httpitl.NewTransport(http.DefaultTransport, httpitl.WithInstrumentation(in))}
	plain := anthropic.NewClient(option.WithBaseURL(url), option.WithAPIKey("test"), option.WithMaxRetries(0), option.WithHTTPClient(hc))
	s := plain.Messages.NewStreaming(context.Background(), params)
	plainN, plainErr := drain(s)
	_ = s.Close()
	viaTransport = attrsOf(t, exp)

	in, exp = wraptest.Tracing(t)
	c := anthropic.NewClient(option.WithBaseURL(url), option.WithAPIKey("test"), option.WithMaxRetries(0))
	s = anthropicitl.NewStreaming(context.Background(), in, &c.Messages, params)
	n, err := drain(s)
	_ = s.Close()
	if n != plainN || fmt.Sprint(err) != fmt.Sprint(plainErr) {
		t.Errorf("through the wrapper the application sees %d events and error %v, through the SDK alone %d and %v", n, err, plainN, plainErr)
	}
	return viaTransport, attrsOf(t, exp)
}

func errorEvent(typ string) wraptest.Event {
	return ev("error", `{"type":"error","error":{"type":"`+typ+`","message":"m"}}`, false)
}

// TestErrorAfterMessageStopLikeHTTPITL: an error event after message_stop names the generation, as
// httpitl's transport names it for the same bytes: anthropic-sdk-go reads on after message_stop and
// hands the application the error. Of two error events the first names it, as in httpitl. The
// wrapper took message_stop for the reply's end and recorded no error after it, and named the last
// of two error events read together.
func TestErrorAfterMessageStopLikeHTTPITL(t *testing.T) {
	// Two events in one write, so that the wrapper's body reads them together.
	both := errorEvent("overloaded_error")
	both.Data += "\n\nevent: error\ndata: " + errorEvent("api_error").Data
	for _, tc := range []struct {
		name   string
		events []wraptest.Event
		want   string
	}{
		{"an error event after message_stop", append(append([]wraptest.Event{}, events...), errorEvent("overloaded_error")), "overloaded_error"},
		{"an error event after message_delta", append(append([]wraptest.Event{}, events[:len(events)-1]...), errorEvent("overloaded_error")), "overloaded_error"},
		{"two error events", append(append([]wraptest.Event{}, events[:7]...), both), "overloaded_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wraptest.NewServer(t, tc.events, time.Millisecond)
			viaTransport, wrapped := errorTypes(t, srv.URL)
			if viaTransport != tc.want {
				t.Errorf("httpitl recorded error.type %q, want %q", viaTransport, tc.want)
			}
			if wrapped != tc.want {
				t.Errorf("anthropicitl recorded error.type %q, want %q (httpitl %q)", wrapped, tc.want, viaTransport)
			}
		})
	}
}

// TestErrorTypeNumberLikeHTTPITL: an error event whose error type is written as a number is named
// by it, as httpitl reads an error's type (a code: a string, or a number as written), whatever its
// message. The wrapper could not decode the event and took it for none: the stream, which the SDK
// ended at the error, was "incomplete_stream".
func TestErrorTypeNumberLikeHTTPITL(t *testing.T) {
	for _, data := range []string{
		`{"type":"error","error":{"type":529,"message":"m"}}`,
		`{"type":"error","error":{"type":529,"message":{"text":"m"}}}`, // nor does a message that is no string hide it
	} {
		srv := wraptest.NewServer(t, append(append([]wraptest.Event{}, events[:7]...), ev("error", data, false)), time.Millisecond)
		viaTransport, wrapped := errorTypes(t, srv.URL)
		if viaTransport != "529" || wrapped != "529" {
			t.Errorf("%s: httpitl recorded error.type %q, anthropicitl %q; want 529", data, viaTransport, wrapped)
		}
	}
}
