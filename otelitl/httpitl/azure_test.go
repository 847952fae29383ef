package httpitl

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestDetectAzure: Azure OpenAI is told by its deployment's path on any host, or by a path under
// /openai/ on one of its hosts; look-alike hosts, and /openai/ paths on other hosts (Groq's), stay
// OpenAI's.
func TestDetectAzure(t *testing.T) {
	for _, tc := range []struct {
		url        string
		proto      protocol
		provider   string
		deployment string
	}{
		{"https://res.openai.azure.com/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21", protoChat, providerAzure, "gpt4o-prod"},
		{"https://res.openai.azure.com/openai/deployments/davinci/completions?api-version=2024-10-21", protoCompletions, providerAzure, "davinci"},
		{"https://res.openai.azure.com/openai/deployments/d.v2_x/extensions/chat/completions/", protoChat, providerAzure, "d.v2_x"},
		{"https://res.cognitiveservices.azure.com/openai/deployments/d/chat/completions?api-version=2025-04-01-preview", protoChat, providerAzure, "d"},
		{"https://res.services.ai.azure.com/openai/deployments/d/chat/completions", protoChat, providerAzure, "d"},
		// The v1 API and the Responses API name no deployment: the body's model is all there is.
		{"https://res.openai.azure.com/openai/v1/chat/completions", protoChat, providerAzure, ""},
		{"https://res.openai.azure.com/openai/v1/responses", protoResponses, providerAzure, ""},
		{"https://res.openai.azure.com/openai/responses?api-version=2025-03-01-preview", protoResponses, providerAzure, ""},
		{"https://res.services.ai.azure.com/openai/v1/chat/completions", protoChat, providerAzure, ""},
		{"https://res.cognitiveservices.azure.com/openai/v1/responses", protoResponses, providerAzure, ""},
		{"https://RES.OpenAI.Azure.COM:443/openai/v1/chat/completions", protoChat, providerAzure, ""},
		{"https://res.openai.azure.com./openai/v1/chat/completions", protoChat, providerAzure, ""},
		// A gateway (API Management, otelitl-proxy) keeps Azure's deployment path.
		{"https://apim.azure-api.net/openai/deployments/d/chat/completions?api-version=2024-10-21", protoChat, providerAzure, "d"},
		{"http://127.0.0.1:8787/prefix/openai/deployments/d/chat/completions", protoChat, providerAzure, "d"},
		// No deployment segment before the operation: on another host, OpenAI's.
		{"http://127.0.0.1:8787/openai/deployments//chat/completions", protoChat, providerOpenAI, ""},
		{"http://127.0.0.1:8787/openai/deployments/chat/completions", protoChat, providerOpenAI, ""},
		{"https://res.openai.azure.com/openai/deployments/chat/completions", protoChat, providerAzure, ""},
		// Look-alikes and other providers' /openai/ paths.
		{"https://evil-openai.azure.com.example.org/openai/v1/chat/completions", protoChat, providerOpenAI, ""},
		{"https://res.openai.azure.com.example.org/openai/v1/chat/completions", protoChat, providerOpenAI, ""},
		{"https://xopenai.azure.com/openai/v1/chat/completions", protoChat, providerOpenAI, ""},
		{"https://openai.azure.com/openai/v1/chat/completions", protoChat, providerOpenAI, ""},
		{"https://.openai.azure.com/openai/v1/chat/completions", protoChat, providerOpenAI, ""},
		{"https://res.openai.azure.net/openai/v1/chat/completions", protoChat, providerOpenAI, ""},
		{"https://api.groq.com/openai/v1/chat/completions", protoChat, providerOpenAI, ""},
		{"https://api.openai.com/v1/chat/completions", protoChat, providerOpenAI, ""},
		{"https://api.openai.com/v1/responses", protoResponses, providerOpenAI, ""},
		// An Azure host without Azure OpenAI's /openai/ path (the Azure AI model inference API).
		{"https://res.services.ai.azure.com/models/chat/completions?api-version=2024-05-01-preview", protoChat, providerOpenAI, ""},
	} {
		req, err := http.NewRequest(http.MethodPost, tc.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := detect(req)
		if !ok || c.proto != tc.proto || c.provider != tc.provider || c.deployment != tc.deployment || c.model != "" {
			t.Errorf("%s: %+v, %t; want proto %d, provider %s, deployment %q, no model", tc.url, c, ok, tc.proto, tc.provider, tc.deployment)
		}
	}
}

// TestAzureModel: the body's model wins; without one the deployment names the model, as the
// openai-go azure package (whose body's model is the deployment) and the instrumentations of
// Azure's clients record it.
func TestAzureModel(t *testing.T) {
	req, err := http.NewRequest(http.MethodPost, "https://res.openai.azure.com/openai/deployments/prod-eu/chat/completions?api-version=2024-10-21", nil)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := detect(req)
	withModel := c
	applyFields(&withModel, requestFields{model: "gpt-4o", stream: true, hasStream: true})
	if withModel.model != "gpt-4o" || !withModel.stream {
		t.Errorf("with a model in the body: %+v", withModel)
	}
	applyFields(&c, requestFields{stream: true, hasStream: true})
	if c.model != "prod-eu" || c.provider != providerAzure || !c.stream {
		t.Errorf("without a model in the body: %+v, want the deployment prod-eu", c)
	}
	// OpenAI's own paths name no deployment: no model without the body's.
	req, _ = http.NewRequest(http.MethodPost, "https://api.openai.com/v1/chat/completions", nil)
	c, _ = detect(req)
	if applyFields(&c, requestFields{}); c.model != "" {
		t.Errorf("OpenAI without a model: %q", c.model)
	}
}

// TestDetectAllocs: detect runs on every request; telling Azure from OpenAI allocates nothing.
func TestDetectAllocs(t *testing.T) {
	for _, u := range []string{
		"https://api.openai.com/v1/chat/completions",
		"https://res.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21",
		"https://res.openai.azure.com/openai/v1/responses",
		"https://evil-openai.azure.com.example.org/openai/v1/chat/completions",
	} {
		req, err := http.NewRequest(http.MethodPost, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() { _, _ = detect(req) }); n != 0 {
			t.Errorf("%s: detect allocates %v times", u, n)
		}
	}
}

// BenchmarkDetect: detect on each kind of request path; telling Azure from OpenAI adds a search of
// the path and, under /openai/, a look at the host, and allocates nothing (TestDetectAllocs).
func BenchmarkDetect(b *testing.B) {
	for _, tc := range []struct{ name, url string }{
		{"openai", "https://api.openai.com/v1/chat/completions"},
		{"azure-deployment", "https://res.openai.azure.com/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21"},
		{"azure-v1", "https://res.openai.azure.com/openai/v1/chat/completions"},
		{"anthropic", "https://api.anthropic.com/v1/messages"},
	} {
		req, err := http.NewRequest(http.MethodPost, tc.url, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = detect(req)
			}
		})
	}
}

