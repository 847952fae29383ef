package httpitl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl/httpitl"
)

// azureServer is an Azure OpenAI endpoint over TLS (openai-go's azure package sends its key over
// HTTPS only) that streams a chat reply in Azure's shapes: a first event of prompt_filter_results
// with no choices, content_filter_results on every choice, an asynchronous filter's
// content_filter_offsets after the finish reason, then usage. It logs when each content event
// left it, and what each request asked.
type azureServer struct {
	*httptest.Server
	gap    time.Duration
	events []azureEvent

	mu   sync.Mutex
	sent []time.Time
	reqs []azureRequest
}

type azureRequest struct {
	path, query, apiKey, model string
}

// azureEvent is one SSE event of a reply, named or not; the events with content are the ones
// that count as chunks.
type azureEvent struct {
	name, data string
	content    bool
}

// azureChat is a Chat Completions reply in Azure's shapes.
var azureChat = []azureEvent{
	{"", `{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"jailbreak":{"filtered":false,"detected":false},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}}]}`, false},
	{"", `{"choices":[{"content_filter_results":{},"delta":{"content":"","refusal":null,"role":"assistant"},"finish_reason":null,"index":0,"logprobs":null}],"created":1733150000,"id":"chatcmpl-Az1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_b705f0c291"}`, false},
	{"", `{"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}},"delta":{"content":"Hello"},"finish_reason":null,"index":0,"logprobs":null}],"created":1733150000,"id":"chatcmpl-Az1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_b705f0c291"}`, true},
	{"", `{"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}},"delta":{"content":" from"},"finish_reason":null,"index":0,"logprobs":null}],"created":1733150000,"id":"chatcmpl-Az1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_b705f0c291"}`, true},
	{"", `{"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}},"delta":{"content":" Azure"},"finish_reason":null,"index":0,"logprobs":null}],"created":1733150000,"id":"chatcmpl-Az1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_b705f0c291"}`, true},
	{"", `{"choices":[{"content_filter_results":{},"delta":{},"finish_reason":"stop","index":0,"logprobs":null}],"created":1733150000,"id":"chatcmpl-Az1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_b705f0c291"}`, false},
	{"", `{"choices":[{"content_filter_offsets":{"check_offset":0,"start_offset":0,"end_offset":16},"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}},"finish_reason":null,"index":0}],"created":0,"id":"","model":"","object":""}`, false},
	{"", `{"choices":[],"created":1733150000,"id":"chatcmpl-Az1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_b705f0c291","usage":{"completion_tokens":3,"prompt_tokens":9,"total_tokens":12}}`, false},
	{"", `[DONE]`, false},
}

// azureResponses is a Responses API reply, as Azure's v1 API streams it (OpenAI's events): two
// text deltas are the chunks.
var azureResponses = []azureEvent{
	{"response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_az1","object":"response","created_at":1733150000,"model":"gpt-4o-2024-11-20","status":"in_progress","output":[]}}`, false},
	{"response.output_item.added", `{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"message","id":"msg_az1","role":"assistant","status":"in_progress","content":[]}}`, false},
	{"response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_az1","output_index":0,"content_index":0,"delta":"Hello"}`, true},
	{"response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_az1","output_index":0,"content_index":0,"delta":" Azure"}`, true},
	{"response.completed", `{"type":"response.completed","sequence_number":4,"response":{"id":"resp_az1","object":"response","created_at":1733150000,"model":"gpt-4o-2024-11-20","status":"completed","output":[],"usage":{"input_tokens":9,"input_tokens_details":{"cached_tokens":0},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":11}}}`, false},
}

func newAzureServer(t *testing.T, gap time.Duration, events []azureEvent) *azureServer {
	t.Helper()
	s := &azureServer{gap: gap, events: events}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *azureServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var b struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &b)
	s.mu.Lock()
	s.reqs = append(s.reqs, azureRequest{r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Get("Api-Key"), b.Model})
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	fl.Flush()
	for _, ev := range s.events {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(s.gap):
		}
		sent := time.Now() // before the write: no client reads the event earlier
		if ev.name != "" {
			fmt.Fprintf(w, "event: %s\n", ev.name)
		}
		fmt.Fprintf(w, "data: %s\n\n", ev.data)
		fl.Flush()
		if ev.content {
			s.mu.Lock()
			s.sent = append(s.sent, sent)
			s.mu.Unlock()
		}
	}
}

func (s *azureServer) lastRequest(t *testing.T) azureRequest {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) != 1 {
		t.Fatalf("the server got %d requests, want 1", len(s.reqs))
	}
	return s.reqs[0]
}

