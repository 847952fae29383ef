package httpitl_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/otelitl/itl/otelitl/httpitl"
)

// TestAttackHostileValuesBounded: what a request or an upstream sends that becomes an attribute
// (the model in the request body or a Gemini URL, the response's id and model, finish reasons, an
// error code) is bounded and valid UTF-8 on the span, its name included, whatever its size.
func TestAttackHostileValuesBounded(t *testing.T) {
	long := strings.Repeat("é", 200_000) // 400 KB
	reasons := strings.Repeat(`{"index":0,"delta":{},"finish_reason":"`+strings.Repeat("r", 1000)+`"},`, 500)
	for _, tc := range []struct{ name, path, body, stream string }{
		{"body model of 1000 bytes", "/v1/chat/completions", `{"model":"` + strings.Repeat("m", 1000) + `","stream":true}`, stopDone},
		{"body model with invalid UTF-8", "/v1/chat/completions", "{\"model\":\"a\xff\xfeb\",\"stream\":true}", stopDone},
		{"response id, model and reasons", "/v1/chat/completions", chatReq,
			`data: {"id":"` + long + `","model":"` + long + "\xff" + `","choices":[` + reasons + `{"index":1,"delta":{"content":"a"},"finish_reason":"` + long + `"}]}` + "\n\n" + stopDone},
		{"error code", "/v1/chat/completions", chatReq, `data: {"error":{"code":"` + long + `","message":"x"}}` + "\n\n"},
		{"event name", "/v1/messages", `{"model":"c","stream":true}`, "event: " + long + "\ndata: {\"type\":\"message_stop\"}\n\n"},
		{"Gemini URL model", "/v1beta/models/" + strings.Repeat("g", 100_000) + ":streamGenerateContent?alt=sse", `{}`,
			`data: {"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"STOP"}]}` + "\n\n"},
		{"Gemini URL model with invalid UTF-8", "/v1beta/models/g%FF%FE:streamGenerateContent?alt=sse", `{}`,
			`data: {"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"STOP"}]}` + "\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serveRaw(t, "text/event-stream", tc.stream)
			c, exp := tracedOver(t, &http.Transport{})
			defer c.CloseIdleConnections()
			if _, got, err := post(context.Background(), t, c, srv.URL+tc.path, tc.body); err != nil || string(got) != tc.stream {
				t.Fatalf("the caller got %d bytes, %v", len(got), err)
			}
			s := waitSpans(t, exp, 1)[0]
			// 256 bytes for a value (itlconv.MaxValueLength), and the operation's name before the
			// model in the span's name.
			checkBounded(t, s, 256+len("generate_content "))
			if n := len(attrsOf(s)["gen_ai.response.finish_reasons"].AsStringSlice()); n > 128 {
				t.Errorf("%d finish reasons", n)
			}
		})
	}
}

// TestAttackHandlerHostileURL: a client of a server behind NewHandler chooses the Gemini URL's
// model: a long one, or one that is not UTF-8, must not reach the SERVER span unbounded.
func TestAttackHandlerHostileURL(t *testing.T) {
	tp, exp := serverTracing(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprint(w, `data: {"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"STOP"}]}`+"\n\n")
	})
	srv := httptest.NewServer(httpitl.NewHandler(h, httpitl.WithTracerProvider(tp)))
	defer srv.Close()
	for _, model := range []string{strings.Repeat("g", 500_000), "g%FF%C3"} {
		exp.Reset()
		res, err := http.Post(srv.URL+"/v1beta/models/"+model+":streamGenerateContent?alt=sse", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		checkBounded(t, waitSpans(t, exp, 1)[0], 256+len("generate_content "))
	}
}
