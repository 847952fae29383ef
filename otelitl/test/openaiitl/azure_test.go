package openaiitl_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/httpitl"
	"github.com/otelitl/itl/otelitl/openaiitl"
)

// azureChat is a Chat Completions reply in Azure OpenAI's shapes: a first event of
// prompt_filter_results with no choices, content_filter_results on every choice, an asynchronous
// filter's content_filter_offsets after the finish reason, then usage. Three events carry content.
var azureChat = []wraptest.Event{
	{Data: `{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}}}]}`},
	{Data: `{"choices":[{"content_filter_results":{},"delta":{"content":"","refusal":null,"role":"assistant"},"finish_reason":null,"index":0,"logprobs":null}],"created":1733150000,"id":"chatcmpl-Az1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk"}`},
	{Data: `{"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},"delta":{"content":"Hello"},"finish_reason":null,"index":0,"logprobs":null}],"created":1733150000,"id":"chatcmpl-Az1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk"}`, Content: true},
	{Data: `{"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},"delta":{"content":" from"},"finish_reason":null,"index":0,"logprobs":null}],"created":1733150000,"id":"chatcmpl-Az1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk"}`, Content: true},
	{Data: `{"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},"delta":{"content":" Azure"},"finish_reason":null,"index":0,"logprobs":null}],"created":1733150000,"id":"chatcmpl-Az1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk"}`, Content: true},
	{Data: `{"choices":[{"content_filter_results":{},"delta":{},"finish_reason":"stop","index":0,"logprobs":null}],"created":1733150000,"id":"chatcmpl-Az1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk"}`},
	{Data: `{"choices":[{"content_filter_offsets":{"check_offset":0,"start_offset":0,"end_offset":16},"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},"finish_reason":null,"index":0}],"created":0,"id":"","model":"","object":""}`},
	{Data: `{"choices":[],"created":1733150000,"id":"chatcmpl-Az1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","usage":{"completion_tokens":3,"prompt_tokens":9,"total_tokens":12}}`},
	{Data: `[DONE]`},
}

// azureResponses is a Responses API reply as Azure streams it (OpenAI's events): two text deltas.
var azureResponses = []wraptest.Event{
	{Name: "response.created", Data: `{"type":"response.created","sequence_number":0,"response":{"id":"resp_az1","object":"response","created_at":1733150000,"model":"gpt-4o-2024-11-20","status":"in_progress","output":[]}}`},
	{Name: "response.output_text.delta", Data: `{"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_az1","output_index":0,"content_index":0,"delta":"Hello"}`, Content: true},
	{Name: "response.output_text.delta", Data: `{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_az1","output_index":0,"content_index":0,"delta":" Azure"}`, Content: true},
	{Name: "response.completed", Data: `{"type":"response.completed","sequence_number":3,"response":{"id":"resp_az1","object":"response","created_at":1733150000,"model":"gpt-4o-2024-11-20","status":"completed","output":[],"usage":{"input_tokens":9,"input_tokens_details":{"cached_tokens":0},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":11}}}`},
}

// azureHost is the name an Azure OpenAI resource's endpoint has.
const azureHost = "res-eu.openai.azure.com"

// tlsBase returns a transport to srv, a TLS server. With host, every connection goes to srv
// whatever the URL's host (azureHost), and srv's certificate is checked for the name it was issued
// to.
func tlsBase(srv *wraptest.Server, host bool) *http.Transport {
	tr := srv.Client().Transport.(*http.Transport).Clone()
	if host {
		addr := srv.Listener.Addr().String()
		tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}
		tr.TLSClientConfig.ServerName = "example.com" // httptest's certificate's name
	}
	return tr
}

// azureRun is one wrapped call with httpitl's transport under the SDK too: the wrapper's span,
// the transport's (what httpitl records for the same request) and the wrapper's metrics.
type azureRun struct {
	wrapped, transport map[attribute.Key]attribute.Value
	name               string // the wrapper's span's name
	span               tracetest.SpanStub
	metrics            metricdata.ResourceMetrics
}

