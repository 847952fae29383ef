package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// azureReply is a chat reply in Azure OpenAI's shapes: a first event of prompt_filter_results with
// no choices, content_filter_results on every choice, an asynchronous filter's
// content_filter_offsets, then usage. Two events carry content.
var azureReply = []string{
	`{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}}}]}`,
	`{"choices":[{"content_filter_results":{},"delta":{"content":"","role":"assistant"},"finish_reason":null,"index":0}],"created":1733150000,"id":"chatcmpl-Az1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk"}`,
	`{"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},"delta":{"content":"Hello"},"finish_reason":null,"index":0}],"created":1733150000,"id":"chatcmpl-Az1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk"}`,
	`{"choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},"delta":{"content":" Azure"},"finish_reason":null,"index":0}],"created":1733150000,"id":"chatcmpl-Az1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk"}`,
	`{"choices":[{"content_filter_results":{},"delta":{},"finish_reason":"stop","index":0}],"created":1733150000,"id":"chatcmpl-Az1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk"}`,
	`{"choices":[{"content_filter_offsets":{"check_offset":0,"start_offset":0,"end_offset":11},"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},"finish_reason":null,"index":0}],"created":0,"id":"","model":"","object":""}`,
	`{"choices":[],"created":1733150000,"id":"chatcmpl-Az1","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","usage":{"completion_tokens":2,"prompt_tokens":9,"total_tokens":11}}`,
	`[DONE]`,
}

// TestAzureThroughProxy: Azure OpenAI's clients, pointed at the proxy, reach an Azure upstream
// (-openai https://NAME.openai.azure.com) with their path and api-version intact, and the proxy
// records the generation as azure.ai.openai: openai-go's azure package (its endpoint the proxy's
// URL) on a deployment's path, and OpenAI's client on Azure's v1 API (its base URL the proxy's
// /openai/v1/), which only the upstream's host tells from OpenAI's.
func TestAzureThroughProxy(t *testing.T) {
	type seen struct{ path, query, key string }
	got := make(chan seen, 1)
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got <- seen{r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Get("Api-Key")}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range azureReply {
			fmt.Fprintf(w, "data: %s\n\n", ev)
			w.(http.Flusher).Flush()
		}
	}))
	defer up.Close()
	for _, tc := range []struct {
		name       string
		azureHost  string // the upstream's host, dialled to up; empty: up's URL
		clientBase string // OpenAI's client with this base URL under the proxy's; empty: the azure package on a deployment
		path       string
		query      string
		model      string
		provider   string
	}{
		{"deployment, loopback upstream", "", "", "/openai/deployments/prod-gpt4o/chat/completions", "api-version=2024-10-21", "prod-gpt4o", "azure.ai.openai"},
		{"deployment, Azure upstream", "res-eu.openai.azure.com", "", "/openai/deployments/prod-gpt4o/chat/completions", "api-version=2024-10-21", "prod-gpt4o", "azure.ai.openai"},
		{"v1, Azure upstream", "res-eu.openai.azure.com", "/openai/v1/", "/openai/v1/chat/completions", "", "gpt-4o-mini-prod", "azure.ai.openai"},
		// Azure AI Foundry: a resource's model inference API (its endpoint .../models), and a
		// project's OpenAI v1 API (.../api/projects/P/openai/v1), which went to the Ollama upstream
		// by its /api/ and to none by /models/.
		{"Foundry model inference", "res-eu.services.ai.azure.com", "/models/", "/models/chat/completions", "", "Phi-4", "azure.ai.inference"},
		{"Foundry project", "res-eu.services.ai.azure.com", "/api/projects/p1/openai/v1/", "/api/projects/p1/openai/v1/chat/completions", "", "gpt-4o-mini-prod", "azure.ai.openai"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			defer tp.Shutdown(context.Background())
			base := up.Client().Transport.(*http.Transport).Clone()
			upstream, host := up.URL, "127.0.0.1"
			if tc.azureHost != "" {
				upstream, host = "https://"+tc.azureHost, tc.azureHost
				base.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
					var d net.Dialer
					return d.DialContext(ctx, network, up.Listener.Addr().String())
				}
				base.TLSClientConfig.ServerName = "example.com" // httptest's certificate's name
			}
			c, err := parseConfig([]string{"-openai", upstream}, func(string) string { return "" }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			proxy := httptest.NewServer(newHandler(c, upstreamTransport(base, tp), log.New(io.Discard, "", 0)))
			defer proxy.Close()
			opts := []option.RequestOption{azure.WithEndpoint(proxy.URL, "2024-10-21"), azure.WithAPIKey("azure-key"), azure.WithUnsafeAllowHTTP()}
			if tc.clientBase != "" {
				opts = []option.RequestOption{option.WithBaseURL(proxy.URL + tc.clientBase), option.WithHeader("api-key", "azure-key"), option.WithAPIKey("unused")}
			}
			client := openai.NewClient(append(opts, option.WithMaxRetries(0))...)
			stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
				Model: tc.model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
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
			if text.String() != "Hello Azure" {
				t.Errorf("the client read %q", text.String())
			}
			if s := <-got; s.path != tc.path || s.query != tc.query || s.key != "azure-key" {
				t.Errorf("the upstream got %+v, want path %s, query %q and the key", s, tc.path, tc.query)
			}
			spans := oneSpan(t, exp)
			if spans[0].Name != "chat "+tc.model {
				t.Errorf("span %q, want %q", spans[0].Name, "chat "+tc.model)
			}
			for k, want := range map[string]string{
				"gen_ai.provider.name": tc.provider, "gen_ai.request.model": tc.model, "gen_ai.response.model": "gpt-4o-2024-11-20",
				"gen_ai.response.id": "chatcmpl-Az1", "otelitl.chunk.count": "2", "server.address": host, "error.type": "",
			} {
				if got := spanAttr(spans[0], k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
		})
	}
}

