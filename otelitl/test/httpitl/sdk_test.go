package httpitl_test

import (
	"context"
	"io"
	"net/url"
	"strings"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	ollama "github.com/ollama/ollama/api"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	goopenai "github.com/sashabaranov/go-openai"
	"github.com/tmc/langchaingo/llms"
	lcollama "github.com/tmc/langchaingo/llms/ollama"
	lcopenai "github.com/tmc/langchaingo/llms/openai"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/genai"

	"github.com/otelitl/itl/examples/fakellm/engine"
	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl/httpitl"
)

// Every Go SDK drives fakellm through httpitl.NewTransport: each span's timeline must follow the
// arrivals fakellm logged, gap by gap.

func TestOpenAIGoChat(t *testing.T) {
	f := newFake(t, "fake-gpt")
	hc, exp := f.client(t)
	c := openai.NewClient(option.WithBaseURL(f.URL+"/v1/"), option.WithAPIKey("k"), option.WithHTTPClient(hc), option.WithMaxRetries(0))
	stream := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model: "fake-gpt", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		MaxCompletionTokens: openai.Int(12), StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var text strings.Builder
	for stream.Next() {
		for _, ch := range stream.Current().Choices {
			text.WriteString(ch.Delta.Content)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	_ = stream.Close()
	if text.Len() == 0 {
		t.Fatal("no text reached the SDK")
	}
	host, port := hostPort(f.URL)
	checkSpan(t, f, exp, map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "fake-gpt",
		"gen_ai.response.model": "fake-gpt", "gen_ai.response.id": "chatcmpl-fake1", "gen_ai.request.stream": "true",
		"gen_ai.usage.output_tokens": "12", "otelitl.chunk.count": "12", "server.address": host, "server.port": port,
		"http.response.status_code": "200",
	})
}

// TestOpenAIGoChatLongPrompt: openai-go writes a request's messages before its model, so a prompt
// of megabytes (here a 3 MiB image) comes before it; the model is still read, wherever it is.
func TestOpenAIGoChatLongPrompt(t *testing.T) {
	// The prompt's 3 MiB would cost fakellm's engine tens of seconds of prefill.
	f := newFakeWith(t, func(c *engine.Config) { c.PrefillPerTok = 0 }, "fake-gpt")
	hc, exp := f.client(t)
	c := openai.NewClient(option.WithBaseURL(f.URL+"/v1/"), option.WithAPIKey("k"), option.WithHTTPClient(hc), option.WithMaxRetries(0))
	image := "data:image/png;base64," + strings.Repeat("iVBORw0KGgo", 3<<20/11)
	stream := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model: "fake-gpt", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
			openai.TextContentPart("what is in it?"), openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: image}),
		})},
		MaxCompletionTokens: openai.Int(12), StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	for stream.Next() {
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	_ = stream.Close()
	if spans := exp.GetSpans(); len(spans) != 1 || spans[0].Name != "chat fake-gpt" {
		for _, s := range spans {
			t.Logf("span %q", s.Name)
		}
		t.Fatalf("%d spans, want one named chat fake-gpt", len(spans))
	}
	host, port := hostPort(f.URL)
	checkSpan(t, f, exp, map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "fake-gpt",
		"gen_ai.response.model": "fake-gpt", "gen_ai.response.id": "chatcmpl-fake1", "gen_ai.request.stream": "true",
		"gen_ai.usage.output_tokens": "12", "otelitl.chunk.count": "12", "server.address": host, "server.port": port,
		"http.response.status_code": "200",
	})
}

func TestOpenAIGoResponses(t *testing.T) {
	f := newFake(t, "fake-gpt")
	hc, exp := f.client(t)
	c := openai.NewClient(option.WithBaseURL(f.URL+"/v1/"), option.WithAPIKey("k"), option.WithHTTPClient(hc), option.WithMaxRetries(0))
	stream := c.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model: "fake-gpt", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}, MaxOutputTokens: openai.Int(10),
	})
	for stream.Next() {
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	_ = stream.Close()
	checkSpan(t, f, exp, map[string]string{
		"gen_ai.provider.name": "openai", "gen_ai.response.id": "resp_fake1", "gen_ai.usage.output_tokens": "10", "otelitl.chunk.count": "10",
	})
}

func TestAnthropicSDK(t *testing.T) {
	f := newFake(t, "fake-claude")
	hc, exp := f.client(t)
	c := anthropic.NewClient(aoption.WithBaseURL(f.URL), aoption.WithAPIKey("k"), aoption.WithHTTPClient(hc), aoption.WithMaxRetries(0))
	stream := c.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
		Model: "fake-claude", MaxTokens: 11, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	})
	for stream.Next() {
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	_ = stream.Close()
	checkSpan(t, f, exp, map[string]string{
		"gen_ai.provider.name": "anthropic", "gen_ai.request.model": "fake-claude", "gen_ai.response.id": "msg_fake1",
		"gen_ai.usage.output_tokens": "11", "otelitl.chunk.count": "11",
	})
}

