package goopenaiitl_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl/goopenaiitl"
	"github.com/otelitl/itl/otelitl/httpitl"
)

// errorTypes reads the stream the server sends with go-openai twice, through httpitl's transport
// and through the wrapper, and returns the error.type each recorded. The wrapper's Recv must fail
// as the SDK's does.
func errorTypes(t *testing.T, srv *wraptest.Server) (viaTransport, wrapped string) {
	t.Helper()
	req := openai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}
	cfg := openai.DefaultConfig("test")
	cfg.BaseURL = srv.URL + "/v1"

	in, exp := wraptest.Tracing(t)
	withTransport := cfg
	withTransport.HTTPClient = &http.Client{Transport: httpitl.NewTransport(http.DefaultTransport, httpitl.WithInstrumentation(in))}
	plain, err := openai.NewClientWithConfig(withTransport).CreateChatCompletionStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	_, plainErr := recvAll(plain.Recv)
	_ = plain.Close()
	_, a := wraptest.OneSpan(t, exp)
	viaTransport = a["error.type"].AsString()

	in, exp = wraptest.Tracing(t)
	s, err := goopenaiitl.CreateChatCompletionStream(context.Background(), in, openai.NewClientWithConfig(cfg), req, goopenaiitl.WithBaseURL(cfg.BaseURL))
	if err != nil {
		t.Fatal(err)
	}
	_, err = recvAll(s.Recv)
	_ = s.Close()
	if err.Error() != plainErr.Error() {
		t.Errorf("Recv returned %v, the SDK alone %v", err, plainErr)
	}
	_, a = wraptest.OneSpan(t, exp)
	return viaTransport, a["error.type"].AsString()
}

// TestStreamErrorEventLikeHTTPITL: an error the server sends in the stream gets the error.type
// httpitl's transport records when go-openai reads the same bytes through it, for each event of
// wraptest.ChatErrorEvents (a code, only a type, neither, a code too long or free text, an error
// that is no object). The wrapper recorded "stream_error" for the errors go-openai decodes, and
// the Go type of the SDK's error ("*json.SyntaxError") for those it does not.
func TestStreamErrorEventLikeHTTPITL(t *testing.T) {
	for _, ev := range wraptest.ChatErrorEvents() {
		t.Run(ev.Name, func(t *testing.T) {
			srv := wraptest.NewServer(t, []wraptest.Event{events[2], {Data: ev.Data}}, time.Millisecond)
			viaTransport, wrapped := errorTypes(t, srv)
			if viaTransport != ev.Want {
				t.Errorf("httpitl recorded error.type %q, want %q", viaTransport, ev.Want)
			}
			if wrapped != viaTransport {
				t.Errorf("goopenaiitl recorded error.type %q, httpitl %q for the same stream", wrapped, viaTransport)
			}
		})
	}
}

// TestStreamErrorEventSDKLimits: the error events whose name go-openai does not give the
// application, which the wrapper therefore names otherwise than httpitl (the package doc lists
// them). A go-openai that starts giving them fails this test: the wrapper should then use them.
func TestStreamErrorEventSDKLimits(t *testing.T) {
	for _, tc := range []struct {
		name, data       string
		before           string // raw SSE lines sent before the error event
		httpitl, wrapper string
	}{
		// APIError.UnmarshalJSON fails without a string message, or with a type that is no string:
		// Recv returns a decoding error.
		{name: "no message", data: `{"error":{"type":"server_error","code":"overloaded"}}`, httpitl: "overloaded", wrapper: itlconv.ErrorTypeStreamError},
		{name: "numeric type", data: `{"error":{"message":"m","type":5}}`, httpitl: "5", wrapper: itlconv.ErrorTypeStreamError},
		// APIError has no status member.
		{name: "only a status", data: `{"error":{"message":"m","status":"UNAVAILABLE"}}`, httpitl: "UNAVAILABLE", wrapper: itlconv.ErrorTypeStreamError},
		// The SDK decodes "code": null as the integer 0, so a code of 0 reads as none.
		{name: "code 0", data: `{"error":{"message":"m","type":"server_error","code":0}}`, httpitl: "0", wrapper: "server_error"},
		// A number that is no int reaches the SDK's APIError as a float64, not as written.
		{name: "code 1e3", data: `{"error":{"message":"m","code":1e3}}`, httpitl: "1e3", wrapper: "1000"},
		// The SDK decodes the error event together with every line before it that is not a data
		// line (a keep-alive comment here): the decoding fails.
		{name: "after a comment", before: ": keep-alive\n\n", data: `{"error":{"message":"m","type":"server_error","code":"overloaded"}}`, httpitl: "overloaded", wrapper: itlconv.ErrorTypeStreamError},
		// The SDK takes an error event for one only when "{\"error\":" begins its data: this one
		// reaches the application as an empty response, and the stream ends without a finish reason.
		{name: "space before error", data: `{ "error":{"message":"m","type":"server_error"}}`, httpitl: "server_error", wrapper: itlconv.ErrorTypeIncompleteStream},
		// vLLM's older error event is a response of its own ({"object":"error",...}): go-openai gives
		// it to the application as a response without choices, its code and type dropped (the
		// response has no field for them and the SDK keeps no raw JSON).
		{name: "vLLM's object error", data: `{"object":"error","message":"m","type":"BadRequestError","param":null,"code":400}`, httpitl: "400", wrapper: itlconv.ErrorTypeIncompleteStream},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := events[2]
			if tc.before != "" {
				// The server writes "data: " ahead of Data and a blank line after it.
				first.Data += "\n\n" + strings.TrimSuffix(tc.before, "\n\n")
			}
			srv := wraptest.NewServer(t, []wraptest.Event{first, {Data: tc.data}}, time.Millisecond)
			viaTransport, wrapped := errorTypes(t, srv)
			if viaTransport != tc.httpitl || wrapped != tc.wrapper {
				t.Errorf("httpitl recorded error.type %q, the wrapper %q; want %q and %q", viaTransport, wrapped, tc.httpitl, tc.wrapper)
			}
		})
	}
}
