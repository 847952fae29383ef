package goopenaiitl_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/goopenaiitl"
)

const gap = 15 * time.Millisecond

func chunk(delta string) string {
	return `{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}`
}

var events = []wraptest.Event{
	{Data: chunk(`{"role":"assistant","content":""}`)},
	{Data: chunk(`{"reasoning_content":"hmm"}`), Content: true},
	{Data: chunk(`{"content":"Hi"}`), Content: true},
	{Data: chunk(`{"content":"!"}`), Content: true},
	{Data: chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":""}}]}`)},
	{Data: chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}`), Content: true},
	{Data: `{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`},
	{Data: `{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":5,"total_tokens":12}}`},
	{Data: `[DONE]`},
}

func setup(t *testing.T, evs []wraptest.Event) (*wraptest.Server, *otelitl.Instrumentation, func() (*goopenaiitl.ChatCompletionStream, error), func() map[attribute.Key]attribute.Value) {
	srv := wraptest.NewServer(t, evs, gap)
	in, exp := wraptest.Tracing(t)
	cfg := openai.DefaultConfig("test")
	cfg.BaseURL = srv.URL + "/v1"
	client := openai.NewClientWithConfig(cfg)
	req := openai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}, Stream: true}
	create := func() (*goopenaiitl.ChatCompletionStream, error) {
		return goopenaiitl.CreateChatCompletionStream(context.Background(), in, client, req, goopenaiitl.WithBaseURL(cfg.BaseURL))
	}
	attrs := func() map[attribute.Key]attribute.Value { _, a := wraptest.OneSpan(t, exp); return a }
	t.Cleanup(func() {
		if t.Failed() {
			for _, s := range exp.GetSpans() {
				t.Logf("span %s %v", s.Name, s.Attributes)
			}
		}
	})
	return srv, in, create, attrs
}

func TestStream(t *testing.T) {
	srv := wraptest.NewServer(t, events, gap)
	in, exp := wraptest.Tracing(t)
	cfg := openai.DefaultConfig("test")
	cfg.BaseURL = srv.URL + "/v1"
	client := openai.NewClientWithConfig(cfg)
	stream, err := goopenaiitl.CreateChatCompletionStream(context.Background(), in, client,
		openai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}},
		goopenaiitl.WithBaseURL(cfg.BaseURL))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	text := ""
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range r.Choices {
			text += c.Delta.Content
		}
	}
	if text != "Hi!" {
		t.Errorf("content %q", text)
	}
	span, a := wraptest.OneSpan(t, exp)
	wraptest.CheckTimeline(t, span, a, srv.Sent(), 10*time.Millisecond)
	host, port := srv.HostPort()
	for k, want := range map[attribute.Key]string{
		"gen_ai.request.model":           "gpt-4o-mini",
		"gen_ai.response.model":          "gpt-4o-mini-2024",
		"gen_ai.response.id":             "chatcmpl-9",
		"gen_ai.response.finish_reasons": `["stop"]`,
		"gen_ai.usage.input_tokens":      "7",
		"gen_ai.usage.output_tokens":     "5",
		"server.address":                 host,
	} {
		if got := a[k].String(); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if int(a["server.port"].AsInt64()) != port || span.Status.Code == codes.Error {
		t.Errorf("server.port %v status %v", a["server.port"], span.Status)
	}
}

func TestCloseEarlyAndErrors(t *testing.T) {
	_, _, create, attrs := setup(t, events)
	stream, err := create()
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	_ = stream.Close()
	a := attrs()
	if a["error.type"].AsString() != "cancelled" || a[itlconv.ChunkCountKey].AsInt64() != 2 {
		t.Errorf("error.type %v chunk.count %v, want cancelled and 2", a["error.type"], a[itlconv.ChunkCountKey])
	}

	srv, _, create, attrs := setup(t, nil)
	srv.Status = http.StatusServiceUnavailable
	srv.Body = `{"error":{"message":"down","type":"server_error"}}`
	if _, err := create(); err == nil {
		t.Fatal("want the API error")
	}
	if got := attrs()["error.type"].AsString(); got != "503" {
		t.Errorf("error.type %q, want 503", got)
	}
}
