package openaiitl_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/itlconv"
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

// TestResponseErrorEventLikeHTTPITL: an error in a Responses API stream gets the error.type
// httpitl's transport records when openai-go reads the same bytes through it, and the one the span
// contract gives it: an error event (type "error") its code, from the event or from its error
// object as OpenAI sends it, else "stream_error"; an event with an error member ({"error": {...}},
// which openai-go returns as an *ssestream.StreamError) is named as in a Chat Completions stream,
// for each event of wraptest.ChatErrorEvents; a response.failed its error's code, else
// "response_failed". The wrapper recorded "response_failed" for an error event without a code,
// "stream_error" for every error member, and a code written as a number as openai-go decodes it
// (1e3 as "1000"). (httpitl named an error member by its code alone, took an error that is no
// object, and an error event's nested error, for none, and named a failed response whose code is
// no code "stream_error": TestResponsesErrorLikeChat and TestResponseFailedCodeIsACode there.)
func TestResponseErrorEventLikeHTTPITL(t *testing.T) {
	free := "Invalid prompt: " + strings.Repeat("the prompt you sent ", 3)
	type tc struct{ name, data, want string }
	cases := []tc{
		{"error event, a code", `{"type":"error","code":"rate_limit_exceeded","message":"m","param":null,"sequence_number":2}`, "rate_limit_exceeded"},
		{"error event, null code", `{"type":"error","code":null,"message":"m","param":null,"sequence_number":2}`, itlconv.ErrorTypeStreamError},
		{"error event, no code", `{"type":"error","message":"m","sequence_number":2}`, itlconv.ErrorTypeStreamError},
		{"error event, numeric code", `{"type":"error","code":429,"message":"m","sequence_number":2}`, "429"},
		{"error event, code 1e3", `{"type":"error","code":1e3,"message":"m","sequence_number":2}`, "1e3"},
		{"error event, free-text code", `{"type":"error","code":"` + free + `","message":"m","sequence_number":2}`, itlconv.ErrorTypeStreamError},
		// What OpenAI sends (openai/openai-dotnet#881): the error nested, as in Chat Completions.
		{"error event, nested error", `{"type":"error","sequence_number":2,"error":{"type":"too_many_requests","code":"too_many_requests","message":"Too Many Requests","param":null}}`, "too_many_requests"},
		{"error event, nested error with a null code", `{"type":"error","sequence_number":2,"error":{"type":"server_error","code":null,"message":"m","param":null}}`, "server_error"},
		{"error event, nested error that is no object", `{"type":"error","sequence_number":2,"error":"Too Many Requests"}`, itlconv.ErrorTypeStreamError},
		{"failed, a code", `{"type":"response.failed","sequence_number":2,"response":{"id":"resp_2","object":"response","status":"failed","output":[],"error":{"code":"server_error","message":"boom"}}}`, "server_error"},
		{"failed, numeric code", `{"type":"response.failed","sequence_number":2,"response":{"id":"resp_2","object":"response","status":"failed","output":[],"error":{"code":500,"message":"boom"}}}`, "500"},
		{"failed, code 1e3", `{"type":"response.failed","sequence_number":2,"response":{"id":"resp_2","object":"response","status":"failed","output":[],"error":{"code":1e3,"message":"boom"}}}`, "1e3"},
		{"failed, null code", `{"type":"response.failed","sequence_number":2,"response":{"id":"resp_2","object":"response","status":"failed","output":[],"error":{"code":null,"message":"boom"}}}`, itlconv.ErrorTypeResponseFailed},
		{"failed, free-text code", `{"type":"response.failed","sequence_number":2,"response":{"id":"resp_2","object":"response","status":"failed","output":[],"error":{"code":"` + free + `","message":"boom"}}}`, itlconv.ErrorTypeResponseFailed},
	}
	for _, ev := range wraptest.ChatErrorEvents() {
		cases = append(cases, tc{"error member, " + ev.Name, ev.Data, ev.Want})
	}
	delta := resp("response.output_text.delta", `,"item_id":"i","output_index":0,"content_index":0,"delta":"Hi"`)
	params := responses.ResponseNewParams{Model: "gpt-4.1"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := wraptest.NewServer(t, []wraptest.Event{delta, {Data: tc.data}}, time.Millisecond)

			in, exp := wraptest.Tracing(t)
			hc := &http.Client{Transport: httpitl.NewTransport(http.DefaultTransport, httpitl.WithInstrumentation(in))}
			c := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test"), option.WithMaxRetries(0), option.WithHTTPClient(hc))
			plainN, plainErr := drain[responses.ResponseStreamEventUnion](c.Responses.NewStreaming(context.Background(), params))
			_, a := wraptest.OneSpan(t, exp)
			viaTransport := a[semconv.ErrorTypeKey].AsString()

			in, exp = wraptest.Tracing(t)
			c = client(srv)
			n, err := drain[responses.ResponseStreamEventUnion](openaiitl.NewResponseStreaming(context.Background(), in, &c.Responses, params))
			if n != plainN || fmt.Sprint(err) != fmt.Sprint(plainErr) {
				t.Errorf("the application sees %d events and error %v, the SDK alone %d and %v", n, err, plainN, plainErr)
			}
			_, a = wraptest.OneSpan(t, exp)
			wrapped := a[semconv.ErrorTypeKey].AsString()

			if viaTransport != tc.want {
				t.Errorf("httpitl recorded error.type %q, want %q", viaTransport, tc.want)
			}
			if wrapped != tc.want {
				t.Errorf("openaiitl recorded error.type %q, want %q (httpitl %q)", wrapped, tc.want, viaTransport)
			}
		})
	}
}
