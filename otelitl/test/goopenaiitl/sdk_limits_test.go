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

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl/goopenaiitl"
	"github.com/otelitl/itl/otelitl/httpitl"
)

// bothSpans reads the server's stream to its end with go-openai twice, through httpitl's transport
// and through the wrapper, and returns the attributes of each one's span.
func bothSpans(t *testing.T, srv *wraptest.Server) (viaTransport, wrapped map[attribute.Key]attribute.Value) {
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
	if _, err := recvAll(plain.Recv); !errors.Is(err, io.EOF) {
		t.Fatalf("go-openai returned %v, want io.EOF", err)
	}
	_ = plain.Close()
	_, viaTransport = wraptest.OneSpan(t, exp)

	in, exp = wraptest.Tracing(t)
	s, err := goopenaiitl.CreateChatCompletionStream(context.Background(), in, openai.NewClientWithConfig(cfg), req, goopenaiitl.WithBaseURL(cfg.BaseURL))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recvAll(s.Recv); !errors.Is(err, io.EOF) {
		t.Fatalf("through the wrapper go-openai returned %v, want io.EOF", err)
	}
	_ = s.Close()
	_, wrapped = wraptest.OneSpan(t, exp)
	return viaTransport, wrapped
}

// TestChunksGoOpenAIDrops pins a documented difference (the package doc): go-openai's delta has no
// field for "reasoning" (the reasoning text vLLM, Ollama and OpenRouter stream under that name,
// where DeepSeek uses reasoning_content) nor for audio.transcript, so the wrapper cannot count
// those chunks, which httpitl counts: the wrapper's time to first chunk is then the first content
// after the reasoning. A go-openai that starts giving them fails this test: the wrapper should then
// count them.
func TestChunksGoOpenAIDrops(t *testing.T) {
	srv := wraptest.NewServer(t, []wraptest.Event{
		events[0],
		{Data: chunk(`{"reasoning":"Let me think"}`)},
		{Data: chunk(`{"reasoning":" about it"}`)},
		{Data: chunk(`{"audio":{"transcript":"Hi"}}`)},
		events[2],
		finish("stop"),
		{Data: `[DONE]`},
	}, time.Millisecond)
	viaTransport, wrapped := bothSpans(t, srv)
	if got := viaTransport[itlconv.ChunkCountKey].AsInt64(); got != 4 {
		t.Errorf("httpitl counted %d chunks, want 4 (two reasoning, a transcript, a content)", got)
	}
	if got := wrapped[itlconv.ChunkCountKey].AsInt64(); got != 1 {
		t.Errorf("the wrapper counted %d chunks, want 1 (the content: go-openai drops reasoning and audio)", got)
	}
}

// TestUsagePartGoOpenAIFills pins a documented difference (the package doc): go-openai decodes a
// usage object's counts into ints, so a count the server left out reaches the wrapper as 0, which
// it records, where httpitl records none.
func TestUsagePartGoOpenAIFills(t *testing.T) {
	srv := wraptest.NewServer(t, []wraptest.Event{
		events[2], finish("stop"),
		{Data: `{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024","choices":[],"usage":{"prompt_tokens":7}}`},
		{Data: `[DONE]`},
	}, time.Millisecond)
	viaTransport, wrapped := bothSpans(t, srv)
	const out = attribute.Key("gen_ai.usage.output_tokens")
	if v, ok := viaTransport[out]; ok {
		t.Errorf("httpitl recorded %s %d, want none", out, v.AsInt64())
	}
	if v, ok := wrapped[out]; !ok || v.AsInt64() != 0 {
		t.Errorf("the wrapper recorded %s %d (present %t), want go-openai's 0", out, v.AsInt64(), ok)
	}
	for who, a := range map[string]map[attribute.Key]attribute.Value{"httpitl": viaTransport, "the wrapper": wrapped} {
		if got := a["gen_ai.usage.input_tokens"].AsInt64(); got != 7 {
			t.Errorf("%s recorded gen_ai.usage.input_tokens %d, want 7", who, got)
		}
	}
}
