package goopenaiitl_test

import (
	"testing"
	"time"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/itlconv"
)

// TestErrorAfterFinishLikeHTTPITL: an error event after a choice's finish_reason, before [DONE],
// names the generation, as httpitl's transport names it for the same bytes: go-openai's Recv
// returns the error to the application. An event go-openai cannot decode is "stream_error" there
// too, as before the finish reason. The wrapper took the finish_reason for the reply's end and
// recorded no error after it.
func TestErrorAfterFinishLikeHTTPITL(t *testing.T) {
	overloaded := wraptest.Event{Data: `{"error":{"message":"The server is overloaded","type":"server_error","param":null,"code":"overloaded"}}`}
	for _, tc := range []struct {
		name             string
		events           []wraptest.Event
		httpitl, wrapper string
	}{
		{"after the finish reason", []wraptest.Event{finish("stop"), overloaded, {Data: `[DONE]`}}, "overloaded", "overloaded"},
		{"after the usage", []wraptest.Event{finish("stop"), events[7], overloaded}, "overloaded", "overloaded"},
		{"one go-openai cannot decode", []wraptest.Event{finish("stop"), {Data: `{"error":"The server is overloaded"}`}}, itlconv.ErrorTypeStreamError, itlconv.ErrorTypeStreamError},
		// go-openai hides the name (the package doc): the wrapper still records an error.
		{"one without a message", []wraptest.Event{finish("stop"), {Data: `{"error":{"type":"server_error","code":"overloaded"}}`}}, "overloaded", itlconv.ErrorTypeStreamError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wraptest.NewServer(t, append([]wraptest.Event{events[2]}, tc.events...), time.Millisecond)
			viaTransport, wrapped := errorTypes(t, srv)
			if viaTransport != tc.httpitl || wrapped != tc.wrapper {
				t.Errorf("httpitl recorded error.type %q, the wrapper %q; want %q and %q", viaTransport, wrapped, tc.httpitl, tc.wrapper)
			}
		})
	}
}
