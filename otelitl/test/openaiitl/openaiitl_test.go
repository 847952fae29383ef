package openaiitl_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl/openaiitl"
)

const gap = 15 * time.Millisecond

func chunk(delta string) string {
	return `{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}`
}

var chatEvents = []wraptest.Event{
	{Data: chunk(`{"role":"assistant","content":""}`)}, // role only
	{Data: chunk(`{"reasoning_content":"think"}`), Content: true},
	{Data: chunk(`{"content":"Hel"}`), Content: true},
	{Data: chunk(`{"content":"lo"}`), Content: true},
	{Data: chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}`)}, // name only
	{Data: chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]}`), Content: true},
	{Data: chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}`), Content: true},
	{Data: `{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`},
	{Data: `{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":9,"total_tokens":20}}`},
	{Data: `[DONE]`},
}

func client(srv *wraptest.Server) openai.Client {
	return openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test"), option.WithMaxRetries(0))
}

var chatParams = openai.ChatCompletionNewParams{
	Model:    "gpt-4o",
	Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
}

func TestChatStreaming(t *testing.T) {
	srv := wraptest.NewServer(t, chatEvents, gap)
	in, exp := wraptest.Tracing(t)
	c := client(srv)

	stream := openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, chatParams)
	var text string
	for stream.Next() {
		for _, ch := range stream.Current().Choices {
			text += ch.Delta.Content
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if text != "Hello" {
		t.Errorf("the wrapped stream changed the content: %q", text)
	}
	_ = stream.Close()

	span, a := wraptest.OneSpan(t, exp)
	wraptest.CheckTimeline(t, span, a, srv.Sent(), wraptest.Busy())
	host, port := srv.HostPort()
	for k, want := range map[string]string{
		"gen_ai.provider.name":           "openai",
		"gen_ai.request.model":           "gpt-4o",
		"gen_ai.response.model":          "gpt-4o-2024-08-06",
		"gen_ai.response.id":             "chatcmpl-7",
		"gen_ai.response.finish_reasons": `["tool_calls"]`,
		"gen_ai.usage.input_tokens":      "11",
		"gen_ai.usage.output_tokens":     "9",
		"server.address":                 host,
	} {
		if got := a[attrKey(k)].String(); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if got := a[semconv.ServerPortKey].AsInt64(); int(got) != port {
		t.Errorf("server.port %d, want %d", got, port)
	}
	if span.Status.Code == codes.Error {
		t.Errorf("a finished stream must not be an error: %v", span.Status)
	}
}

func TestChatCloseEarly(t *testing.T) {
	srv := wraptest.NewServer(t, chatEvents, gap)
	in, exp := wraptest.Tracing(t)
	c := client(srv)
	stream := openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, chatParams)
	for i := 0; i < 3 && stream.Next(); i++ {
	}
	_ = stream.Close()
	_ = stream.Close()
	_, a := wraptest.OneSpan(t, exp)
	if got := a[itlconv.ChunkCountKey].AsInt64(); got != 2 {
		t.Errorf("chunk.count %d after reading role, reasoning and one text chunk; want 2", got)
	}
	if got := a[semconv.ErrorTypeKey].AsString(); got != "cancelled" {
		t.Errorf("error.type %q, want cancelled", got)
	}
}

func TestChatAPIError(t *testing.T) {
	srv := wraptest.NewServer(t, nil, 0)
	srv.Status = http.StatusTooManyRequests
	srv.Body = `{"error":{"message":"slow down","type":"rate_limit_error","code":"rate_limit_exceeded"}}`
	in, exp := wraptest.Tracing(t)
	c := client(srv)
	stream := openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, chatParams)
	for stream.Next() {
		t.Fatal("an error response yields no chunk")
	}
	if stream.Err() == nil {
		t.Fatal("want the API error")
	}
	span, a := wraptest.OneSpan(t, exp)
	if got := a[semconv.ErrorTypeKey].AsString(); got != "429" {
		t.Errorf("error.type %q, want 429", got)
	}
	if span.Status.Code != codes.Error || a[itlconv.ChunkCountKey].AsInt64() != 0 {
		t.Errorf("status %v, chunk.count %v", span.Status, a[itlconv.ChunkCountKey])
	}
}

func TestChatErrorMidStream(t *testing.T) {
	events := append(append([]wraptest.Event{}, chatEvents[:4]...), wraptest.Event{Data: `{"error":{"message":"overloaded","type":"server_error"}}`})
	srv := wraptest.NewServer(t, events, gap)
	in, exp := wraptest.Tracing(t)
	c := client(srv)
	stream := openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, chatParams)
	for stream.Next() {
	}
	if stream.Err() == nil {
		t.Fatal("want the stream error")
	}
	_, a := wraptest.OneSpan(t, exp)
	if got := a[semconv.ErrorTypeKey].AsString(); got != "server_error" {
		t.Errorf("error.type %q, want the error's type, server_error", got)
	}
	if got := a[itlconv.ChunkCountKey].AsInt64(); got != 3 {
		t.Errorf("the chunks before the error must count: %d, want 3", got)
	}
}

