package test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	goopenai "github.com/sashabaranov/go-openai"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/anthropicitl"
	"github.com/otelitl/itl/otelitl/goopenaiitl"
	"github.com/otelitl/itl/otelitl/openaiitl"
)

const (
	secretPrompt     = "SECRET-PROMPT-7f3a"
	secretCompletion = "SECRET-COMPLETION-91bc"
)

// everything renders every recorded field of every span: name, attributes, events with theirs,
// status, links.
func everything(spans tracetest.SpanStubs) string {
	var b strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&b, "%s %v %v %v", s.Name, s.Attributes, s.Status, s.Links)
		for _, e := range s.Events {
			fmt.Fprintf(&b, " %s %v", e.Name, e.Attributes)
		}
	}
	return b.String()
}

// TestNeverRecordsPromptOrCompletion drives every wrapper with a prompt and a reply that carry
// marker strings, and fails if either appears anywhere on the spans.
func TestNeverRecordsPromptOrCompletion(t *testing.T) {
	oaChunk := func(delta string) wraptest.Event {
		return wraptest.Event{Data: `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}`, Content: true}
	}
	chat := []wraptest.Event{
		oaChunk(`{"content":"` + secretCompletion + `"}`),
		oaChunk(`{"reasoning_content":"` + secretCompletion + `"}`),
		oaChunk(`{"tool_calls":[{"index":0,"id":"x","type":"function","function":{"name":"f","arguments":"` + secretCompletion + `"}}]}`),
		{Data: `[DONE]`},
	}
	resp := []wraptest.Event{
		{Name: "response.output_text.delta", Data: `{"type":"response.output_text.delta","sequence_number":1,"item_id":"i","output_index":0,"content_index":0,"delta":"` + secretCompletion + `"}`},
	}
	anth := []wraptest.Event{
		{Name: "message_start", Data: `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`},
		{Name: "content_block_delta", Data: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + secretCompletion + `"}}`},
		{Name: "message_stop", Data: `{"type":"message_stop"}`},
	}

	t.Run("openai chat", func(t *testing.T) {
		srv := wraptest.NewServer(t, chat, time.Millisecond)
		in, exp := wraptest.Tracing(t)
		c := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("k"))
		s := openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, openai.ChatCompletionNewParams{
			Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(secretPrompt), openai.UserMessage(secretPrompt)}})
		for s.Next() {
		}
		check(t, exp)
	})
	t.Run("openai responses", func(t *testing.T) {
		srv := wraptest.NewServer(t, resp, time.Millisecond)
		in, exp := wraptest.Tracing(t)
		c := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("k"))
		s := openaiitl.NewResponseStreaming(context.Background(), in, &c.Responses, responses.ResponseNewParams{
			Model: "m", Instructions: openai.String(secretPrompt), Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(secretPrompt)}})
		for s.Next() {
		}
		_ = s.Close()
		check(t, exp)
	})
	t.Run("anthropic", func(t *testing.T) {
		srv := wraptest.NewServer(t, anth, time.Millisecond)
		in, exp := wraptest.Tracing(t)
		c := anthropic.NewClient(anthropicoption.WithBaseURL(srv.URL), anthropicoption.WithAPIKey("k"))
		s := anthropicitl.NewStreaming(context.Background(), in, &c.Messages, anthropic.MessageNewParams{
			Model: "c", MaxTokens: 10, System: []anthropic.TextBlockParam{{Text: secretPrompt}},
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(secretPrompt))}})
		for s.Next() {
		}
		_ = s.Close()
		check(t, exp)
	})
	t.Run("go-openai", func(t *testing.T) {
		srv := wraptest.NewServer(t, chat, time.Millisecond)
		in, exp := wraptest.Tracing(t)
		cfg := goopenai.DefaultConfig("k")
		cfg.BaseURL = srv.URL + "/v1"
		s, err := goopenaiitl.CreateChatCompletionStream(context.Background(), in, goopenai.NewClientWithConfig(cfg),
			goopenai.ChatCompletionRequest{Model: "m", Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: secretPrompt}}})
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := s.Recv(); errors.Is(err, io.EOF) || err != nil {
				break
			}
		}
		_ = s.Close()
		check(t, exp)
	})
}

