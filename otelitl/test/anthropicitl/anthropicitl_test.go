package anthropicitl_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/anthropicitl"
)

const gap = 15 * time.Millisecond

func ev(name, data string, content bool) wraptest.Event {
	return wraptest.Event{Name: name, Data: data, Content: content}
}

func delta(typ, field, v string) wraptest.Event {
	return ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"`+typ+`","`+field+`":"`+v+`"}}`, v != "" && typ != "signature_delta")
}

var events = []wraptest.Event{
	ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}`, false),
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`, false),
	delta("thinking_delta", "thinking", "Let me"),
	delta("signature_delta", "signature", "EqQBCg"),
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`, false),
	ev("ping", `{"type":"ping"}`, false),
	delta("text_delta", "text", "Hello"),
	delta("text_delta", "text", ""),
	delta("text_delta", "text", " world"),
	delta("input_json_delta", "partial_json", `{\"a\": 1}`),
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`, false),
	ev("message_stop", `{"type":"message_stop"}`, false),
}

func newClient(srv *wraptest.Server, tp *sdktrace.TracerProvider) anthropic.Client {
	return anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0), option.WithTracerProvider(tp))
}

var params = anthropic.MessageNewParams{
	Model:     "claude-sonnet-4-5",
	MaxTokens: 100,
	Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
}

func setup(t *testing.T, evs []wraptest.Event) (*wraptest.Server, *otelitl.Instrumentation, *tracetest.InMemoryExporter, anthropic.Client) {
	srv := wraptest.NewServer(t, evs, gap)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	// The SDK's client spans go to the same provider: the test proves the wrapper leaves one span.
	return srv, otelitl.New(otelitl.WithTracerProvider(tp)), exp, newClient(srv, tp)
}

func TestStreaming(t *testing.T) {
	prev := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(prev) })

	srv, in, exp, c := setup(t, events)
	stream := anthropicitl.NewStreaming(context.Background(), in, &c.Messages, params)
	var text string
	for stream.Next() {
		if d := stream.Current(); d.Type == "content_block_delta" {
			text += d.Delta.Text
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	_ = stream.Close()
	if text != "Hello world" {
		t.Errorf("the wrapped stream changed the content: %q", text)
	}

	span, a := wraptest.OneSpan(t, exp) // the SDK's own span is off for this call
	wraptest.CheckTimeline(t, span, a, srv.Sent(), wraptest.Busy())
	host, _ := srv.HostPort()
	for k, want := range map[attribute.Key]string{
		"gen_ai.provider.name":           "anthropic",
		"gen_ai.request.model":           "claude-sonnet-4-5",
		"gen_ai.response.model":          "claude-sonnet-4-5-20250929",
		"gen_ai.response.id":             "msg_1",
		"gen_ai.response.finish_reasons": `["end_turn"]`,
		"gen_ai.usage.input_tokens":      "25",
		"gen_ai.usage.output_tokens":     "15",
		"server.address":                 host,
	} {
		if got := a[k].String(); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if span.Status.Code == codes.Error {
		t.Errorf("status %v", span.Status)
	}
	tp := srv.Headers()[0].Get("traceparent")
	if !strings.Contains(tp, span.SpanContext.TraceID().String()) {
		t.Errorf("traceparent %q does not carry the generation's trace %s", tp, span.SpanContext.TraceID())
	}
}

func TestCloseEarly(t *testing.T) {
	_, in, exp, c := setup(t, events)
	stream := anthropicitl.NewStreaming(context.Background(), in, &c.Messages, params)
	for i := 0; i < 3 && stream.Next(); i++ { // message_start, block start, thinking
	}
	_ = stream.Close()
	_, a := wraptest.OneSpan(t, exp)
	if got := a["error.type"].AsString(); got != "cancelled" {
		t.Errorf("error.type %q, want cancelled", got)
	}
	if got := a[itlconv.ChunkCountKey].AsInt64(); got < 1 {
		t.Errorf("chunk.count %d, want the thinking chunk at least", got)
	}
	checkPlaceholderUsage(t, a)
}

func TestAPIError(t *testing.T) {
	srv, in, exp, c := setup(t, nil)
	srv.Status = 529
	srv.Body = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	stream := anthropicitl.NewStreaming(context.Background(), in, &c.Messages, params)
	for stream.Next() {
		t.Fatal("no event expected")
	}
	if stream.Err() == nil {
		t.Fatal("want the API error")
	}
	span, a := wraptest.OneSpan(t, exp)
	if got := a["error.type"].AsString(); got != "529" || span.Status.Code != codes.Error {
		t.Errorf("error.type %q status %v, want 529 and an error", got, span.Status)
	}
}

func TestErrorEventMidStream(t *testing.T) {
	evs := append(append([]wraptest.Event{}, events[:7]...), ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, false))
	_, in, exp, c := setup(t, evs)
	stream := anthropicitl.NewStreaming(context.Background(), in, &c.Messages, params)
	for stream.Next() {
	}
	if stream.Err() == nil {
		t.Fatal("want the stream error")
	}
	_ = stream.Close()
	_, a := wraptest.OneSpan(t, exp)
	if got := a["error.type"].AsString(); got != "overloaded_error" {
		t.Errorf("error.type %q, want overloaded_error", got)
	}
	if got := a[itlconv.ChunkCountKey].AsInt64(); got != 2 {
		t.Errorf("chunk.count %d, want 2 (thinking and one text delta)", got)
	}
	checkPlaceholderUsage(t, a)
}

// checkPlaceholderUsage: a stream that ended before message_delta keeps message_start's input
// tokens and records no output count: message_start's output_tokens (1) is a placeholder, which
// gen_ai.usage.output_tokens would give as the provider's count for a reply of several chunks.
func checkPlaceholderUsage(t *testing.T, a map[attribute.Key]attribute.Value) {
	t.Helper()
	if got := a["gen_ai.usage.input_tokens"].AsInt64(); got != 25 {
		t.Errorf("gen_ai.usage.input_tokens %d, want message_start's 25", got)
	}
	if v, ok := a["gen_ai.usage.output_tokens"]; ok {
		t.Errorf("gen_ai.usage.output_tokens %d, want none: message_start's is a placeholder", v.AsInt64())
	}
}

// drain reads a stream to its end and returns what the application sees.
func drain(s *ssestream.Stream[anthropic.MessageStreamEventUnion]) (int, error) {
	n := 0
	for s.Next() {
		n++
	}
	return n, s.Err()
}

// TestBodyEndsBeforeMessageStop: a body that ends cleanly before message_stop was cut off: the span
// says incomplete_stream, while the application sees what the SDK alone gives.
func TestBodyEndsBeforeMessageStop(t *testing.T) {
	srv, in, exp, c := setup(t, events[:8])
	plain := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	plainN, plainErr := drain(plain.Messages.NewStreaming(context.Background(), params))

	n, err := drain(anthropicitl.NewStreaming(context.Background(), in, &c.Messages, params))
	if n != plainN || err != plainErr {
		t.Errorf("the application sees %d events and %v, the SDK alone %d and %v", n, err, plainN, plainErr)
	}
	_, a := wraptest.OneSpan(t, exp)
	if got := a["error.type"].AsString(); got != itlconv.ErrorTypeIncompleteStream {
		t.Errorf("error.type %q, want %s", got, itlconv.ErrorTypeIncompleteStream)
	}
}

// TestErrorEventTypeIsACode: an error event whose type is no error code (prose a proxy put there) is
// named stream_error.
func TestErrorEventTypeIsACode(t *testing.T) {
	for typ, want := range map[string]string{
		"overloaded_error":                  "overloaded_error",
		"":                                  "stream_error",
		"the prompt you sent was too long.": "stream_error",
	} {
		if got := (&anthropicitl.StreamError{Type: typ, Message: "m"}).ErrorType(); got != want {
			t.Errorf("type %q: error type %q, want %q", typ, got, want)
		}
	}
}

// TestCancelAbandoned: an application that cancels the call and stops reading, without Close,
// still gets its span (before, the generation stayed open and nothing was exported).
func TestCancelAbandoned(t *testing.T) {
	_, in, exp, c := setup(t, events)
	ctx, cancel := context.WithCancel(context.Background())
	stream := anthropicitl.NewStreaming(ctx, in, &c.Messages, params)
	for i := 0; i < 3 && stream.Next(); i++ {
	}
	wraptest.CheckCancelAbandoned(t, exp, cancel)
}

// TestConnectionCut: a connection dropped mid-reply is named incomplete_stream, as httpitl names
// it, not by the transport error's Go type.
func TestConnectionCut(t *testing.T) {
	srv, in, exp, c := setup(t, events)
	srv.Cut = 7
	stream := anthropicitl.NewStreaming(context.Background(), in, &c.Messages, params)
	for stream.Next() {
	}
	if stream.Err() == nil {
		t.Fatal("want the stream's error")
	}
	_ = stream.Close()
	_, a := wraptest.OneSpan(t, exp)
	if got := a["error.type"].AsString(); got != itlconv.ErrorTypeIncompleteStream {
		t.Errorf("error.type %q, want %s", got, itlconv.ErrorTypeIncompleteStream)
	}
}