func resp(typ, rest string) wraptest.Event {
	return wraptest.Event{Name: typ, Data: `{"type":"` + typ + `","sequence_number":1` + rest + `}`}
}

func TestResponseStreaming(t *testing.T) {
	response := `"response":{"id":"resp_1","object":"response","created_at":1,"model":"gpt-4.1-2025","status":"%s","output":[]%s}`
	delta := func(typ, d string) wraptest.Event {
		e := resp(typ, `,"item_id":"i","output_index":0,"content_index":0,"delta":"`+d+`"`)
		e.Content = d != ""
		return e
	}
	events := []wraptest.Event{
		resp("response.created", ","+sprintf(response, "in_progress", "")),
		resp("response.output_item.added", `,"output_index":0,"item":{"type":"message","id":"i","role":"assistant","status":"in_progress","content":[]}`),
		delta("response.reasoning_summary_text.delta", "hmm"),
		delta("response.output_text.delta", "Hi"),
		delta("response.output_text.delta", ""),
		delta("response.output_text.delta", " there"),
		delta("response.function_call_arguments.delta", "{}"),
		resp("response.completed", ","+sprintf(response, "completed", `,"usage":{"input_tokens":5,"input_tokens_details":{"cached_tokens":0},"output_tokens":4,"output_tokens_details":{"reasoning_tokens":1},"total_tokens":9}`)),
	}
	srv := wraptest.NewServer(t, events, gap)
	in, exp := wraptest.Tracing(t)
	c := client(srv)
	stream := openaiitl.NewResponseStreaming(context.Background(), in, &c.Responses, responses.ResponseNewParams{Model: "gpt-4.1", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
	n := 0
	for stream.Next() {
		n++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(events) {
		t.Errorf("read %d events, want %d", n, len(events))
	}
	span, a := wraptest.OneSpan(t, exp)
	wraptest.CheckTimeline(t, span, a, srv.Sent(), wraptest.Busy())
	for k, want := range map[string]string{
		"gen_ai.request.model":           "gpt-4.1",
		"gen_ai.response.model":          "gpt-4.1-2025",
		"gen_ai.response.id":             "resp_1",
		"gen_ai.response.finish_reasons": `["stop"]`,
		"gen_ai.usage.input_tokens":      "5",
		"gen_ai.usage.output_tokens":     "4",
	} {
		if got := a[attrKey(k)].String(); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

func TestResponseFailed(t *testing.T) {
	events := []wraptest.Event{
		resp("response.output_text.delta", `,"item_id":"i","output_index":0,"content_index":0,"delta":"Hi"`),
		resp("response.failed", `,"response":{"id":"resp_2","object":"response","created_at":1,"model":"gpt-4.1","status":"failed","output":[],"error":{"code":"server_error","message":"boom"}}`),
	}
	srv := wraptest.NewServer(t, events, gap)
	in, exp := wraptest.Tracing(t)
	c := client(srv)
	stream := openaiitl.NewResponseStreaming(context.Background(), in, &c.Responses, responses.ResponseNewParams{Model: "gpt-4.1"})
	for stream.Next() {
	}
	span, a := wraptest.OneSpan(t, exp)
	if got := a[semconv.ErrorTypeKey].AsString(); got != "server_error" || span.Status.Code != codes.Error {
		t.Errorf("error.type %q status %v, want server_error and an error status", got, span.Status)
	}
	if a[itlconv.ChunkCountKey].AsInt64() != 1 {
		t.Errorf("chunk.count %v, want 1", a[itlconv.ChunkCountKey])
	}
}

// drain reads a stream to its end and returns what the application sees: the events' count and
// the error.
func drain[T any](s interface {
	Next() bool
	Current() T
	Err() error
}) (int, error) {
	n := 0
	for s.Next() {
		n++
	}
	return n, s.Err()
}

func finishChunk(reason string) wraptest.Event {
	return wraptest.Event{Data: `{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`}
}

var usageChunk = wraptest.Event{Data: `{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":2,"total_tokens":13}}`}

// TestChatIncompleteStream: a Chat Completions stream that ends cleanly before any finish_reason was
// cut off: the span says incomplete_stream, while the application sees what the SDK alone gives.
func TestChatIncompleteStream(t *testing.T) {
	content := []wraptest.Event{chatEvents[0], chatEvents[2], chatEvents[3]}
	for _, tc := range []struct {
		name   string
		events []wraptest.Event
		want   string // error.type; "" for a success
	}{
		{"cut off", content, itlconv.ErrorTypeIncompleteStream},
		// Usage is no end marker (some servers send it with every chunk), and the SDK ends at [DONE]
		// as it ends at the end of the body.
		{"usage and [DONE] without finish_reason", append(content[:3:3], usageChunk, wraptest.Event{Data: `[DONE]`}), itlconv.ErrorTypeIncompleteStream},
		{"finish_reason without [DONE]", append(content[:3:3], finishChunk("stop")), ""},
		{"finish_reason and [DONE]", append(content[:3:3], finishChunk("length"), usageChunk, wraptest.Event{Data: `[DONE]`}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wraptest.NewServer(t, tc.events, time.Millisecond)
			c := client(srv)
			plainN, plainErr := drain[openai.ChatCompletionChunk](c.Chat.Completions.NewStreaming(context.Background(), chatParams))

			in, exp := wraptest.Tracing(t)
			n, err := drain[openai.ChatCompletionChunk](openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, chatParams))
			if n != plainN || err != plainErr {
				t.Errorf("the application sees %d events and error %v, the SDK alone %d and %v", n, err, plainN, plainErr)
			}
			span, a := wraptest.OneSpan(t, exp)
			got := a[semconv.ErrorTypeKey]
			if got.AsString() != tc.want || (tc.want != "") != (span.Status.Code == codes.Error) {
				t.Errorf("error.type %q status %v, want %q", got.AsString(), span.Status, tc.want)
			}
			if a[itlconv.ChunkCountKey].AsInt64() != 2 {
				t.Errorf("chunk.count %v, want the 2 received", a[itlconv.ChunkCountKey].String())
			}
		})
	}
}

// TestResponseIncompleteStream: a Responses API stream that ends cleanly before response.completed,
// response.incomplete or response.failed was cut off.
func TestResponseIncompleteStream(t *testing.T) {
	d := resp("response.output_text.delta", `,"item_id":"i","output_index":0,"content_index":0,"delta":"Hi"`)
	d.Content = true
	response := `,"response":{"id":"resp_1","object":"response","created_at":1,"model":"gpt-4.1","status":"%s","output":[]%s}`
	for _, tc := range []struct {
		name   string
		events []wraptest.Event
		want   string
	}{
		{"cut off", []wraptest.Event{resp("response.created", sprintf(response, "in_progress", "")), d, d}, itlconv.ErrorTypeIncompleteStream},
		{"completed", []wraptest.Event{d, resp("response.completed", sprintf(response, "completed", ""))}, ""},
		{"incomplete", []wraptest.Event{d, resp("response.incomplete", sprintf(response, "incomplete", `,"incomplete_details":{"reason":"max_output_tokens"}`))}, ""},
		{"failed", []wraptest.Event{d, resp("response.failed", sprintf(response, "failed", `,"error":{"code":"server_error","message":"boom"}`))}, "server_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wraptest.NewServer(t, tc.events, time.Millisecond)
			c := client(srv)
			params := responses.ResponseNewParams{Model: "gpt-4.1"}
			plainN, plainErr := drain[responses.ResponseStreamEventUnion](c.Responses.NewStreaming(context.Background(), params))

			in, exp := wraptest.Tracing(t)
			n, err := drain[responses.ResponseStreamEventUnion](openaiitl.NewResponseStreaming(context.Background(), in, &c.Responses, params))
			if n != plainN || err != plainErr {
				t.Errorf("the application sees %d events and error %v, the SDK alone %d and %v", n, err, plainN, plainErr)
			}
			span, a := wraptest.OneSpan(t, exp)
			if got := a[semconv.ErrorTypeKey].AsString(); got != tc.want || (tc.want != "") != (span.Status.Code == codes.Error) {
				t.Errorf("error.type %q status %v, want %q", got, span.Status, tc.want)
			}
		})
	}
}

// TestResponseErrorCodeIsACode: an error event's code that is no code (prose a proxy put there)
// does not become the error.type: a failed response is then "response_failed", an error event
// "stream_error".
func TestResponseErrorCodeIsACode(t *testing.T) {
	for _, tc := range []struct{ event, code, want string }{
		{"response.failed", "rate_limit_exceeded", "rate_limit_exceeded"},
		{"response.failed", "", "response_failed"},
		{"response.failed", "Your request mentioned something", "response_failed"},
		{"", "", "response_failed"},
		{"error", "rate_limit_exceeded", "rate_limit_exceeded"},
		{"error", "", "stream_error"},
		{"error", "Your request mentioned something", "stream_error"},
	} {
		if got := (&openaiitl.ResponseError{Code: tc.code, Message: "m", Event: tc.event}).ErrorType(); got != tc.want {
			t.Errorf("event %q, code %q: error type %q, want %q", tc.event, tc.code, got, tc.want)
		}
	}
}

// TestNilInstrumentation: without an Instrumentation the wrapper returns the SDK's stream as is.
func TestNilInstrumentation(t *testing.T) {
	srv := wraptest.NewServer(t, chatEvents, time.Millisecond)
	c := client(srv)
	n, err := drain[openai.ChatCompletionChunk](openaiitl.NewChatStreaming(context.Background(), nil, &c.Chat.Completions, chatParams))
	if n != len(chatEvents)-1 || err != nil {
		t.Errorf("read %d events, error %v", n, err)
	}
}

// TestCancelAbandoned: an application that cancels the call and stops reading, without Close,
// still gets its span (before, the generation stayed open and nothing was exported).
func TestCancelAbandoned(t *testing.T) {
	srv := wraptest.NewServer(t, chatEvents, gap)
	in, exp := wraptest.Tracing(t)
	c := client(srv)
	ctx, cancel := context.WithCancel(context.Background())
	stream := openaiitl.NewChatStreaming(ctx, in, &c.Chat.Completions, chatParams)
	for i := 0; i < 3 && stream.Next(); i++ {
	}
	wraptest.CheckCancelAbandoned(t, exp, cancel)
}

// TestConnectionCut: a connection dropped mid-reply is named incomplete_stream, as httpitl names
// it, not by the transport error's Go type (*net.OpError, unexpected EOF).
func TestConnectionCut(t *testing.T) {
	srv := wraptest.NewServer(t, chatEvents, gap)
	srv.Cut = 4
	in, exp := wraptest.Tracing(t)
	c := client(srv)
	stream := openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, chatParams)
	for stream.Next() {
	}
	if stream.Err() == nil {
		t.Fatal("want the stream's error")
	}
	_, a := wraptest.OneSpan(t, exp)
	if got := a[semconv.ErrorTypeKey].AsString(); got != itlconv.ErrorTypeIncompleteStream {
		t.Errorf("error.type %q, want %s", got, itlconv.ErrorTypeIncompleteStream)
	}
}

// TestAPIErrorThenCancel: an application that checks stream.Err() and returns, its deferred cancel
// running, records the API error, not "cancelled".
func TestAPIErrorThenCancel(t *testing.T) {
	srv := wraptest.NewServer(t, nil, 0)
	srv.Status = http.StatusTooManyRequests
	srv.Body = `{"error":{"message":"slow down","type":"rate_limit_error","code":"rate_limit_exceeded"}}`
	in, exp := wraptest.Tracing(t)
	c := client(srv)
	ctx, cancel := context.WithCancel(context.Background())
	stream := openaiitl.NewChatStreaming(ctx, in, &c.Chat.Completions, chatParams)
	if stream.Err() == nil {
		t.Fatal("want the API error")
	}
	cancel()
	time.Sleep(20 * time.Millisecond) // room for a context callback to end the span as cancelled
	_, a := wraptest.OneSpan(t, exp)
	if got := a[semconv.ErrorTypeKey].AsString(); got != "429" {
		t.Errorf("error.type %q, want 429", got)
	}
}

// TestFinishedThenCut: a reply whose finish_reason arrived is complete: a connection cut, or a
// context cancelled, before the application reads the end does not make it a failure, however the
// two race (httpitl has it so after [DONE], its end marker: TestChatEndMarkerDiffers).
func TestFinishedThenCut(t *testing.T) {
	const finish = 7 // chatEvents[7] carries the finish_reason
	t.Run("cut", func(t *testing.T) {
		srv := wraptest.NewServer(t, chatEvents, gap)
		srv.Cut = finish + 1
		in, exp := wraptest.Tracing(t)
		c := client(srv)
		stream := openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, chatParams)
		for stream.Next() {
		}
		span, a := wraptest.OneSpan(t, exp)
		if got := a[semconv.ErrorTypeKey].AsString(); got != "" || span.Status.Code == codes.Error {
			t.Errorf("error.type %q, status %v; want a complete reply", got, span.Status)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		for range 20 {
			srv := wraptest.NewServer(t, chatEvents, 0)
			in, exp := wraptest.Tracing(t)
			c := client(srv)
			ctx, cancel := context.WithCancel(context.Background())
			stream := openaiitl.NewChatStreaming(ctx, in, &c.Chat.Completions, chatParams)
			for i := 0; i <= finish && stream.Next(); i++ {
			}
			cancel()
			for stream.Next() {
			}
			wraptest.WaitSpan(exp)
			span, a := wraptest.OneSpan(t, exp)
			if got := a[semconv.ErrorTypeKey].AsString(); got != "" || span.Status.Code == codes.Error {
				t.Fatalf("error.type %q, status %v; want a complete reply", got, span.Status)
			}
		}
	})
}

// TestCloseDuringNext: Close while another goroutine is in Next (a cancellation path) reads
// nothing Next writes: run under -race. One span, cancelled.
func TestCloseDuringNext(t *testing.T) {
	srv := wraptest.NewServer(t, chatEvents, gap)
	in, exp := wraptest.Tracing(t)
	c := client(srv)
	stream := openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, chatParams)
	read := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; stream.Next(); i++ {
			if i == 1 {
				close(read)
			}
		}
	}()
	<-read
	_ = stream.Close()
	<-done
	wraptest.WaitSpan(exp)
	if _, a := wraptest.OneSpan(t, exp); a[semconv.ErrorTypeKey].AsString() != "cancelled" {
		t.Errorf("error.type %q, want cancelled", a[semconv.ErrorTypeKey].AsString())
	}
}