// runBoth makes a client of opts whose HTTP client is httpitl's transport over base, and calls
// call with it and an Instrumentation for the wrapper (tracing and metrics).
func runBoth(t *testing.T, base http.RoundTripper, call func(c openai.Client, in *otelitl.Instrumentation), opts ...option.RequestOption) azureRun {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	in, exp := wraptest.Tracing(t, otelitl.WithMeterProvider(mp))
	inT, expT := wraptest.Tracing(t)
	hc := &http.Client{Transport: httpitl.NewTransport(base, httpitl.WithInstrumentation(inT))}
	c := openai.NewClient(append(opts, option.WithHTTPClient(hc), option.WithMaxRetries(0))...)
	call(c, in)
	var r azureRun
	r.span, r.wrapped = wraptest.OneSpan(t, exp)
	r.name = r.span.Name
	_, r.transport = wraptest.OneSpan(t, expT)
	if err := reader.Collect(context.Background(), &r.metrics); err != nil {
		t.Fatal(err)
	}
	return r
}

// durationProviders returns the provider of each point of gen_ai.client.operation.duration.
func durationProviders(t *testing.T, rm metricdata.ResourceMetrics) []string {
	t.Helper()
	var ps []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "gen_ai.client.operation.duration" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				v, _ := dp.Attributes.Value(semconv.GenAIProviderNameKey)
				ps = append(ps, v.AsString())
			}
		}
	}
	return ps
}

func chatAzure(t *testing.T, model string) func(c openai.Client, in *otelitl.Instrumentation) {
	return func(c openai.Client, in *otelitl.Instrumentation) {
		t.Helper()
		stream := openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, openai.ChatCompletionNewParams{
			Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		})
		var text string
		for stream.Next() {
			for _, ch := range stream.Current().Choices {
				text += ch.Delta.Content
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		_ = stream.Close()
		if text != "Hello from Azure" {
			t.Errorf("the SDK read %q", text)
		}
	}
}

// checkLikeTransport checks that the wrapper's span names the provider and the request model as
// httpitl's transport does for the same request.
func checkLikeTransport(t *testing.T, r azureRun) {
	t.Helper()
	for _, k := range []attribute.Key{semconv.GenAIProviderNameKey, semconv.GenAIRequestModelKey} {
		if w, h := r.wrapped[k].String(), r.transport[k].String(); w != h {
			t.Errorf("%s: the wrapper records %q, httpitl's transport %q", k, w, h)
		}
	}
}

// TestAzureDeployment: openai-go's azure package, as Azure's guides configure it, through the
// wrapper: the SDK sends the call to /openai/deployments/{model}/chat/completions, and the span
// says azure.ai.openai (on the span and the metrics), with the deployment as the request model and
// in the span's name, the model Azure answers with as the response model, and only the content
// events as chunks, as httpitl's transport records the same request. Before, it said openai.
func TestAzureDeployment(t *testing.T) {
	for _, tc := range []struct {
		name string
		host bool // the endpoint has an Azure host name; else the server's loopback URL
	}{{"loopback endpoint", false}, {"Azure host", true}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wraptest.NewTLSServer(t, azureChat, 5*time.Millisecond)
			endpoint, host := srv.URL, "127.0.0.1"
			if tc.host {
				endpoint, host = "https://"+azureHost, azureHost
			}
			r := runBoth(t, tlsBase(srv, tc.host), chatAzure(t, "prod-gpt4o"),
				azure.WithEndpoint(endpoint, "2024-10-21"), azure.WithAPIKey("azure-key"))
			if us := srv.URLs(); len(us) != 1 || us[0].Path != "/openai/deployments/prod-gpt4o/chat/completions" || us[0].RawQuery != "api-version=2024-10-21" {
				t.Errorf("the server got %v", us)
			}
			if r.name != "chat prod-gpt4o" {
				t.Errorf("span name %q, want %q", r.name, "chat prod-gpt4o")
			}
			for k, want := range map[string]string{
				"gen_ai.provider.name": "azure.ai.openai", "gen_ai.request.model": "prod-gpt4o",
				"gen_ai.response.model": "gpt-4o-2024-11-20", "gen_ai.response.id": "chatcmpl-Az1",
				"gen_ai.response.finish_reasons": `["stop"]`, "gen_ai.usage.input_tokens": "9",
				"gen_ai.usage.output_tokens": "3", "otelitl.chunk.count": "3", "server.address": host,
			} {
				if got := r.wrapped[attrKey(k)].String(); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			wraptest.CheckTimeline(t, r.span, r.wrapped, srv.Sent(), wraptest.Busy())
			checkLikeTransport(t, r)
			if ps := durationProviders(t, r.metrics); len(ps) != 1 || ps[0] != "azure.ai.openai" {
				t.Errorf("gen_ai.client.operation.duration's providers %q, want [azure.ai.openai]", ps)
			}
		})
	}
}