func (s *azureServer) sentTimes() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.sent...)
}

// base returns a transport to s. With host, every connection goes to s whatever the URL's host
// (the name an Azure endpoint has, NAME.openai.azure.com), and s's certificate is checked for the
// name it was issued to.
func (s *azureServer) base(host bool) http.RoundTripper {
	tr := s.Client().Transport.(*http.Transport).Clone()
	if host {
		addr := s.Listener.Addr().String()
		tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}
		tr.TLSClientConfig.ServerName = "example.com" // httptest's certificate's name
	}
	return tr
}

func azureTracing(t *testing.T, base http.RoundTripper) (*http.Client, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return &http.Client{Transport: httpitl.NewTransport(base, httpitl.WithTracerProvider(tp))}, exp
}

// readAzureChat streams a chat through c and returns its text.
func readAzureChat(t *testing.T, c openai.Client, model string) string {
	t.Helper()
	stream := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
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
	return text.String()
}

// checkAzureSpan checks the span of an Azure chat: its provider and models, its three chunks (the
// prompt filter results, the role-only delta, the finish and the asynchronous filter's results
// are none) each seen when the server sent it, the first chunk's arrival the time to first chunk.
func checkAzureSpan(t *testing.T, s *azureServer, exp *tracetest.InMemoryExporter, host, requestModel string) {
	t.Helper()
	span, attrs := oneSpan(t, exp)
	wraptest.CheckTimeline(t, span, attrs, s.sentTimes(), wraptest.Busy())
	if span.Name != "chat "+requestModel {
		t.Errorf("span name %q, want %q", span.Name, "chat "+requestModel)
	}
	checkAttrs(t, span, attrs, map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "azure.ai.openai", "gen_ai.request.model": requestModel,
		"gen_ai.response.model": "gpt-4o-2024-11-20", "gen_ai.response.id": "chatcmpl-Az1", "gen_ai.request.stream": "true",
		"gen_ai.response.finish_reasons": `["stop"]`, "gen_ai.usage.input_tokens": "9", "gen_ai.usage.output_tokens": "3",
		"otelitl.chunk.count": "3", "server.address": host, "http.response.status_code": "200", "error.type": "",
	})
	ttft := attrs[attribute.Key("gen_ai.response.time_to_first_chunk")]
	if ttft.Type() != attribute.FLOAT64 {
		t.Fatalf("no gen_ai.response.time_to_first_chunk: %v", ttft)
	}
	// The time to first chunk is the first content event's: an earlier event counted as the first
	// chunk would make it shorter.
	first := wraptest.Arrivals(span, attrs)[0].Sub(span.StartTime)
	if d := time.Duration(ttft.AsFloat64() * float64(time.Second)); (first - d).Abs() > time.Microsecond {
		t.Errorf("time to first chunk %v, the first chunk arrived %v after the start", d, first)
	}
}

// TestAzureDeployment: openai-go's azure package, as Azure's guides configure it, through
// httpitl's transport: the request goes to /openai/deployments/{model}/chat/completions with its
// api-version, and the span says azure.ai.openai, with the deployment as the request model, the
// model Azure answers with as the response model, and only the content events as chunks.
func TestAzureDeployment(t *testing.T) {
	for _, tc := range []struct {
		name string
		host bool // the endpoint has an Azure host name; else the server's loopback URL
	}{{"loopback endpoint", false}, {"Azure host", true}} {
		t.Run(tc.name, func(t *testing.T) {
			quietGC(t)
			s := newAzureServer(t, 8*time.Millisecond, azureChat)
			hc, exp := azureTracing(t, s.base(tc.host))
			endpoint, host := s.URL, "127.0.0.1"
			if tc.host {
				endpoint, host = "https://res-eu.openai.azure.com", "res-eu.openai.azure.com"
			}
			c := openai.NewClient(azure.WithEndpoint(endpoint, "2024-10-21"), azure.WithAPIKey("azure-key"),
				option.WithHTTPClient(hc), option.WithMaxRetries(0))
			if got := readAzureChat(t, c, "prod-gpt4o"); got != "Hello from Azure" {
				t.Errorf("the SDK read %q", got)
			}
			if r := s.lastRequest(t); r.path != "/openai/deployments/prod-gpt4o/chat/completions" || r.query != "api-version=2024-10-21" || r.apiKey != "azure-key" {
				t.Errorf("the server got %+v", r)
			}
			checkAzureSpan(t, s, exp, host, "prod-gpt4o")
		})
	}
}

