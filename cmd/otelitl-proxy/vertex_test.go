package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestVertexClaudeThroughProxy: Claude on Vertex AI through the proxy, its upstream Vertex's host
// given to -anthropic: the request (as anthropic-sdk-go's vertex package sends it, with no
// anthropic-version header, the model and method in the path) reaches the -anthropic upstream with
// its path intact, and the proxy records it as gcp.vertex_ai with the path's model. It went to the
// -openai upstream, and without one was answered 404.
func TestVertexClaudeThroughProxy(t *testing.T) {
	const path = "/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"
	reply := []string{
		`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_vrtx_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"usage":{"input_tokens":12,"output_tokens":1}}}`,
		`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
		`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" Vertex"}}`,
		`event: message_delta` + "\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}`,
		`event: message_stop` + "\n" + `data: {"type":"message_stop"}`,
	}
	got := make(chan string, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got <- r.URL.Path
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range reply {
			fmt.Fprintf(w, "%s\n\n", ev)
			w.(http.Flusher).Flush()
		}
	}))
	defer up.Close()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	c, err := parseConfig([]string{"-anthropic", up.URL, "-openai", "http://127.0.0.1:1"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(newHandler(c, upstreamTransport(http.DefaultTransport.(*http.Transport).Clone(), tp), log.New(io.Discard, "", 0)))
	defer proxy.Close()
	req, _ := http.NewRequest(http.MethodPost, proxy.URL+path, strings.NewReader(`{"anthropic_version":"vertex-2023-10-16","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer ya29.test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"text":" Vertex"`) {
		t.Fatalf("status %d, body %.200q", resp.StatusCode, body)
	}
	if p := <-got; p != path {
		t.Errorf("the upstream got %s, want %s", p, path)
	}
	spans := oneSpan(t, exp)
	for k, want := range map[string]string{
		"gen_ai.provider.name": "gcp.vertex_ai", "gen_ai.request.model": "claude-sonnet-4-5@20250929",
		"gen_ai.response.model": "claude-sonnet-4-5-20250929", "otelitl.chunk.count": "2", "gen_ai.usage.output_tokens": "3", "error.type": "",
	} {
		if got := spanAttr(spans[0], k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

// TestNotConfiguredNamesTheUpstreamOfThePath: a request for an upstream the proxy was not given is
// answered with the flag to set and an example of its base URL for that request's API: Claude on
// Vertex AI needs -anthropic set to Vertex's host, not https://api.anthropic.com, which its
// message gave, and which would send Vertex's paths and Google's token to Anthropic; an Azure
// path needs -openai set to the Azure resource, not https://api.openai.com.
func TestNotConfiguredNamesTheUpstreamOfThePath(t *testing.T) {
	c, err := parseConfig([]string{"-ollama", "http://127.0.0.1:1"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(newHandler(c, http.DefaultTransport, log.New(io.Discard, "", 0)))
	defer proxy.Close()
	for _, tc := range []struct{ path, want, not string }{
		{"/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict",
			"start the proxy with -anthropic (or OTELITL_PROXY_ANTHROPIC) set to Vertex AI's base URL, such as https://us-east5-aiplatform.googleapis.com", "api.anthropic.com"},
		{"/v1/projects/p/locations/global/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict",
			"-anthropic (or OTELITL_PROXY_ANTHROPIC) set to Vertex AI's base URL, such as https://aiplatform.googleapis.com", "api.anthropic.com"},
		{"/v1/projects/p/locations/us/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict",
			"-anthropic (or OTELITL_PROXY_ANTHROPIC) set to Vertex AI's base URL, such as https://aiplatform.us.rep.googleapis.com", "api.anthropic.com"},
		{"/v1/projects/p/locations/europe-west4/publishers/google/models/gemini-2.5-flash:streamGenerateContent",
			"-gemini (or OTELITL_PROXY_GEMINI) set to Vertex AI's base URL, such as https://europe-west4-aiplatform.googleapis.com", "generativelanguage"},
		{"/openai/deployments/gpt-4o/chat/completions",
			"-openai (or OTELITL_PROXY_OPENAI) set to the Azure resource's URL, such as https://NAME.openai.azure.com", "api.openai.com"},
		{"/openai/v1/chat/completions",
			"-openai (or OTELITL_PROXY_OPENAI) set to the Azure resource's URL, such as https://NAME.openai.azure.com", "api.openai.com"},
		{"/models/chat/completions",
			"-openai (or OTELITL_PROXY_OPENAI) set to the Azure resource's URL, such as https://NAME.services.ai.azure.com", "api.openai.com"},
		{"/api/projects/p/openai/v1/chat/completions",
			"-openai (or OTELITL_PROXY_OPENAI) set to the Azure resource's URL, such as https://NAME.services.ai.azure.com", "api.openai.com"},
		{"/v1/messages", "-anthropic (or OTELITL_PROXY_ANTHROPIC) set to the API's base URL, such as https://api.anthropic.com", "aiplatform"},
		{"/v1/chat/completions", "-openai (or OTELITL_PROXY_OPENAI) set to the API's base URL, such as https://api.openai.com", "azure"},
		{"/v1beta/models/gemini-2.5-flash:streamGenerateContent", "-gemini (or OTELITL_PROXY_GEMINI) set to the API's base URL, such as https://generativelanguage.googleapis.com", "aiplatform"},
	} {
		resp, err := http.Post(proxy.URL+tc.path, "application/json", strings.NewReader(`{"stream":true}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), tc.want) || strings.Contains(string(body), tc.not) {
			t.Errorf("%s: status %d, want 502 with %q and no %q:\n%s", tc.path, resp.StatusCode, tc.want, tc.not, body)
		}
	}
}

// TestUpstreamVertexProject: Vertex AI's base URL as Google's SDKs and docs write it for a project
// (https://REGION-aiplatform.googleapis.com/v1/projects/P/locations/L), given as an upstream, is
// refused with the host to give: the clients send /v1/projects/P/locations/L/... themselves, and
// the proxy, which appends their path, sent every request to .../locations/L/v1/projects/..., and
// the upstream answered 404.
func TestUpstreamVertexProject(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the error; "": accepted
	}{
		{[]string{"-anthropic", "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5"},
			`-anthropic "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5": drop /v1/projects/p/locations/us-east5, as in -anthropic https://us-east5-aiplatform.googleapis.com: the client sends its project's path itself (/v1/projects/P/locations/L/...), which the proxy appends to the upstream`},
		{[]string{"-gemini", "https://aiplatform.googleapis.com/v1beta1/projects/p/locations/global/"},
			`drop /v1beta1/projects/p/locations/global, as in -gemini https://aiplatform.googleapis.com:`},
		{[]string{"-openai", "https://europe-west4-aiplatform.googleapis.com/v1/projects/p/locations/europe-west4/endpoints/openapi"},
			`drop /v1/projects/p/locations/europe-west4/endpoints/openapi, as in -openai https://europe-west4-aiplatform.googleapis.com:`},
		{[]string{"-anthropic", "https://aiplatform.eu.rep.googleapis.com/v1/projects/p/locations/eu"},
			`drop /v1/projects/p/locations/eu, as in -anthropic https://aiplatform.eu.rep.googleapis.com:`},
		{[]string{"-anthropic", "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5?alt=sse"},
			`drop /v1/projects/p/locations/us-east5 and the query, as in -anthropic https://us-east5-aiplatform.googleapis.com:`},
		// The fragment too, which the base to give kept (and the proxy then refused).
		{[]string{"-anthropic", "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5#x"},
			`drop /v1/projects/p/locations/us-east5 and the fragment, as in -anthropic https://us-east5-aiplatform.googleapis.com:`},
		// Python's AnthropicVertex's own base URL ends in /v1: the proxy's README gives its client
		// the proxy's URL with /v1, and the upstream is the host.
		{[]string{"-anthropic", "https://us-east5-aiplatform.googleapis.com"}, ""},
		{[]string{"-anthropic", "https://aiplatform.us.rep.googleapis.com"}, ""},
		{[]string{"-gemini", "https://gw.example/v1/projects/p"}, ""}, // a gateway's own path is its own
	} {
		_, err := parseConfig(tc.args, func(string) string { return "" }, io.Discard)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v, want it accepted", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want one with %q", tc.args, err, tc.want)
		}
	}
}
