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
	wraptest.CheckTimeline(t, span, a, srv.Sent(), wraptest.Busy())
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

// recvAll reads a stream until Recv fails and returns the responses read and the last error.
func recvAll(recv func() (openai.ChatCompletionStreamResponse, error)) (int, error) {
	n := 0
	for {
		if _, err := recv(); err != nil {
			return n, err
		}
		n++
	}
}

func finish(reason string) wraptest.Event {
	return wraptest.Event{Data: `{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`}
}

// TestIncompleteStream: a stream that ends (io.EOF) before any finish_reason was cut off: the span
// says incomplete_stream, while Recv returns exactly what the SDK's does.
func TestIncompleteStream(t *testing.T) {
	content := []wraptest.Event{events[0], events[2], events[3]}
	usage := events[7]
	for _, tc := range []struct {
		name string
		evs  []wraptest.Event
		want string
	}{
		{"cut off", content, itlconv.ErrorTypeIncompleteStream},
		{"usage and [DONE] without finish_reason", append(content[:3:3], usage, wraptest.Event{Data: `[DONE]`}), itlconv.ErrorTypeIncompleteStream},
		{"finish_reason without [DONE]", append(content[:3:3], finish("stop")), ""},
		{"finish_reason and [DONE]", append(content[:3:3], finish("stop"), usage, wraptest.Event{Data: `[DONE]`}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _, create, attrs := setup(t, tc.evs)
			cfg := openai.DefaultConfig("test")
			cfg.BaseURL = srv.URL + "/v1"
			plain, err := openai.NewClientWithConfig(cfg).CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{Model: "gpt-4o-mini"})
			if err != nil {
				t.Fatal(err)
			}
			plainN, plainErr := recvAll(plain.Recv)
			_ = plain.Close()

			s, err := create()
			if err != nil {
				t.Fatal(err)
			}
			n, err := recvAll(s.Recv)
			if n != plainN || err != plainErr || err != io.EOF {
				t.Errorf("Recv gave %d responses and %v, the SDK alone %d and %v", n, err, plainN, plainErr)
			}
			_ = s.Close()
			a := attrs()
			if got := a["error.type"].AsString(); got != tc.want {
				t.Errorf("error.type %q, want %q", got, tc.want)
			}
			if a[itlconv.ChunkCountKey].AsInt64() != 2 {
				t.Errorf("chunk.count %v, want 2", a[itlconv.ChunkCountKey].String())
			}
		})
	}
}

// TestStreamErrorEvent: an error the server sends in the stream is named by its type when it has
// no code (TestStreamErrorEventLikeHTTPITL tries more).
func TestStreamErrorEvent(t *testing.T) {
	_, _, create, attrs := setup(t, append(events[:3:3], wraptest.Event{Data: `{"error":{"message":"overloaded","type":"server_error"}}`}))
	s, err := create()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recvAll(s.Recv); err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("want the stream's error, got %v", err)
	}
	if got := attrs()["error.type"].AsString(); got != "server_error" {
		t.Errorf("error.type %q, want the error's type, server_error", got)
	}
}

// closeFails is a client whose responses' bodies fail to close.
type closeFails struct{}

var errClose = errors.New("close failed")

func (closeFails) Do(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultClient.Do(req)
	if err == nil {
		res.Body = failingBody{res.Body}
	}
	return res, err
}

type failingBody struct{ io.ReadCloser }

func (b failingBody) Close() error { _ = b.ReadCloser.Close(); return errClose }

// TestCloseReturnsTheSDKsError: Close returns what the SDK stream's Close returns.
func TestCloseReturnsTheSDKsError(t *testing.T) {
	srv := wraptest.NewServer(t, events, time.Millisecond)
	in, exp := wraptest.Tracing(t)
	cfg := openai.DefaultConfig("test")
	cfg.BaseURL = srv.URL + "/v1"
	cfg.HTTPClient = closeFails{}
	s, err := goopenaiitl.CreateChatCompletionStream(context.Background(), in, openai.NewClientWithConfig(cfg), openai.ChatCompletionRequest{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); !errors.Is(err, errClose) {
		t.Errorf("Close returned %v, want the SDK's %v", err, errClose)
	}
	_, a := wraptest.OneSpan(t, exp)
	if got := a["error.type"].AsString(); got != itlconv.ErrorTypeCancelled {
		t.Errorf("error.type %q, want %s", got, itlconv.ErrorTypeCancelled)
	}

	// And nil when the SDK's Close succeeds.
	cfg.HTTPClient = &http.Client{}
	s, err = goopenaiitl.CreateChatCompletionStream(context.Background(), in, openai.NewClientWithConfig(cfg), openai.ChatCompletionRequest{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close returned %v", err)
	}
}

// TestNilOptionAndInstrumentation: a nil Option is skipped, and without an Instrumentation the
// stream reads as the SDK's.
func TestNilOptionAndInstrumentation(t *testing.T) {
	srv := wraptest.NewServer(t, events, time.Millisecond)
	cfg := openai.DefaultConfig("test")
	cfg.BaseURL = srv.URL + "/v1"
	for _, in := range []*otelitl.Instrumentation{otelitl.New(), nil} {
		s, err := goopenaiitl.CreateChatCompletionStream(context.Background(), in, openai.NewClientWithConfig(cfg), openai.ChatCompletionRequest{Model: "m"}, nil, goopenaiitl.WithBaseURL(cfg.BaseURL))
		if err != nil {
			t.Fatal(err)
		}
		if n, err := recvAll(s.Recv); n != len(events)-1 || err != io.EOF {
			t.Errorf("read %d responses and %v", n, err)
		}
		_ = s.Close()
	}
}

// TestCancelAbandoned: an application that cancels the call and stops reading, without Close,
// still gets its span (before, the generation stayed open and nothing was exported).
func TestCancelAbandoned(t *testing.T) {
	srv := wraptest.NewServer(t, events, gap)
	in, exp := wraptest.Tracing(t)
	cfg := openai.DefaultConfig("test")
	cfg.BaseURL = srv.URL + "/v1"
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := goopenaiitl.CreateChatCompletionStream(ctx, in, openai.NewClientWithConfig(cfg),
		openai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}},
		goopenaiitl.WithBaseURL(cfg.BaseURL))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	wraptest.CheckCancelAbandoned(t, exp, cancel)
}

// TestConnectionCut: a connection dropped mid-reply is named incomplete_stream, as httpitl names
// it, not by the transport error's Go type.
func TestConnectionCut(t *testing.T) {
	srv := wraptest.NewServer(t, events, gap)
	srv.Cut = 3
	in, exp := wraptest.Tracing(t)
	cfg := openai.DefaultConfig("test")
	cfg.BaseURL = srv.URL + "/v1"
	stream, err := goopenaiitl.CreateChatCompletionStream(context.Background(), in, openai.NewClientWithConfig(cfg),
		openai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}},
		goopenaiitl.WithBaseURL(cfg.BaseURL))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err = stream.Recv(); err != nil {
			break
		}
	}
	if errors.Is(err, io.EOF) {
		t.Fatalf("the stream ended cleanly; want the connection's error")
	}
	_ = stream.Close()
	_, a := wraptest.OneSpan(t, exp)
	if got := a["error.type"].AsString(); got != itlconv.ErrorTypeIncompleteStream {
		t.Errorf("error.type %q, want %s", got, itlconv.ErrorTypeIncompleteStream)
	}
}
