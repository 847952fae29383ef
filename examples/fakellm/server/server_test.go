package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	goopenai "github.com/sashabaranov/go-openai"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/examples/fakellm/engine"
	"github.com/otelitl/itl/examples/fakellm/server"
	"github.com/otelitl/itl/internal/sdkptrace"
	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/anthropicitl"
	"github.com/otelitl/itl/otelitl/goopenaiitl"
	"github.com/otelitl/itl/otelitl/openaiitl"
)

func setup(t *testing.T) (*engine.Engine, *httptest.Server, *otelitl.Instrumentation, *tracetest.InMemoryExporter) {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.StepBase = 4 * time.Millisecond
	cfg.SpecTokens = 3
	eng, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	srv := httptest.NewServer(server.New(eng, []string{"fake-gpt", "fake-claude"}))
	t.Cleanup(srv.Close)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return eng, srv, otelitl.New(otelitl.WithTracerProvider(tp)), exp
}

// checkAgainstEngine decodes the one span otelitl wrote the way the collector does, and compares its
// timeline with the delivery times the engine logged for request 1, on the same clock: same number
// of chunks, each seen within wraptest.Busy() of its delivery, so every gap and the TTFT follow the
// engine's.
func checkAgainstEngine(t *testing.T, eng *engine.Engine, exp *tracetest.InMemoryExporter) {
	t.Helper()
	td := sdkptrace.Traces(exp.GetSpans().Snapshots())
	if td.SpanCount() != 1 {
		t.Fatalf("%d spans, want 1", td.SpanCount())
	}
	span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	d := genaispan.New(genaispan.Config{})
	r := d.Read(span, true)
	sent := eng.Arrivals(1)
	if !r.Valid || !r.Complete || r.Timeline.Len() != len(sent) || len(sent) < 5 {
		t.Fatalf("timeline valid %v complete %v with %d chunks; the engine delivered %d", r.Valid, r.Complete, r.Timeline.Len(), len(sent))
	}
	start := span.StartTimestamp().AsTime()
	got := make([]time.Time, len(sent))
	for i, off := range r.Timeline.Offsets {
		got[i] = start.Add(time.Duration(off))
	}
	wraptest.CheckLateness(t, got, sent, wraptest.Busy())
	f := r.Figures
	if first := time.Duration(r.Timeline.Offsets[0]).Seconds(); !f.HasTTFT || f.TTFT < first-0.001 || f.TTFT > first+0.001 {
		t.Errorf("TTFT %v on the span, its first chunk at %v", f.TTFT, first)
	}
	if !f.HasTPOT || !f.HasOutputTokens {
		t.Errorf("figures missing: %+v", f)
	}
}

func TestOpenAIChatAgainstFakellm(t *testing.T) {
	eng, srv, in, exp := setup(t)
	c := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("k"))
	s := openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, openai.ChatCompletionNewParams{
		Model: "fake-gpt", MaxTokens: openai.Int(60), Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello there")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}})
	for s.Next() {
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	checkAgainstEngine(t, eng, exp)
}

func TestOpenAIResponsesAgainstFakellm(t *testing.T) {
	eng, srv, in, exp := setup(t)
	c := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("k"))
	s := openaiitl.NewResponseStreaming(context.Background(), in, &c.Responses, responses.ResponseNewParams{
		Model: "fake-gpt", MaxOutputTokens: openai.Int(50), Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hello")}})
	for s.Next() {
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	checkAgainstEngine(t, eng, exp)
}

func TestAnthropicAgainstFakellm(t *testing.T) {
	eng, srv, in, exp := setup(t)
	c := anthropic.NewClient(anthropicoption.WithBaseURL(srv.URL), anthropicoption.WithAPIKey("k"))
	s := anthropicitl.NewStreaming(context.Background(), in, &c.Messages, anthropic.MessageNewParams{
		Model: "fake-claude", MaxTokens: 50, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))}})
	for s.Next() {
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	checkAgainstEngine(t, eng, exp)
}

func TestGoOpenAIAgainstFakellm(t *testing.T) {
	eng, srv, in, exp := setup(t)
	cfg := goopenai.DefaultConfig("k")
	cfg.BaseURL = srv.URL + "/v1"
	s, err := goopenaiitl.CreateChatCompletionStream(context.Background(), in, goopenai.NewClientWithConfig(cfg),
		goopenai.ChatCompletionRequest{Model: "fake-gpt", MaxCompletionTokens: 40, Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "hi"}}},
		goopenaiitl.WithBaseURL(cfg.BaseURL))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := s.Recv(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	_ = s.Close()
	checkAgainstEngine(t, eng, exp)
}

func TestErrorsInProviderFormats(t *testing.T) {
	_, srv, _, _ := setup(t)
	for _, c := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/v1/chat/completions", `{"model":"nope","messages":[{"role":"user","content":"x"}]}`, 404, `"code":"model_not_found"`},
		{"/v1/chat/completions", `{"model":"fake-gpt","messages":[]}`, 400, `"param":"messages"`},
		{"/v1/chat/completions", `{not json`, 400, `"type":"invalid_request_error"`},
		{"/v1/responses", `{"model":"fake-gpt"}`, 400, `"param":"input"`},
		{"/v1/messages", `{"model":"fake-claude","messages":[{"role":"user","content":"x"}]}`, 400, `max_tokens`},
		{"/v1/messages", `{"model":"nope","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`, 404, `"type":"not_found_error"`},
	} {
		resp, err := http.Post(srv.URL+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(b), c.want) {
			t.Errorf("%s %s: %d %s; want %d with %s", c.path, c.body, resp.StatusCode, b, c.status, c.want)
		}
	}
}

func TestNonStreaming(t *testing.T) {
	_, srv, _, _ := setup(t)
	c := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("k"))
	resp, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "fake-gpt", MaxTokens: openai.Int(12), Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content == "" || resp.Usage.CompletionTokens != 12 {
		t.Errorf("non-streaming reply %+v", resp.Usage)
	}
}

// TestArrivalsID: /debug/arrivals takes a request's number or a reply's id; a bad or missing id
// gets a 400 that says what to give, and one the server never issued a 404.
func TestArrivalsID(t *testing.T) {
	eng, srv, _, _ := setup(t)
	for range 7 {
		r, err := eng.Submit(context.Background(), 1, 2)
		if err != nil {
			t.Fatal(err)
		}
		for range r.Steps {
		}
	}
	for _, c := range []struct {
		id, want string
		status   int
	}{
		{"7", `"id":7`, http.StatusOK},
		{"chatcmpl-fake7", `"id":7`, http.StatusOK},
		{"resp_fake7", `"id":7`, http.StatusOK},
		{"msg_fake7", `"id":7`, http.StatusOK},
		{"fake7gemini", `"id":7`, http.StatusOK},
		{"fake7", `id "fake7"`, http.StatusBadRequest},
		{"", "id is missing: give the request's number, from the " + server.RequestIDHeader, http.StatusBadRequest},
		{"chatcmpl-7", `id "chatcmpl-7": give the request's number`, http.StatusBadRequest},
		{"-1", `id "-1"`, http.StatusBadRequest},
		{"8", "request 8: no arrivals recorded: this server has had 7 requests", http.StatusNotFound},
		{"chatcmpl-fake0", "request 0: no arrivals recorded", http.StatusNotFound},
	} {
		resp, err := http.Get(srv.URL + "/debug/arrivals?id=" + c.id)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(body), c.want) {
			t.Errorf("id=%q: %d %q, want %d and %q", c.id, resp.StatusCode, body, c.status, c.want)
		}
	}
}
