package openaiitl_test

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	"github.com/otelitl/itl/otelitl"
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

// TestChatObjectErrorLikeHTTPITL: vLLM's older in-stream error, an event that is itself the error
// ({"object":"error",...}), which openai-go passes on as an ordinary chunk, gets the error.type
// httpitl's transport records for the same bytes: its code, else its type, when that is a code,
// else "stream_error", whatever follows ([DONE], the end of the body, more chunks). The
// application still gets the chunk from the SDK. The wrapper took it for no error and recorded
// "incomplete_stream", or nothing when a finish reason followed.
func TestChatObjectErrorLikeHTTPITL(t *testing.T) {
	vllm := `{"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}`
	done := wraptest.Event{Data: `[DONE]`}
	for _, tc := range []struct {
		name   string
		events []wraptest.Event
		want   string
	}{
		{"vLLM, then [DONE]", []wraptest.Event{{Data: vllm}, done}, "400"},
		{"vLLM, then the end of the body", []wraptest.Event{{Data: vllm}}, "400"},
		{"then a finish reason", []wraptest.Event{{Data: vllm}, finishChunk("stop"), done}, "400"},
		{"null code", []wraptest.Event{{Data: `{"object":"error","message":"m","type":"BadRequestError","param":null,"code":null}`}, done}, "BadRequestError"},
		{"string code", []wraptest.Event{{Data: `{"object":"error","message":"m","type":"BadRequestError","code":"context_length_exceeded"}`}, done}, "context_length_exceeded"},
		{"code 1e3", []wraptest.Event{{Data: `{"object":"error","message":"m","code":1e3}`}, done}, "1e3"},
		{"neither", []wraptest.Event{{Data: `{"object":"error","message":"m"}`}, done}, itlconv.ErrorTypeStreamError},
		{"free-text type", []wraptest.Event{{Data: `{"object":"error","message":"m","type":"Invalid prompt: the prompt you sent"}`}, done}, itlconv.ErrorTypeStreamError},
		{"two errors", []wraptest.Event{{Data: vllm}, {Data: `{"object":"error","message":"m","type":"InternalServerError","code":500}`}, done}, "400"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wraptest.NewServer(t, append([]wraptest.Event{chatEvents[2]}, tc.events...), time.Millisecond)

			in, exp := wraptest.Tracing(t)
			hc := &http.Client{Transport: httpitl.NewTransport(http.DefaultTransport, httpitl.WithInstrumentation(in))}
			c := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test"), option.WithMaxRetries(0), option.WithHTTPClient(hc))
			plainN, plainErr := drain[openai.ChatCompletionChunk](c.Chat.Completions.NewStreaming(context.Background(), chatParams))
			_, a := wraptest.OneSpan(t, exp)
			viaTransport := a[semconv.ErrorTypeKey].AsString()

			in, exp = wraptest.Tracing(t)
			c = client(srv)
			n, err := drain[openai.ChatCompletionChunk](openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, chatParams))
			if n != plainN || err != nil || plainErr != nil {
				t.Errorf("the application sees %d chunks and error %v, the SDK alone %d and %v; want no error", n, err, plainN, plainErr)
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

// TestChatObjectErrorThenClose: an application that stops at vLLM's error chunk and closes the
// stream leaves the error's name, not "cancelled", as httpitl's transport does for the same bytes.
func TestChatObjectErrorThenClose(t *testing.T) {
	vllm := `{"object":"error","message":"m","type":"BadRequestError","param":null,"code":400}`
	srv := wraptest.NewServer(t, []wraptest.Event{chatEvents[2], {Data: vllm}, chatEvents[3], {Data: `[DONE]`}}, 20*time.Millisecond)
	readToError := func(s *ssestream.Stream[openai.ChatCompletionChunk]) {
		for s.Next() {
			if s.Current().Object == "error" {
				break
			}
		}
		_ = s.Close()
	}

	in, exp := wraptest.Tracing(t)
	hc := &http.Client{Transport: httpitl.NewTransport(http.DefaultTransport, httpitl.WithInstrumentation(in))}
	c := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test"), option.WithMaxRetries(0), option.WithHTTPClient(hc))
	readToError(c.Chat.Completions.NewStreaming(context.Background(), chatParams))
	_, a := wraptest.OneSpan(t, exp)
	viaTransport := a[semconv.ErrorTypeKey].AsString()

	in, exp = wraptest.Tracing(t)
	c = client(srv)
	readToError(openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, chatParams))
	_, a = wraptest.OneSpan(t, exp)
	if wrapped := a[semconv.ErrorTypeKey].AsString(); viaTransport != "400" || wrapped != "400" {
		t.Errorf("httpitl recorded error.type %q, openaiitl %q; want 400", viaTransport, wrapped)
	}
}

// TestErrorNullEndsSDKStream pins a documented difference (httpitl's package doc, and openaiitl's
// Errors section): an event with "error": null, or with an error in an event of a type that names
// no error (a Responses delta), is no error to httpitl, which reads on to the end of the reply, but
// openai-go ends the stream at it (its Next returns false, its Err an *ssestream.StreamError) and
// closes the body. The wrapper records that failure ("stream_error" for a null error, else the
// error's name); httpitl's transport under openai-go sees the body closed before the end,
// "cancelled".
func TestErrorNullEndsSDKStream(t *testing.T) {
	delta := resp("response.output_text.delta", `,"item_id":"i","output_index":0,"content_index":0,"delta":"Hi"`)
	completed := resp("response.completed", `,"response":{"id":"resp_1","object":"response","created_at":1,"model":"gpt-4.1","status":"completed","output":[]}`)
	params := responses.ResponseNewParams{Model: "gpt-4.1"}
	readResponses := func(c openai.Client) (int, error) {
		return drain[responses.ResponseStreamEventUnion](c.Responses.NewStreaming(context.Background(), params))
	}
	wrapResponses := func(in *otelitl.Instrumentation, c openai.Client) (int, error) {
		return drain[responses.ResponseStreamEventUnion](openaiitl.NewResponseStreaming(context.Background(), in, &c.Responses, params))
	}
	for _, tc := range []struct {
		name    string
		path    string
		events  []wraptest.Event
		read    func(c openai.Client) (int, error)
		wrap    func(in *otelitl.Instrumentation, c openai.Client) (int, error)
		wrapped string // the wrapper's error.type
	}{
		{
			name: "chat", path: "chat/completions",
			events: []wraptest.Event{chatEvents[2], {Data: `{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}],"error":null}`}, chatEvents[3], finishChunk("stop"), {Data: `[DONE]`}},
			read: func(c openai.Client) (int, error) {
				return drain[openai.ChatCompletionChunk](c.Chat.Completions.NewStreaming(context.Background(), chatParams))
			},
			wrap: func(in *otelitl.Instrumentation, c openai.Client) (int, error) {
				return drain[openai.ChatCompletionChunk](openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, chatParams))
			},
			wrapped: itlconv.ErrorTypeStreamError,
		},
		{
			name: "responses", path: "responses",
			events: []wraptest.Event{delta, {Name: "response.output_text.delta", Data: `{"type":"response.output_text.delta","sequence_number":2,"item_id":"i","output_index":0,"content_index":0,"delta":" there","error":null}`}, delta, completed},
			read:   readResponses, wrap: wrapResponses,
			wrapped: itlconv.ErrorTypeStreamError,
		},
		{
			name: "responses, an error in a delta", path: "responses",
			events: []wraptest.Event{delta, {Name: "response.output_text.delta", Data: `{"type":"response.output_text.delta","sequence_number":2,"item_id":"i","output_index":0,"content_index":0,"delta":" there","error":{"code":"server_error","message":"m"}}`}, delta, completed},
			read:   readResponses, wrap: wrapResponses,
			wrapped: "server_error",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A gap long enough that openai-go closes the body before the server has sent the rest.
			srv := wraptest.NewServer(t, tc.events, 20*time.Millisecond)

			// What the application sees from openai-go alone: the stream ends at the event.
			n, err := tc.read(client(srv))
			var sErr *ssestream.StreamError
			if n != 1 || !errors.As(err, &sErr) {
				t.Fatalf("openai-go gave %d events and %v, want 1 and its StreamError", n, err)
			}

			// httpitl itself takes the event for no error: read to the end, the reply is whole.
			in, exp := wraptest.Tracing(t)
			hc := &http.Client{Transport: httpitl.NewTransport(http.DefaultTransport, httpitl.WithInstrumentation(in))}
			res, err := hc.Post(srv.URL+"/v1/"+tc.path, "application/json", strings.NewReader(`{"model":"m","stream":true}`))
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
			if _, a := wraptest.OneSpan(t, exp); a[semconv.ErrorTypeKey].AsString() != "" {
				t.Errorf("httpitl read to the end recorded error.type %q, want none", a[semconv.ErrorTypeKey].AsString())
			}

			// Under openai-go, which closes the body at the event.
			in, exp = wraptest.Tracing(t)
			hc = &http.Client{Transport: httpitl.NewTransport(http.DefaultTransport, httpitl.WithInstrumentation(in))}
			_, _ = tc.read(openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test"), option.WithMaxRetries(0), option.WithHTTPClient(hc)))
			_, a := wraptest.OneSpan(t, exp)
			viaTransport := a[semconv.ErrorTypeKey].AsString()

			in, exp = wraptest.Tracing(t)
			n, err = tc.wrap(in, client(srv))
			if n != 1 || !errors.As(err, &sErr) {
				t.Errorf("through the wrapper openai-go gave %d events and %v, want 1 and its StreamError", n, err)
			}
			_, a = wraptest.OneSpan(t, exp)
			wrapped := a[semconv.ErrorTypeKey].AsString()

			if viaTransport != itlconv.ErrorTypeCancelled || wrapped != tc.wrapped {
				t.Errorf("httpitl's transport recorded error.type %q, openaiitl %q; the documented difference is %q and %q",
					viaTransport, wrapped, itlconv.ErrorTypeCancelled, tc.wrapped)
			}
		})
	}
}