// FuzzDetectAzure: any host and path: detect does not panic, marks Azure only for a deployment's
// path or an /openai/ path on one of Azure's hosts, and takes a deployment that is one whole
// segment of the path, after /openai/deployments/.
func FuzzDetectAzure(f *testing.F) {
	f.Add("res.openai.azure.com", "/openai/deployments/d/chat/completions")
	f.Add("res.openai.azure.com", "/openai/v1/responses")
	f.Add("evil-openai.azure.com.example.org", "/openai/v1/chat/completions")
	f.Add("127.0.0.1:8787", "/openai/deployments/completions")
	f.Add("h", "/openai/deployments//openai/deployments/x/completions/")
	f.Fuzz(func(t *testing.T, host, path string) {
		req := &http.Request{Method: http.MethodPost, URL: &url.URL{Scheme: "https", Host: host, Path: path}}
		c, ok := detect(req)
		if !ok || (c.proto != protoChat && c.proto != protoCompletions && c.proto != protoResponses) {
			if c.provider == providerAzure {
				t.Fatalf("%q %q: %+v, Azure on no OpenAI path", host, path, c)
			}
			return
		}
		p := strings.TrimSuffix(path, "/")
		switch {
		case c.deployment != "":
			if c.provider != providerAzure || strings.Contains(c.deployment, "/") || !strings.Contains(p, azureDeployments+c.deployment+"/") {
				t.Fatalf("%q %q: %+v", host, path, c)
			}
		case c.provider == providerAzure:
			if !strings.HasPrefix(p, "/openai/") || !azureHost(req.URL.Hostname()) {
				t.Fatalf("%q %q: %+v, Azure without a deployment or Azure's host", host, path, c)
			}
		}
	})
}
