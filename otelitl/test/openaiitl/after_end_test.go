package openaiitl_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/httpitl"
	"github.com/otelitl/itl/otelitl/openaiitl"
)

// bothWays reads the server's stream with openai-go twice, through httpitl's transport and through
// the wrapper (read is the application's loop, given a client, and an Instrumentation for the
// wrapper or nil for the SDK alone), checks that the application sees the same from both, and
// returns the error.type each recorded.
func bothWays(t *testing.T, srv *wraptest.Server, read func(c openai.Client, in *otelitl.Instrumentation) (int, error)) (viaTransport, wrapped string) {
	t.Helper()
	a, b := spansBothWays(t, srv, read)
	return a[semconv.ErrorTypeKey].AsString(), b[semconv.ErrorTypeKey].AsString()
}

// spansBothWays is bothWays returning the attributes of each one's span.
func spansBothWays(t *testing.T, srv *wraptest.Server, read func(c openai.Client, in *otelitl.Instrumentation) (int, error)) (viaTransport, wrapped map[attribute.Key]attribute.Value) {
	t.Helper()
	in, exp := wraptest.Tracing(t)
	hc := &http.Client{Transport: httpitl.NewTransport(http.DefaultTransport, httpitl.WithInstrumentation(in))}
	plainN, plainErr := read(openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test"), option.WithMaxRetries(0), option.WithHTTPClient(hc)), nil)
	_, viaTransport = wraptest.OneSpan(t, exp)

	in, exp = wraptest.Tracing(t)
	n, err := read(client(srv), in)
	if n != plainN || fmt.Sprint(err) != fmt.Sprint(plainErr) {
		t.Errorf("through the wrapper the application sees %d events and error %v, through the SDK alone %d and %v", n, err, plainN, plainErr)
	}
	_, wrapped = wraptest.OneSpan(t, exp)
	return viaTransport, wrapped
}

func readChat(c openai.Client, in *otelitl.Instrumentation) (int, error) {
	if in == nil {
		return drain[openai.ChatCompletionChunk](c.Chat.Completions.NewStreaming(context.Background(), chatParams))
	}
	return drain[openai.ChatCompletionChunk](openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, chatParams))
}

func readResponses(c openai.Client, in *otelitl.Instrumentation) (int, error) {
	params := responses.ResponseNewParams{Model: "gpt-4.1"}
	if in == nil {
		return drain[responses.ResponseStreamEventUnion](c.Responses.NewStreaming(context.Background(), params))
	}
	return drain[responses.ResponseStreamEventUnion](openaiitl.NewResponseStreaming(context.Background(), in, &c.Responses, params))
}

var (
	overloaded = wraptest.Event{Data: `{"error":{"message":"The server is overloaded","type":"server_error","param":null,"code":"overloaded"}}`}
	vllmError  = wraptest.Event{Data: `{"object":"error","message":"m","type":"BadRequestError","param":null,"code":400}`}
	done       = wraptest.Event{Data: `[DONE]`}
)

// TestChatErrorAfterFinishLikeHTTPITL: an error the server sends after a choice's finish_reason,
// before [DONE], names the generation, as httpitl's transport names it for the same bytes: the
// provider reported a failure, and openai-go gives the application its error (an error member) or
// the error chunk (vLLM's). The first error names it, whatever follows. The wrapper took the
// finish_reason for the reply's end and recorded no error after it, and named the last of two
// errors (an error member after a vLLM error chunk), where httpitl names the first.
func TestChatErrorAfterFinishLikeHTTPITL(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []wraptest.Event
		want   string
	}{
		{"an error member after the finish reason", []wraptest.Event{finishChunk("stop"), overloaded, done}, "overloaded"},
		{"an error member after the usage", []wraptest.Event{finishChunk("stop"), usageChunk, overloaded}, "overloaded"},
		{"vLLM's error chunk after the finish reason", []wraptest.Event{finishChunk("stop"), vllmError, done}, "400"},
		{"an error member after vLLM's error chunk", []wraptest.Event{vllmError, overloaded, done}, "400"},
		{"an error member after vLLM's error chunk and a finish reason", []wraptest.Event{vllmError, finishChunk("stop"), overloaded}, "400"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wraptest.NewServer(t, append([]wraptest.Event{chatEvents[2]}, tc.events...), time.Millisecond)
			viaTransport, wrapped := bothWays(t, srv, readChat)
			if viaTransport != tc.want {
				t.Errorf("httpitl recorded error.type %q, want %q", viaTransport, tc.want)
			}
			if wrapped != tc.want {
				t.Errorf("openaiitl recorded error.type %q, want %q (httpitl %q)", wrapped, tc.want, viaTransport)
			}
		})
	}
}

// TestChatErrorAfterDoneIgnored: what a server sends after [DONE] is no part of the reply: openai-go
// (as go-openai and OpenAI's Python SDK) ends the stream at [DONE] and reads no further, so no
// instrumentation records it. httpitl read on and named an error event after [DONE] when it read
// the bytes (a client reading to the end of the body, the proxy, the handler; under openai-go,
// when the event came in the same read as [DONE]), where the wrapper, and the application, never
// saw it.
func TestChatErrorAfterDoneIgnored(t *testing.T) {
	events := []wraptest.Event{chatEvents[2], finishChunk("stop"), done, overloaded, chatEvents[3], {Data: `{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":99,"total_tokens":110}}`}}
	srv := wraptest.NewServer(t, events, time.Millisecond)

	// httpitl read to the end of the body: the reply ended at [DONE].
	in, exp := wraptest.Tracing(t)
	hc := &http.Client{Transport: httpitl.NewTransport(http.DefaultTransport, httpitl.WithInstrumentation(in))}
	res, err := hc.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	_, a := wraptest.OneSpan(t, exp)
	if got := a[semconv.ErrorTypeKey].AsString(); got != "" {
		t.Errorf("httpitl read to the end recorded error.type %q, want none: the error came after [DONE]", got)
	}
	if got := a[itlconv.ChunkCountKey].AsInt64(); got != 1 {
		t.Errorf("httpitl read to the end recorded %d chunks, want 1: the second came after [DONE]", got)
	}
	if _, ok := a[semconv.GenAIUsageOutputTokensKey]; ok {
		t.Errorf("httpitl read to the end recorded output tokens %v from a usage chunk after [DONE]", a[semconv.GenAIUsageOutputTokensKey])
	}

	viaTransport, wrapped := bothWays(t, srv, readChat)
	if viaTransport != "" || wrapped != "" {
		t.Errorf("httpitl recorded error.type %q, openaiitl %q; want none", viaTransport, wrapped)
	}
}