func check(t *testing.T, exp *tracetest.InMemoryExporter) {
	t.Helper()
	spans := exp.GetSpans()
	if len(spans) == 0 {
		t.Fatal("no span recorded: the test would prove nothing")
	}
	all := everything(spans)
	if !strings.Contains(all, "otelitl.chunk") {
		t.Fatalf("the span has no timeline: %s", all)
	}
	for _, secret := range []string{secretPrompt, secretCompletion} {
		if strings.Contains(all, secret) {
			t.Errorf("%s was recorded on a span: %s", secret, all)
		}
	}
}

// leaky is an error whose message quotes the prompt, as providers' error messages do ("Invalid
// value in messages[0]: ...").
type leaky struct{}

func (leaky) Error() string { return "provider rejected the request: " + secretPrompt }

// TestErrorMessagesNeverReachTheSpan ends generations with errors whose messages quote the prompt
// and fails if the marker appears anywhere on the spans: the status description is the error.type.
func TestErrorMessagesNeverReachTheSpan(t *testing.T) {
	in, exp := wraptest.Tracing(t)
	_, g := in.Start(context.Background(), otelitl.Request{Model: "m"})
	g.Chunk(1)
	g.End(fmt.Errorf("reading the stream: %w", errors.New("Invalid prompt: "+secretPrompt)))
	_, g = in.Start(context.Background(), otelitl.Request{Model: "m"})
	g.EndAt(time.Now(), leaky{})
	checkErrors(t, exp, 2)
}