// TestAzureResponses: the Responses API through openai-go's azure package, which sends it to
// /openai/responses, naming no deployment: on an Azure host the span says azure.ai.openai; on a
// loopback endpoint nothing tells Azure, and it says openai, as httpitl's transport does (a
// gateway of one's own is named with WithProvider).
func TestAzureResponses(t *testing.T) {
	for _, tc := range []struct {
		name string
		host bool
		want string
	}{{"loopback endpoint", false, "openai"}, {"Azure host", true, "azure.ai.openai"}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wraptest.NewTLSServer(t, azureResponses, 5*time.Millisecond)
			endpoint := srv.URL
			if tc.host {
				endpoint = "https://" + azureHost
			}
			r := runBoth(t, tlsBase(srv, tc.host), func(c openai.Client, in *otelitl.Instrumentation) {
				n, err := drain[responses.ResponseStreamEventUnion](openaiitl.NewResponseStreaming(context.Background(), in, &c.Responses,
					responses.ResponseNewParams{Model: "prod-gpt4o", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}}))
				if n != len(azureResponses) || err != nil {
					t.Errorf("the SDK read %d events, %v", n, err)
				}
			}, azure.WithEndpoint(endpoint, "2025-03-01-preview"), azure.WithAPIKey("azure-key"))
			if us := srv.URLs(); len(us) != 1 || us[0].Path != "/openai/responses" {
				t.Errorf("the server got %v", us)
			}
			for k, want := range map[string]string{
				"gen_ai.provider.name": tc.want, "gen_ai.request.model": "prod-gpt4o",
				"gen_ai.response.model": "gpt-4o-2024-11-20", "otelitl.chunk.count": "2",
			} {
				if got := r.wrapped[attrKey(k)].String(); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			checkLikeTransport(t, r)
		})
	}
}

// TestAzureDeploymentInBaseURL: a plain OpenAI client whose base URL is a deployment's, with no
// model in its params (Azure routes by the path): the deployment is the request model, in the
// span's name too, as httpitl's transport has it.
func TestAzureDeploymentInBaseURL(t *testing.T) {
	srv := wraptest.NewTLSServer(t, azureChat, 5*time.Millisecond)
	r := runBoth(t, tlsBase(srv, false), chatAzure(t, ""),
		option.WithBaseURL(srv.URL+"/openai/deployments/prod-gpt4o/"), option.WithQuery("api-version", "2024-10-21"), option.WithHeader("api-key", "azure-key"), option.WithAPIKey("unused"))
	if us := srv.URLs(); len(us) != 1 || us[0].Path != "/openai/deployments/prod-gpt4o/chat/completions" {
		t.Errorf("the server got %v", us)
	}
	if r.name != "chat prod-gpt4o" {
		t.Errorf("span name %q, want %q", r.name, "chat prod-gpt4o")
	}
	if p, m := r.wrapped[semconv.GenAIProviderNameKey].String(), r.wrapped[semconv.GenAIRequestModelKey].String(); p != "azure.ai.openai" || m != "prod-gpt4o" {
		t.Errorf("provider %q, request model %q; want azure.ai.openai, prod-gpt4o", p, m)
	}
	checkLikeTransport(t, r)
}