// TestUpstreamAzureDeployment: an upstream given as an Azure OpenAI deployment's URL, which no
// client path reached (the azure clients add the deployment's path themselves: .../openai/
// deployments/D/openai/deployments/D/chat/completions; OpenAI's add /v1/chat/completions), is refused
// at start with the setting as given, the base URL to give instead and the endpoint to give the
// client. Before, the base was accepted and every request failed upstream.
func TestUpstreamAzureDeployment(t *testing.T) {
	checkConfigs(t, []configCase{
		{nil, []string{"-openai", "https://res.openai.azure.com/openai/deployments/gpt-4o"}, []string{
			`-openai "https://res.openai.azure.com/openai/deployments/gpt-4o": drop /openai/deployments/gpt-4o, as in -openai https://res.openai.azure.com:`,
			"/openai/deployments/NAME/chat/completions?api-version=", "AZURE_OPENAI_ENDPOINT=http://127.0.0.1:8787"}},
		{nil, []string{"-openai", "https://res.openai.azure.com/openai/deployments/gpt-4o/"}, []string{"drop /openai/deployments/gpt-4o, as in -openai https://res.openai.azure.com:"}},
		{nil, []string{"-openai", "https://res.openai.azure.com/openai/deployments"}, []string{"drop /openai/deployments, as in -openai https://res.openai.azure.com:"}},
		{nil, []string{"-openai", "https://res.openai.azure.com/OpenAI/Deployments/gpt-4o"}, []string{"drop /OpenAI/Deployments/gpt-4o, as in -openai https://res.openai.azure.com:"}},
		{nil, []string{"-openai", "https://apim.azure-api.net/aoai/openai/deployments/d/chat/completions?api-version=2024-10-21"}, []string{
			"drop /openai/deployments/d/chat/completions and the query, as in -openai https://apim.azure-api.net/aoai:"}},
		{nil, []string{"-addr", ":9000", "-openai", "https://res.openai.azure.com/openai/deployments/d"}, []string{"AZURE_OPENAI_ENDPOINT=http://127.0.0.1:9000"}},
		{nil, []string{"-tls-cert", "c.pem", "-tls-key", "k.pem", "-openai", "https://res.openai.azure.com/openai/deployments/d"}, []string{"AZURE_OPENAI_ENDPOINT=https://127.0.0.1:8787"}},
		{nil, []string{"-addr", "10.0.0.5:8787", "-openai", "https://res.openai.azure.com/openai/deployments/d"}, []string{"AZURE_OPENAI_ENDPOINT=http://10.0.0.5:8787"}},
		{map[string]string{"OTELITL_PROXY_OPENAI": "https://user:s3cret@res.openai.azure.com/openai/deployments/d"}, nil, []string{
			`OTELITL_PROXY_OPENAI="https://user:xxxxx@res.openai.azure.com/openai/deployments/d": drop /openai/deployments/d, as in OTELITL_PROXY_OPENAI=https://user:xxxxx@res.openai.azure.com:`}},
		// Azure's v1 base URL as its docs give it: cut to the resource, which serves both kinds of
		// client; the trailing /v1 alone left .../openai, under which an Azure client's paths, and
		// OPENAI_BASE_URL=.../openai/v1 as the README gives it, got /openai/openai/...
		{nil, []string{"-openai", "https://res.openai.azure.com/openai/v1"}, []string{
			`-openai "https://res.openai.azure.com/openai/v1": drop /openai/v1, as in -openai https://res.openai.azure.com:`,
			"OPENAI_BASE_URL=http://127.0.0.1:8787/openai/v1", "AZURE_OPENAI_ENDPOINT=http://127.0.0.1:8787"}},
		{nil, []string{"-openai", "https://res.cognitiveservices.azure.com/OpenAI/v1/"}, []string{"drop /OpenAI/v1, as in -openai https://res.cognitiveservices.azure.com:"}},
		{map[string]string{"OTELITL_PROXY_OPENAI": "https://user:s3cret@res.services.ai.azure.com/openai/v1"}, nil, []string{
			`OTELITL_PROXY_OPENAI="https://user:xxxxx@res.services.ai.azure.com/openai/v1": drop /openai/v1, as in OTELITL_PROXY_OPENAI=https://user:xxxxx@res.services.ai.azure.com:`}},
		{nil, []string{"-openai", "https://res.openai.azure.us/openai/v1"}, []string{"drop /openai/v1, as in -openai https://res.openai.azure.us:"}},
		// A Foundry project's: the resource, the project's path to the client, as the README gives them.
		{nil, []string{"-openai", "https://res.services.ai.azure.com/api/projects/p1/openai/v1"}, []string{
			"drop /api/projects/p1/openai/v1, as in -openai https://res.services.ai.azure.com:", "OPENAI_BASE_URL=http://127.0.0.1:8787/api/projects/p1/openai/v1"}},
		// The same with the query Azure's v1 preview takes (?api-version=preview), a fragment, or
		// an endpoint's whole URL: cut to the resource too, where the query alone made the proxy
		// give .../openai (or .../api/projects/P/openai), the base the lines above refuse.
		{nil, []string{"-openai", "https://res.openai.azure.com/openai/v1?api-version=preview"}, []string{
			`-openai "https://res.openai.azure.com/openai/v1?api-version=preview": drop /openai/v1 and the query, as in -openai https://res.openai.azure.com:`,
			"OPENAI_BASE_URL=http://127.0.0.1:8787/openai/v1 for the v1 API", "AZURE_OPENAI_ENDPOINT=http://127.0.0.1:8787"}},
		{nil, []string{"-openai", "https://res.openai.azure.com/openai/v1/#x"}, []string{"drop /openai/v1 and the fragment, as in -openai https://res.openai.azure.com:"}},
		{nil, []string{"-openai", "https://res.openai.azure.com/openai/v1/chat/completions"}, []string{
			"drop /openai/v1/chat/completions, as in -openai https://res.openai.azure.com:", "OPENAI_BASE_URL=http://127.0.0.1:8787/openai/v1 for the v1 API"}},
		{nil, []string{"-openai", "https://res.services.ai.azure.com/api/projects/p1/openai/v1/responses?api-version=preview"}, []string{
			"drop /api/projects/p1/openai/v1/responses and the query, as in -openai https://res.services.ai.azure.com:", "OPENAI_BASE_URL=http://127.0.0.1:8787/api/projects/p1/openai/v1"}},
		// A Foundry resource's model inference endpoint (.../models, as the portal gives it, or an
		// endpoint's URL under it): the proxy appends the client's /models/..., so the upstream is
		// the resource, where .../models was taken and every request went to /models/models/...
		{nil, []string{"-openai", "https://res.services.ai.azure.com/models"}, []string{
			`-openai "https://res.services.ai.azure.com/models": drop /models, as in -openai https://res.services.ai.azure.com:`,
			"OPENAI_BASE_URL=http://127.0.0.1:8787/models"}},
		{nil, []string{"-openai", "https://res.services.ai.azure.cn/Models/chat/completions?api-version=2024-05-01-preview"}, []string{
			"drop /Models/chat/completions and the query, as in -openai https://res.services.ai.azure.cn:", "OPENAI_BASE_URL=http://127.0.0.1:8787/models"}},
		// Another host's /openai/v1 (Groq's) drops the /v1 only: its /openai is its own.
		{nil, []string{"-openai", "https://api.groq.com/openai/v1"}, []string{"drop the trailing /v1, as in -openai https://api.groq.com/openai:"}},
		// Bases that work: the resource (the azure clients' paths, and /openai/v1/... from OpenAI's
		// client), its /openai (OpenAI's client with /v1), and paths that only look alike.
		{nil, []string{"-openai", "https://res.openai.azure.com"}, nil},
		{nil, []string{"-openai", "https://res.openai.azure.com/openai"}, nil},
		{nil, []string{"-openai", "https://gw.example/models"}, nil},
		{nil, []string{"-openai", "https://gw.example/openai/deployments-eu"}, nil},
		{nil, []string{"-openai", "https://gw.example/my/openai/deploymentsx/d"}, nil},
	})
}