// TestWrapperErrorMessagesNeverReachTheSpan drives every wrapper into errors whose messages quote
// the prompt (HTTP errors, error events mid-stream, failed responses) and fails if the marker
// appears anywhere on the spans.
func TestWrapperErrorMessagesNeverReachTheSpan(t *testing.T) {
	msg := "Invalid prompt: " + secretPrompt
	errBody := `{"error":{"message":"` + msg + `","type":"invalid_request_error","code":"bad"}}`

	oaChunk := `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}`
	midStream := []wraptest.Event{{Data: oaChunk, Content: true}, {Data: errBody}}
	for name, tc := range map[string]struct {
		events []wraptest.Event
		status int
	}{"http": {nil, 400}, "event": {midStream, 0}} {
		t.Run("openai chat "+name, func(t *testing.T) {
			srv := wraptest.NewServer(t, tc.events, time.Millisecond)
			srv.Status, srv.Body = tc.status, errBody
			in, exp := wraptest.Tracing(t)
			c := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("k"), option.WithMaxRetries(0))
			s := openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, openai.ChatCompletionNewParams{Model: "m"})
			for s.Next() {
			}
			// openai-go v3 leaves the body out of an HTTP error's message; an error event's is
			// quoted.
			if s.Err() == nil || (name == "event" && !strings.Contains(s.Err().Error(), secretPrompt)) {
				t.Fatalf("the test needs the SDK's error to quote the marker: %v", s.Err())
			}
			checkErrors(t, exp, 1)
		})
		t.Run("go-openai "+name, func(t *testing.T) {
			srv := wraptest.NewServer(t, tc.events, time.Millisecond)
			srv.Status, srv.Body = tc.status, errBody
			in, exp := wraptest.Tracing(t)
			cfg := goopenai.DefaultConfig("k")
			cfg.BaseURL = srv.URL + "/v1"
			s, err := goopenaiitl.CreateChatCompletionStream(context.Background(), in, goopenai.NewClientWithConfig(cfg), goopenai.ChatCompletionRequest{Model: "m"})
			for err == nil {
				_, err = s.Recv()
			}
			if !strings.Contains(err.Error(), secretPrompt) {
				t.Fatalf("the test needs the SDK's error to quote the marker: %v", err)
			}
			checkErrors(t, exp, 1)
		})
	}

	respFailed := `{"type":"response.failed","sequence_number":2,"response":{"id":"r","object":"response","created_at":1,"model":"m","status":"failed","output":[],"error":{"code":"server_error","message":"` + msg + `"}}}`
	respDelta := `{"type":"response.output_text.delta","sequence_number":1,"item_id":"i","output_index":0,"content_index":0,"delta":"x"}`
	for name, tc := range map[string]struct {
		events []wraptest.Event
		status int
	}{
		"http":            {nil, 400},
		"response.failed": {[]wraptest.Event{{Name: "response.output_text.delta", Data: respDelta}, {Name: "response.failed", Data: respFailed}}, 0},
		"error event":     {[]wraptest.Event{{Name: "error", Data: `{"type":"error","sequence_number":2,"code":"` + secretPrompt + ` again","message":"` + msg + `","param":null}`}}, 0},
	} {
		t.Run("openai responses "+name, func(t *testing.T) {
			srv := wraptest.NewServer(t, tc.events, time.Millisecond)
			srv.Status, srv.Body = tc.status, errBody
			in, exp := wraptest.Tracing(t)
			c := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("k"), option.WithMaxRetries(0))
			s := openaiitl.NewResponseStreaming(context.Background(), in, &c.Responses, responses.ResponseNewParams{Model: "m"})
			for s.Next() {
			}
			_ = s.Close()
			checkErrors(t, exp, 1)
		})
	}

	anthErr := `{"type":"error","error":{"type":"invalid_request_error","message":"` + msg + `"}}`
	for name, tc := range map[string]struct {
		events []wraptest.Event
		status int
	}{
		"http":  {nil, 400},
		"event": {[]wraptest.Event{{Name: "error", Data: anthErr}}, 0},
		// A proxy that puts prose in the error's type: the type is no code, and must not reach the
		// span either.
		"prose type": {[]wraptest.Event{{Name: "error", Data: `{"type":"error","error":{"type":"` + msg + `","message":"` + msg + `"}}`}}, 0},
	} {
		t.Run("anthropic "+name, func(t *testing.T) {
			srv := wraptest.NewServer(t, tc.events, time.Millisecond)
			srv.Status, srv.Body = tc.status, anthErr
			in, exp := wraptest.Tracing(t)
			c := anthropic.NewClient(anthropicoption.WithBaseURL(srv.URL), anthropicoption.WithAPIKey("k"), anthropicoption.WithMaxRetries(0))
			s := anthropicitl.NewStreaming(context.Background(), in, &c.Messages, anthropic.MessageNewParams{Model: "c", MaxTokens: 10})
			for s.Next() {
			}
			if s.Err() == nil || !strings.Contains(s.Err().Error(), secretPrompt) {
				t.Fatalf("the test needs the SDK's error to quote the marker: %v", s.Err())
			}
			_ = s.Close()
			checkErrors(t, exp, 1)
		})
	}
}

// checkErrors checks that exp holds n failed spans, each with an error.type and an error status,
// and that the prompt's marker appears on none.
func checkErrors(t *testing.T, exp *tracetest.InMemoryExporter, n int) {
	t.Helper()
	spans := exp.GetSpans()
	if len(spans) != n {
		t.Fatalf("%d spans, want %d", len(spans), n)
	}
	for _, s := range spans {
		et := ""
		for _, kv := range s.Attributes {
			if kv.Key == semconv.ErrorTypeKey {
				et = kv.Value.AsString()
			}
		}
		if s.Status.Code != codes.Error || et == "" || s.Status.Description != et {
			t.Errorf("status %+v, error.type %q: want an error status described by the error.type", s.Status, et)
		}
	}
	if all := everything(spans); strings.Contains(all, secretPrompt) {
		t.Errorf("%s was recorded on a span: %s", secretPrompt, all)
	}
}