// TestAzureV1: Azure's v1 API (https://NAME.openai.azure.com/openai/v1/), which OpenAI's own
// client reaches with its base URL and Azure's api-key header. Its path names no deployment: the
// host tells Azure, and the body's model (the deployment's name, in the v1 API) names the model.
func TestAzureV1(t *testing.T) {
	quietGC(t)
	s := newAzureServer(t, 8*time.Millisecond, azureChat)
	hc, exp := azureTracing(t, s.base(true))
	c := openai.NewClient(option.WithBaseURL("https://res-eu.openai.azure.com/openai/v1/"), option.WithHeader("api-key", "azure-key"),
		option.WithAPIKey("unused"), option.WithHTTPClient(hc), option.WithMaxRetries(0))
	if got := readAzureChat(t, c, "gpt-4o-mini-prod"); got != "Hello from Azure" {
		t.Errorf("the SDK read %q", got)
	}
	if r := s.lastRequest(t); r.path != "/openai/v1/chat/completions" || r.apiKey != "azure-key" || r.model != "gpt-4o-mini-prod" {
		t.Errorf("the server got %+v", r)
	}
	checkAzureSpan(t, s, exp, "res-eu.openai.azure.com", "gpt-4o-mini-prod")
}

// TestAzureNoModel: a request to a deployment whose body names no model (Azure's REST examples,
// curl, clients that leave it out as Azure allows) is named by the deployment.
func TestAzureNoModel(t *testing.T) {
	quietGC(t)
	s := newAzureServer(t, 8*time.Millisecond, azureChat)
	hc, exp := azureTracing(t, s.base(false))
	req, err := http.NewRequest(http.MethodPost, s.URL+"/openai/deployments/prod-gpt4o/chat/completions?api-version=2024-10-21",
		bytes.NewReader([]byte(`{"messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("api-key", "azure-key")
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	checkAzureSpan(t, s, exp, "127.0.0.1", "prod-gpt4o")
}

// TestAzureLateModel: a deployment's request whose body names its model only after the bytes read
// before the span starts is named by the deployment, which the span started with; the model read
// later does not rename it.
func TestAzureLateModel(t *testing.T) {
	quietGC(t)
	s := newAzureServer(t, 8*time.Millisecond, azureChat)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	hc := &http.Client{Transport: httpitl.NewTransport(s.base(false), httpitl.WithTracerProvider(tp), httpitl.WithMaxRequestBytes(64))}
	body := `{"messages":[{"role":"user","content":"` + strings.Repeat("a", 200) + `"}],"stream":true,"model":"gpt-4o"}`
	req, err := http.NewRequest(http.MethodPost, s.URL+"/openai/deployments/prod-gpt4o/chat/completions?api-version=2024-10-21", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	if r := s.lastRequest(t); r.model != "gpt-4o" {
		t.Errorf("the server got %+v: the body changed", r)
	}
	checkAzureSpan(t, s, exp, "127.0.0.1", "prod-gpt4o")
}

// TestAzureV1Responses: the Responses API on Azure's v1 API, through OpenAI's client: the host
// tells Azure, the body's model names the request.
func TestAzureV1Responses(t *testing.T) {
	quietGC(t)
	s := newAzureServer(t, 8*time.Millisecond, azureResponses)
	hc, exp := azureTracing(t, s.base(true))
	c := openai.NewClient(option.WithBaseURL("https://res-eu.openai.azure.com/openai/v1/"), option.WithHeader("api-key", "azure-key"),
		option.WithAPIKey("unused"), option.WithHTTPClient(hc), option.WithMaxRetries(0))
	stream := c.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model: "gpt-4o-mini-prod", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
	})
	for stream.Next() {
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	_ = stream.Close()
	if r := s.lastRequest(t); r.path != "/openai/v1/responses" || r.apiKey != "azure-key" {
		t.Errorf("the server got %+v", r)
	}
	span, attrs := oneSpan(t, exp)
	wraptest.CheckTimeline(t, span, attrs, s.sentTimes(), wraptest.Busy())
	checkAttrs(t, span, attrs, map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "azure.ai.openai", "gen_ai.request.model": "gpt-4o-mini-prod",
		"gen_ai.response.model": "gpt-4o-2024-11-20", "gen_ai.response.id": "resp_az1", "gen_ai.usage.output_tokens": "2",
		"otelitl.chunk.count": "2", "server.address": "res-eu.openai.azure.com", "error.type": "",
	})
}