// TestNotFoundNamesAzure: the proxy's answer to a path it serves under no API names Azure
// OpenAI's paths beside the others'.
func TestNotFoundNamesAzure(t *testing.T) {
	proxy, _ := startProxy(t, "-openai", "https://res.openai.azure.com")
	res, err := http.Post(proxy.URL+"/", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if msg := errorMessage(res); res.StatusCode != http.StatusNotFound || !strings.Contains(msg, "/openai/... and /api/projects/... (Azure OpenAI)") || !strings.Contains(msg, "/models/... (Azure AI model inference)") {
		t.Errorf("POST /: %d %q, want 404 naming Azure OpenAI's and Azure AI model inference's paths", res.StatusCode, msg)
	}
}

// TestProxyURLOfAnyPort: with -addr at port 0 the port is chosen at start, so the client's URL an
// upstream's error gives names it PORT, where it gave http://127.0.0.1:0/..., which no client
// reaches.
func TestProxyURLOfAnyPort(t *testing.T) {
	_, err := parseConfig([]string{"-addr", "127.0.0.1:0", "-openai", "https://res.openai.azure.com/openai/v1"}, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "OPENAI_BASE_URL=http://127.0.0.1:PORT/openai/v1 for the v1 API, and an Azure client AZURE_OPENAI_ENDPOINT=http://127.0.0.1:PORT (PORT: the one it announces at start)") {
		t.Errorf("error %v, want the client's URL with PORT", err)
	}
	if got := proxyURL("127.0.0.1:8787", false); got != "http://127.0.0.1:8787" {
		t.Errorf("proxyURL of a port given: %s", got)
	}
}

// oneSpan waits up to 5 s for the proxy's one span and returns it (as a slice of one), failing t
// for none or more: the proxy's generation ends when the upstream's body does, which may be after
// the client has read the last event.
func oneSpan(t *testing.T, exp *tracetest.InMemoryExporter) tracetest.SpanStubs {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(exp.GetSpans()) == 0 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	return spans
}