// TestOpenAIUnchanged: a plain OpenAI client (a compatible server's /v1/ path on loopback) is
// still recorded as openai, with the params' model, as before.
func TestOpenAIUnchanged(t *testing.T) {
	srv := wraptest.NewTLSServer(t, azureChat, 0)
	r := runBoth(t, tlsBase(srv, false), chatAzure(t, "gpt-4o"), option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("key"))
	if r.name != "chat gpt-4o" || r.wrapped[semconv.GenAIProviderNameKey].String() != "openai" || r.wrapped[semconv.GenAIRequestModelKey].String() != "gpt-4o" {
		t.Errorf("span %q: provider %q, request model %q; want chat gpt-4o, openai, gpt-4o", r.name,
			r.wrapped[semconv.GenAIProviderNameKey].String(), r.wrapped[semconv.GenAIRequestModelKey].String())
	}
	if ps := durationProviders(t, r.metrics); len(ps) != 1 || ps[0] != "openai" {
		t.Errorf("gen_ai.client.operation.duration's providers %q, want [openai]", ps)
	}
}

// TestWithProvider: WithProvider names the provider, given to the client or to one call (the
// call's wins), over what the URL tells (Azure's deployment path); an empty one leaves the URL's.
// The request is sent as without it.
func TestWithProvider(t *testing.T) {
	for _, tc := range []struct {
		name         string
		client, call []option.RequestOption
		base         string
		want         string
	}{
		{"client", []option.RequestOption{openaiitl.WithProvider("groq")}, nil, "/openai/v1/", "groq"},
		{"call", nil, []option.RequestOption{openaiitl.WithProvider("deepseek")}, "/v1/", "deepseek"},
		{"call over client", []option.RequestOption{openaiitl.WithProvider("groq")}, []option.RequestOption{openaiitl.WithProvider("deepseek")}, "/v1/", "deepseek"},
		{"over Azure's path", []option.RequestOption{openaiitl.WithProvider("my-gateway")}, nil, "/openai/deployments/d/", "my-gateway"},
		{"empty", []option.RequestOption{openaiitl.WithProvider("")}, nil, "/openai/deployments/d/", "azure.ai.openai"},
		{"openai over Azure's path", nil, []option.RequestOption{openaiitl.WithProvider("openai")}, "/openai/deployments/d/", "openai"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wraptest.NewTLSServer(t, azureChat, 0)
			in, exp := wraptest.Tracing(t)
			c := openai.NewClient(append(tc.client, option.WithBaseURL(srv.URL+tc.base), option.WithAPIKey("key"), option.WithHTTPClient(srv.Client()), option.WithMaxRetries(0))...)
			n, err := drain[openai.ChatCompletionChunk](openaiitl.NewChatStreaming(context.Background(), in, &c.Chat.Completions, chatParams, tc.call...))
			if n != len(azureChat)-1 || err != nil { // [DONE] is no chunk
				t.Errorf("the SDK read %d chunks, %v", n, err)
			}
			if us := srv.URLs(); len(us) != 1 || us[0].Path != tc.base+"chat/completions" {
				t.Errorf("the server got %v", us)
			}
			_, a := wraptest.OneSpan(t, exp)
			if got := a[semconv.GenAIProviderNameKey].String(); got != tc.want {
				t.Errorf("gen_ai.provider.name %q, want %q", got, tc.want)
			}
		})
	}
}
