package httpitl

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestDetectAzure: Azure OpenAI is told by its deployment's path on any host, or by a path under
// /openai/ (or a Foundry project's /api/projects/{p}/openai/) on one of its resources' hosts, in
// Azure's public, Government and China clouds; the Azure AI model inference API by /models/ on a
// Foundry resource's host, or by a serverless endpoint's host, whose first label is the
// deployment. Look-alike hosts, and /openai/ paths on other hosts (Groq's), stay OpenAI's.
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
		// Azure Government and Azure China.
		{"https://res.openai.azure.us/openai/v1/chat/completions", protoChat, providerAzure, ""},
		{"https://res.openai.azure.cn/openai/v1/responses", protoResponses, providerAzure, ""},
		{"https://res.cognitiveservices.azure.us/openai/v1/chat/completions", protoChat, providerAzure, ""},
		{"https://res.cognitiveservices.azure.cn/openai/responses?api-version=2025-03-01-preview", protoResponses, providerAzure, ""},
		{"https://res.services.ai.azure.us/openai/v1/responses", protoResponses, providerAzure, ""},
		{"https://res.services.ai.azure.cn/openai/v1/chat/completions", protoChat, providerAzure, ""},
		{"https://res.openai.azure.us/openai/deployments/d/chat/completions?api-version=2024-10-21", protoChat, providerAzure, "d"},
		// A Foundry project's OpenAI API (azure-ai-projects' get_openai_client: the project's
		// endpoint and /openai/v1).
		{"https://res.services.ai.azure.com/api/projects/proj-1/openai/v1/responses", protoResponses, providerAzure, ""},
		{"https://res.services.ai.azure.com/api/projects/_project/openai/v1/chat/completions", protoChat, providerAzure, ""},
		{"https://res.services.ai.azure.com/api/projects/p/openai/responses", protoResponses, providerAzure, ""},
		{"https://res.services.ai.azure.us/api/projects/p/openai/v1/responses", protoResponses, providerAzure, ""},
		{"https://res.services.ai.azure.com/api/projects/p/openai/deployments/d/chat/completions", protoChat, providerAzure, "d"},
		{"https://res.services.ai.azure.com/api/projects//openai/v1/responses", protoResponses, providerOpenAI, ""},
		{"https://res.services.ai.azure.com/api/projects/p/q/openai/v1/responses", protoResponses, providerOpenAI, ""},
		{"https://api.example.com/api/projects/p/openai/v1/responses", protoResponses, providerOpenAI, ""},
		// A gateway (API Management, otelitl-proxy) keeps Azure's deployment path.
		{"https://apim.azure-api.net/openai/deployments/d/chat/completions?api-version=2024-10-21", protoChat, providerAzure, "d"},
		{"http://127.0.0.1:8787/prefix/openai/deployments/d/chat/completions", protoChat, providerAzure, "d"},
		// No deployment segment before the operation: on another host, OpenAI's.
		{"http://127.0.0.1:8787/openai/deployments//chat/completions", protoChat, providerOpenAI, ""},
		{"http://127.0.0.1:8787/openai/deployments/chat/completions", protoChat, providerOpenAI, ""},
		{"https://res.openai.azure.com/openai/deployments/chat/completions", protoChat, providerAzure, ""},
		// The Azure AI model inference API: a Foundry resource's /models/ (its deployment is the
		// body's model), and serverless endpoints, NAME.REGION.models.ai.azure.com (and
		// NAME.REGION.inference.ai.azure.com), whose NAME is the deployment.
		{"https://res.services.ai.azure.com/models/chat/completions?api-version=2024-05-01-preview", protoChat, providerInference, ""},
		{"https://res.services.ai.azure.us/models/chat/completions?api-version=2024-05-01-preview", protoChat, providerInference, ""},
		{"https://Phi-3-5-mini-instruct-rivhp.southcentralus.models.ai.azure.com/chat/completions", protoChat, providerInference, "Phi-3-5-mini-instruct-rivhp"},
		{"https://mistral-large-xyz.eastus2.models.ai.azure.com/v1/chat/completions", protoChat, providerInference, "mistral-large-xyz"},
		{"https://llama.westus3.models.ai.azure.com/completions?api-version=2024-05-01-preview", protoCompletions, providerInference, "llama"},
		{"https://d.eastus2.Models.AI.Azure.com./chat/completions", protoChat, providerInference, "d"},
		{"https://d.eastus2.inference.ai.azure.com/chat/completions", protoChat, providerInference, "d"},
		// GitHub Models' Azure endpoint, and hosts whose labels are not NAME.REGION: no deployment.
		{"https://models.inference.ai.azure.com/chat/completions", protoChat, providerInference, ""},
		{"https://a.b.eastus2.models.ai.azure.com/chat/completions", protoChat, providerInference, ""},
		// /models/ is the inference API's on a Foundry resource only.
		{"https://res.openai.azure.com/models/chat/completions", protoChat, providerOpenAI, ""},
		{"https://res.cognitiveservices.azure.com/models/chat/completions", protoChat, providerOpenAI, ""},
		{"https://api.example.com/models/chat/completions", protoChat, providerOpenAI, ""},
		// Look-alikes and other providers' /openai/ paths.
		{"https://evil-openai.azure.com.example.org/openai/v1/chat/completions", protoChat, providerOpenAI, ""},
		{"https://res.openai.azure.com.example.org/openai/v1/chat/completions", protoChat, providerOpenAI, ""},
		{"https://xopenai.azure.com/openai/v1/chat/completions", protoChat, providerOpenAI, ""},
		{"https://openai.azure.com/openai/v1/chat/completions", protoChat, providerOpenAI, ""},
		{"https://.openai.azure.com/openai/v1/chat/completions", protoChat, providerOpenAI, ""},
		{"https://res.openai.azure.net/openai/v1/chat/completions", protoChat, providerOpenAI, ""},
		{"https://res.openai.azure.de/openai/v1/chat/completions", protoChat, providerOpenAI, ""},
		{"https://res.xopenai.azure.us/openai/v1/chat/completions", protoChat, providerOpenAI, ""},
		{"https://res.openai.azure.us.example.org/openai/v1/chat/completions", protoChat, providerOpenAI, ""},
		{"https://res.services.ai.azure.cn.evil.example/models/chat/completions", protoChat, providerOpenAI, ""},
		{"https://d.eastus2.models.ai.azure.com.evil.example/chat/completions", protoChat, providerOpenAI, ""},
		{"https://models.ai.azure.com/chat/completions", protoChat, providerOpenAI, ""},
		{"https://evil-models.ai.azure.com/chat/completions", protoChat, providerOpenAI, ""},
		{"https://d.eastus2.models.ai.azure.us/chat/completions", protoChat, providerOpenAI, ""},
		{"https://api.groq.com/openai/v1/chat/completions", protoChat, providerOpenAI, ""},
		{"https://api.openai.com/v1/chat/completions", protoChat, providerOpenAI, ""},
		{"https://api.openai.com/v1/responses", protoResponses, providerOpenAI, ""},
		// Azure Machine Learning's online endpoints serve whatever their container serves.
		{"https://ep.eastus2.inference.ml.azure.com/v1/chat/completions", protoChat, providerOpenAI, ""},
		// An Azure resource's host without an Azure path.
		{"https://res.openai.azure.com/v1/chat/completions", protoChat, providerOpenAI, ""},
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