// TestResponseErrorAfterEndLikeHTTPITL: an error in a Responses API stream after
// response.completed or response.incomplete names the generation, as httpitl names it for the same
// bytes (openai-go gives the application the error event, or its error for an error member); of two
// errors the first names it, as in httpitl. The wrapper recorded no error after the end, and named
// the last of two errors (a response.failed after an error event, an error member after either).
func TestResponseErrorAfterEndLikeHTTPITL(t *testing.T) {
	delta := resp("response.output_text.delta", `,"item_id":"i","output_index":0,"content_index":0,"delta":"Hi"`)
	completed := resp("response.completed", `,"response":{"id":"resp_1","object":"response","created_at":1,"model":"gpt-4.1","status":"completed","output":[]}`)
	incomplete := resp("response.incomplete", `,"response":{"id":"resp_1","object":"response","created_at":1,"model":"gpt-4.1","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}`)
	errorEvent := wraptest.Event{Name: "error", Data: `{"type":"error","code":"rate_limit_exceeded","message":"m","param":null,"sequence_number":3}`}
	failed := resp("response.failed", `,"response":{"id":"resp_1","object":"response","status":"failed","output":[],"error":{"code":"server_error","message":"boom"}}`)
	member := wraptest.Event{Data: `{"error":{"message":"m","type":"server_error","code":"overloaded"}}`}
	for _, tc := range []struct {
		name   string
		events []wraptest.Event
		want   string
	}{
		{"an error event after response.completed", []wraptest.Event{completed, errorEvent}, "rate_limit_exceeded"},
		{"an error event after response.incomplete", []wraptest.Event{incomplete, errorEvent}, "rate_limit_exceeded"},
		{"an error member after response.completed", []wraptest.Event{completed, member}, "overloaded"},
		{"response.failed after an error event", []wraptest.Event{errorEvent, failed}, "rate_limit_exceeded"},
		{"an error member after response.failed", []wraptest.Event{failed, member}, "server_error"},
		{"response.completed after an error event", []wraptest.Event{errorEvent, completed}, "rate_limit_exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wraptest.NewServer(t, append([]wraptest.Event{delta}, tc.events...), time.Millisecond)
			viaTransport, wrapped := bothWays(t, srv, readResponses)
			if viaTransport != tc.want {
				t.Errorf("httpitl recorded error.type %q, want %q", viaTransport, tc.want)
			}
			if wrapped != tc.want {
				t.Errorf("openaiitl recorded error.type %q, want %q (httpitl %q)", wrapped, tc.want, viaTransport)
			}
		})
	}
}

// TestChatObjectErrorThenCancel: an application that reads vLLM's error chunk, then cancels its
// call and stops reading, closing nothing, leaves the error's name, as httpitl's transport does
// for the same bytes (its context callback ends the generation with the error event it read). The
// wrapper kept the error chunk out of the generation's end and recorded "cancelled".
func TestChatObjectErrorThenCancel(t *testing.T) {
	srv := wraptest.NewServer(t, []wraptest.Event{chatEvents[2], vllmError, chatEvents[3], finishChunk("stop"), done}, 20*time.Millisecond)
	readToError := func(c openai.Client, in *otelitl.Instrumentation) context.CancelFunc {
		ctx, cancel := context.WithCancel(context.Background())
		var s interface {
			Next() bool
			Current() openai.ChatCompletionChunk
		}
		if in == nil {
			s = c.Chat.Completions.NewStreaming(ctx, chatParams)
		} else {
			s = openaiitl.NewChatStreaming(ctx, in, &c.Chat.Completions, chatParams)
		}
		for s.Next() && s.Current().Object != "error" {
		}
		return cancel
	}

	in, exp := wraptest.Tracing(t)
	hc := &http.Client{Transport: httpitl.NewTransport(http.DefaultTransport, httpitl.WithInstrumentation(in))}
	cancel := readToError(openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test"), option.WithMaxRetries(0), option.WithHTTPClient(hc)), nil)
	cancel()
	if !wraptest.WaitSpan(exp) {
		t.Fatal("httpitl: no span a second after the context was cancelled")
	}
	_, a := wraptest.OneSpan(t, exp)
	viaTransport := a[semconv.ErrorTypeKey].AsString()

	in, exp = wraptest.Tracing(t)
	cancel = readToError(client(srv), in)
	cancel()
	if !wraptest.WaitSpan(exp) {
		t.Fatal("openaiitl: no span a second after the context was cancelled")
	}
	_, a = wraptest.OneSpan(t, exp)
	if wrapped := a[semconv.ErrorTypeKey].AsString(); viaTransport != "400" || wrapped != "400" {
		t.Errorf("httpitl recorded error.type %q, openaiitl %q; want 400", viaTransport, wrapped)
	}
}