func TestGoOpenAI(t *testing.T) {
	f := newFake(t, "fake-gpt")
	hc, exp := f.client(t)
	cfg := goopenai.DefaultConfig("k")
	cfg.BaseURL, cfg.HTTPClient = f.URL+"/v1", hc
	c := goopenai.NewClientWithConfig(cfg)
	stream, err := c.CreateChatCompletionStream(context.Background(), goopenai.ChatCompletionRequest{
		Model: "fake-gpt", MaxCompletionTokens: 9, Stream: true, Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "hi"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := stream.Recv(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	stream.Close()
	checkSpan(t, f, exp, map[string]string{"gen_ai.provider.name": "openai", "otelitl.chunk.count": "9"})
}

func TestGenAIStream(t *testing.T) {
	f := newFake(t, "fake-gemini")
	hc, exp := f.client(t)
	ctx := context.Background()
	c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI, HTTPClient: hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: f.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for resp, err := range c.Models.GenerateContentStream(ctx, "fake-gemini", genai.Text("hi"), &genai.GenerateContentConfig{MaxOutputTokens: 8}) {
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(resp.Text())
	}
	if text.Len() == 0 {
		t.Fatal("no text reached the SDK")
	}
	checkSpan(t, f, exp, map[string]string{
		"gen_ai.operation.name": "generate_content", "gen_ai.provider.name": "gcp.gemini", "gen_ai.request.model": "fake-gemini",
		"gen_ai.response.model": "fake-gemini", "gen_ai.response.id": "fake1gemini", "gen_ai.usage.output_tokens": "8",
		"gen_ai.response.finish_reasons": `["stop"]`, "otelitl.chunk.count": "8",
	})
}

func TestGenAINotStreamed(t *testing.T) {
	f := newFake(t, "fake-gemini")
	hc, exp := f.client(t)
	ctx := context.Background()
	c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI, HTTPClient: hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: f.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Models.GenerateContent(ctx, "fake-gemini", genai.Text("hi"), &genai.GenerateContentConfig{MaxOutputTokens: 5})
	if err != nil || resp.Text() == "" {
		t.Fatal(resp, err)
	}
	_, attrs := oneSpan(t, exp)
	for k, want := range map[string]string{"gen_ai.request.stream": "" /* left out: SPEC §1 */, "gen_ai.usage.output_tokens": "5", "otelitl.chunk.count": "0", "error.type": ""} {
		if got := attrs[attrKey(k)].String(); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

func TestLangChainGoOpenAI(t *testing.T) {
	f := newFake(t, "fake-gpt")
	hc, exp := f.client(t)
	llm, err := lcopenai.New(lcopenai.WithBaseURL(f.URL+"/v1"), lcopenai.WithToken("k"), lcopenai.WithModel("fake-gpt"), lcopenai.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	_, err = llm.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")},
		llms.WithMaxTokens(7), llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error { got.Write(chunk); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() == 0 {
		t.Fatal("no streamed text reached langchaingo")
	}
	checkSpan(t, f, exp, map[string]string{"gen_ai.provider.name": "openai", "otelitl.chunk.count": "7"})
}

func TestLangChainGoOllama(t *testing.T) {
	f := newFake(t, "fake-llama")
	hc, exp := f.client(t)
	llm, err := lcollama.New(lcollama.WithServerURL(f.URL), lcollama.WithModel("fake-llama"), lcollama.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	_, err = llm.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")},
		llms.WithMaxTokens(24), llms.WithStreamingFunc(func(context.Context, []byte) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	checkSpanAfterFirst(t, f, exp, map[string]string{"gen_ai.provider.name": "ollama", "gen_ai.operation.name": "chat",
		"gen_ai.usage.output_tokens": "24", "otelitl.chunk.count": "24"})
}

func TestOllamaAPIChat(t *testing.T) {
	f := newFake(t, "fake-llama")
	hc, exp := f.client(t)
	u, _ := url.Parse(f.URL)
	c := ollama.NewClient(u, hc)
	var text strings.Builder
	err := c.Chat(context.Background(), &ollama.ChatRequest{Model: "fake-llama", Messages: []ollama.Message{{Role: "user", Content: "hi"}},
		Options: map[string]any{"num_predict": 24}}, func(r ollama.ChatResponse) error { text.WriteString(r.Message.Content); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if text.Len() == 0 {
		t.Fatal("no text reached the client")
	}
	checkSpanAfterFirst(t, f, exp, map[string]string{"gen_ai.provider.name": "ollama", "gen_ai.request.model": "fake-llama",
		"gen_ai.response.model": "fake-llama", "gen_ai.usage.output_tokens": "24", "otelitl.chunk.count": "24", "gen_ai.request.stream": "true"})
}

// TestOllamaAPIChatLongPromptNotStreamed: the ollama client writes "stream" after the messages,
// so that with a prompt longer than the part of the body read before the span starts
// (DefaultMaxRequestBytes) its "stream": false is found only as the rest is sent, after the span
// started as /api/chat's default, a stream. The span must still say the request was not streamed.
func TestOllamaAPIChatLongPromptNotStreamed(t *testing.T) {
	f := newFakeWith(t, func(c *engine.Config) { c.PrefillPerTok = 0 }, "fake-llama")
	hc, exp := f.client(t)
	u, _ := url.Parse(f.URL)
	c := ollama.NewClient(u, hc)
	prompt := strings.Repeat("a long document ", httpitl.DefaultMaxRequestBytes/16+1024)
	noStream := false
	var replies int
	err := c.Chat(context.Background(), &ollama.ChatRequest{Model: "fake-llama", Messages: []ollama.Message{{Role: "user", Content: prompt}},
		Stream: &noStream, Options: map[string]any{"num_predict": 5}}, func(ollama.ChatResponse) error { replies++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if replies != 1 {
		t.Fatalf("%d replies, want one whole", replies)
	}
	_, attrs := wraptest.OneSpan(t, exp)
	checkAttrs(t, tracetest.SpanStub{}, attrs, map[string]string{"gen_ai.request.model": "fake-llama", "gen_ai.request.stream": "false",
		"gen_ai.usage.output_tokens": "5", "error.type": ""})
	if n, ok := attrs[attrKey("otelitl.chunk.count")]; ok && n.AsInt64() != 0 {
		t.Errorf("a reply not streamed has %d chunks", n.AsInt64())
	}
}

// TestLateStreamMember: a "stream" member past the part of the body read before the span starts
// sets gen_ai.request.stream to what it says where the protocol takes it from the body and it
// differs from the protocol's default, and nowhere else: Gemini's URL says whether it streams.
func TestLateStreamMember(t *testing.T) {
	long := strings.Repeat("a long document ", httpitl.DefaultMaxRequestBytes/16+1024)
	for _, tc := range []struct {
		path, body string
		want       string // gen_ai.request.stream, "" for none
	}{
		{"/api/generate", `{"model":"fake-llama","prompt":"` + long + `","stream":false,"options":{"num_predict":3}}`, "false"},
		{"/api/chat", `{"model":"fake-llama","messages":[{"role":"user","content":"` + long + `"}],"stream":true,"options":{"num_predict":3}}`, "true"},
		{"/v1/chat/completions", `{"model":"fake-llama","messages":[{"role":"user","content":"` + long + `"}],"stream":true,"max_tokens":3}`, "true"},
		{"/v1/chat/completions", `{"model":"fake-llama","messages":[{"role":"user","content":"` + long + `"}],"stream":false,"max_tokens":3}`, ""},
		{"/v1beta/models/fake-llama:generateContent", `{"contents":[{"parts":[{"text":"` + long + `"}]}],"stream":true,"generationConfig":{"maxOutputTokens":3}}`, ""},
	} {
		t.Run(tc.path+" "+tc.want, func(t *testing.T) {
			f := newFakeWith(t, func(c *engine.Config) { c.PrefillPerTok = 0 }, "fake-llama")
			hc, exp := f.client(t)
			res, err := hc.Post(f.URL+tc.path, "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				t.Fatalf("status %d", res.StatusCode)
			}
			_, attrs := wraptest.OneSpan(t, exp)
			got := ""
			if v, ok := attrs[attrKey("gen_ai.request.stream")]; ok {
				got = v.String()
			}
			if got != tc.want {
				t.Errorf("gen_ai.request.stream = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestOllamaAPIGenerate(t *testing.T) {
	f := newFake(t, "fake-llama")
	hc, exp := f.client(t)
	u, _ := url.Parse(f.URL)
	c := ollama.NewClient(u, hc)
	err := c.Generate(context.Background(), &ollama.GenerateRequest{Model: "fake-llama", Prompt: "hi", Options: map[string]any{"num_predict": 24}},
		func(ollama.GenerateResponse) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	checkSpanAfterFirst(t, f, exp, map[string]string{"gen_ai.operation.name": "text_completion", "otelitl.chunk.count": "24"})
}