// TestDetectAzureEmptyPort: a host with an empty port (https://res.openai.azure.com:/...), which
// url.Parse takes and net/http dials as the scheme's port, is Azure's host. http.NewRequest drops
// the empty port, but a request built on a parsed URL keeps it: otelitl-proxy's upstream
// (httputil.ProxyRequest.SetURL copies the upstream's host as written), OTELITL_PROXY_OPENAI=
// https://res.openai.azure.com: recorded every Azure v1 call as openai.
func TestDetectAzureEmptyPort(t *testing.T) {
	for _, tc := range []struct {
		url                  string
		provider, deployment string
	}{
		{"https://res.openai.azure.com:/openai/v1/chat/completions", providerAzure, ""},
		{"https://res.services.ai.azure.com.:/api/projects/p/openai/v1/responses", providerAzure, ""},
		{"https://res.services.ai.azure.com:/models/chat/completions", providerInference, ""},
		{"https://d.eastus2.models.ai.azure.com:/chat/completions", providerInference, "d"},
		{"https://[::1]:/openai/v1/chat/completions", providerOpenAI, ""},
		{"https://res.openai.azure.com.example:/openai/v1/chat/completions", providerOpenAI, ""},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := detect(&http.Request{Method: http.MethodPost, URL: u})
		if !ok || c.provider != tc.provider || c.deployment != tc.deployment {
			t.Errorf("%s: %+v, %t; want provider %s, deployment %q", tc.url, c, ok, tc.provider, tc.deployment)
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
	// A serverless endpoint's deployment is its host's first label.
	req, _ = http.NewRequest(http.MethodPost, "https://mistral-prod.eastus2.models.ai.azure.com/chat/completions", nil)
	c, _ = detect(req)
	withModel = c
	applyFields(&withModel, requestFields{model: "Mistral-large-2411"})
	if withModel.model != "Mistral-large-2411" {
		t.Errorf("serverless, with a model in the body: %+v", withModel)
	}
	if applyFields(&c, requestFields{}); c.model != "mistral-prod" || c.provider != providerInference {
		t.Errorf("serverless, without a model in the body: %+v, want the deployment mistral-prod", c)
	}
	// A Foundry resource's /models/ names no deployment: the body's model routes the request.
	req, _ = http.NewRequest(http.MethodPost, "https://res.services.ai.azure.com/models/chat/completions?api-version=2024-05-01-preview", nil)
	c, _ = detect(req)
	if applyFields(&c, requestFields{}); c.model != "" || c.provider != providerInference {
		t.Errorf("Foundry /models/ without a model: %+v", c)
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
		"https://res.openai.azure.us/openai/v1/chat/completions",
		"https://res.services.ai.azure.com/api/projects/p/openai/v1/responses",
		"https://res.services.ai.azure.com/models/chat/completions?api-version=2024-05-01-preview",
		"https://d.eastus2.models.ai.azure.com/chat/completions",
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
// the path and a look at the host's end, and allocates nothing (TestDetectAllocs).
func BenchmarkDetect(b *testing.B) {
	for _, tc := range []struct{ name, url string }{
		{"openai", "https://api.openai.com/v1/chat/completions"},
		{"azure-deployment", "https://res.openai.azure.com/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21"},
		{"azure-v1", "https://res.openai.azure.com/openai/v1/chat/completions"},
		{"azure-inference", "https://d.eastus2.models.ai.azure.com/chat/completions"},
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

// FuzzDetectAzure: any host and path: detect does not panic; marks Azure OpenAI only for a
// deployment's path, or an /openai/ path (or a project's /api/projects/{p}/openai/) on one of its
// resources' hosts; marks the model inference API only on a serverless endpoint's host, or for a
// /models/ path on a Foundry resource's host; and takes a deployment that is one whole segment of
// the path after /openai/deployments/, or the serverless host's first label.
func FuzzDetectAzure(f *testing.F) {
	f.Add("res.openai.azure.com", "/openai/deployments/d/chat/completions")
	f.Add("res.openai.azure.com", "/openai/v1/responses")
	f.Add("res.openai.azure.us", "/openai/v1/responses")
	f.Add("evil-openai.azure.com.example.org", "/openai/v1/chat/completions")
	f.Add("127.0.0.1:8787", "/openai/deployments/completions")
	f.Add("h", "/openai/deployments//openai/deployments/x/completions/")
	f.Add("res.services.ai.azure.com", "/api/projects/p/openai/v1/responses")
	f.Add("res.services.ai.azure.cn", "/models/chat/completions")
	f.Add("d.eastus2.models.ai.azure.com", "/chat/completions")
	f.Add("d.eastus2.models.ai.azure.com.evil.example", "/v1/chat/completions")
	f.Fuzz(func(t *testing.T, host, path string) {
		req := &http.Request{Method: http.MethodPost, URL: &url.URL{Scheme: "https", Host: host, Path: path}}
		c, ok := detect(req)
		if !ok || (c.proto != protoChat && c.proto != protoCompletions && c.proto != protoResponses) {
			if c.provider == providerAzure || c.provider == providerInference {
				t.Fatalf("%q %q: %+v, Azure on no OpenAI path", host, path, c)
			}
			return
		}
		p := strings.TrimSuffix(path, "/")
		kind, _ := azureHost(req.URL.Host)
		resource := kind == azureResource || kind == azureFoundry
		switch c.provider {
		case providerAzure:
			if c.deployment != "" {
				if strings.Contains(c.deployment, "/") || !strings.Contains(p, azureDeployments+c.deployment+"/") {
					t.Fatalf("%q %q: %+v", host, path, c)
				}
			} else if !resource || (!strings.HasPrefix(p, "/openai/") && !azureProjectPath(p)) {
				t.Fatalf("%q %q: %+v, Azure OpenAI without a deployment or a resource's host", host, path, c)
			}
		case providerInference:
			switch {
			case kind == azureServerless:
				if c.deployment != "" && (strings.ContainsAny(c.deployment, "./") || !strings.HasPrefix(req.URL.Host, c.deployment+".")) {
					t.Fatalf("%q %q: %+v, a deployment that is not the host's first label", host, path, c)
				}
			case kind == azureFoundry && strings.HasPrefix(p, azureModels):
				if c.deployment != "" {
					t.Fatalf("%q %q: %+v, a deployment on a Foundry resource's /models/", host, path, c)
				}
			default:
				t.Fatalf("%q %q: %+v, the inference API on neither a serverless host nor a Foundry resource's /models/", host, path, c)
			}
		default:
			if c.deployment != "" {
				t.Fatalf("%q %q: %+v, a deployment without Azure", host, path, c)
			}
		}
	})
}
