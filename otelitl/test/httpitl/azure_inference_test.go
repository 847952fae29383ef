package httpitl_test

import (
	"context"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/otelitl/itl/internal/wraptest"
)

// inferenceChat is a Chat Completions reply of a model that is not OpenAI's, as the Azure AI model
// inference API streams it: OpenAI's chunks without Azure OpenAI's content filter results; three
// content deltas are the chunks.
var inferenceChat = []azureEvent{
	{"", `{"id":"cmpl-inf1","object":"chat.completion.chunk","created":1733150000,"model":"Mistral-Large-2411","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`, false},
	{"", `{"id":"cmpl-inf1","object":"chat.completion.chunk","created":1733150000,"model":"Mistral-Large-2411","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}`, true},
	{"", `{"id":"cmpl-inf1","object":"chat.completion.chunk","created":1733150000,"model":"Mistral-Large-2411","choices":[{"index":0,"delta":{"content":" from"},"finish_reason":null}]}`, true},
	{"", `{"id":"cmpl-inf1","object":"chat.completion.chunk","created":1733150000,"model":"Mistral-Large-2411","choices":[{"index":0,"delta":{"content":" Azure"},"finish_reason":null}]}`, true},
	{"", `{"id":"cmpl-inf1","object":"chat.completion.chunk","created":1733150000,"model":"Mistral-Large-2411","choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`, false},
	{"", `[DONE]`, false},
}

// TestAzureInference: the Azure AI model inference API, through OpenAI's client, whose chat
// completions it speaks: a serverless endpoint (NAME.REGION.models.ai.azure.com, its deployment
// NAME) and a Foundry resource's /models/ (its deployment the body's model). The span says
// azure.ai.inference, the request model is the body's or else the serverless deployment's, the
// response model the chunks', and only the content deltas are chunks, each seen when it was sent.
func TestAzureInference(t *testing.T) {
	for _, tc := range []struct {
		name, base, apiVersion, model string
		wantPath, wantModel, host     string
	}{
		{"serverless, no model", "https://mistral-prod.eastus2.models.ai.azure.com/", "", "",
			"/chat/completions", "mistral-prod", "mistral-prod.eastus2.models.ai.azure.com"},
		{"serverless, a model", "https://mistral-prod.eastus2.models.ai.azure.com/v1/", "", "Mistral-Large-2411",
			"/v1/chat/completions", "Mistral-Large-2411", "mistral-prod.eastus2.models.ai.azure.com"},
		{"Foundry /models/", "https://res-eu.services.ai.azure.com/models/", "2024-05-01-preview", "Mistral-Large-2411",
			"/models/chat/completions", "Mistral-Large-2411", "res-eu.services.ai.azure.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			quietGC(t)
			s := newAzureServer(t, 8*time.Millisecond, inferenceChat)
			hc, exp := azureTracing(t, s.base(true))
			opts := []option.RequestOption{option.WithBaseURL(tc.base), option.WithHeader("api-key", "azure-key"),
				option.WithAPIKey("unused"), option.WithHTTPClient(hc), option.WithMaxRetries(0)}
			if tc.apiVersion != "" {
				opts = append(opts, option.WithQuery("api-version", tc.apiVersion))
			}
			if got := readAzureChat(t, openai.NewClient(opts...), tc.model); got != "Hello from Azure" {
				t.Errorf("the SDK read %q", got)
			}
			r := s.lastRequest(t)
			if r.path != tc.wantPath || r.apiKey != "azure-key" || r.model != tc.model {
				t.Errorf("the server got %+v", r)
			}
			if tc.apiVersion != "" && r.query != "api-version="+tc.apiVersion {
				t.Errorf("the server got the query %q", r.query)
			}
			span, attrs := oneSpan(t, exp)
			wraptest.CheckTimeline(t, span, attrs, s.sentTimes(), wraptest.Busy())
			if span.Name != "chat "+tc.wantModel {
				t.Errorf("span name %q, want %q", span.Name, "chat "+tc.wantModel)
			}
			checkAttrs(t, span, attrs, map[string]string{
				"gen_ai.operation.name": "chat", "gen_ai.provider.name": "azure.ai.inference", "gen_ai.request.model": tc.wantModel,
				"gen_ai.response.model": "Mistral-Large-2411", "gen_ai.response.id": "cmpl-inf1", "gen_ai.request.stream": "true",
				"gen_ai.response.finish_reasons": `["stop"]`, "gen_ai.usage.input_tokens": "9", "gen_ai.usage.output_tokens": "3",
				"otelitl.chunk.count": "3", "server.address": tc.host, "http.response.status_code": "200", "error.type": "",
			})
		})
	}
}

// TestAzureOpenAIHosts: Azure OpenAI's v1 API on the hosts its path alone does not tell: Azure
// Government's and Azure China's resources, and a Foundry project's OpenAI API
// (/api/projects/{project}/openai/v1/, azure-ai-projects' get_openai_client), through OpenAI's
// client: azure.ai.openai, the body's model the request's.
func TestAzureOpenAIHosts(t *testing.T) {
	for _, tc := range []struct{ base, host, path string }{
		{"https://res-gov.openai.azure.us/openai/v1/", "res-gov.openai.azure.us", "/openai/v1/chat/completions"},
		{"https://res-cn.openai.azure.cn/openai/v1/", "res-cn.openai.azure.cn", "/openai/v1/chat/completions"},
		{"https://res-gov.cognitiveservices.azure.us/openai/v1/", "res-gov.cognitiveservices.azure.us", "/openai/v1/chat/completions"},
		{"https://res-eu.services.ai.azure.com/api/projects/proj-1/openai/v1/", "res-eu.services.ai.azure.com", "/api/projects/proj-1/openai/v1/chat/completions"},
	} {
		t.Run(tc.host, func(t *testing.T) {
			quietGC(t)
			s := newAzureServer(t, 8*time.Millisecond, azureChat)
			hc, exp := azureTracing(t, s.base(true))
			c := openai.NewClient(option.WithBaseURL(tc.base), option.WithHeader("api-key", "azure-key"),
				option.WithAPIKey("unused"), option.WithHTTPClient(hc), option.WithMaxRetries(0))
			if got := readAzureChat(t, c, "gpt-4o-mini-prod"); got != "Hello from Azure" {
				t.Errorf("the SDK read %q", got)
			}
			if r := s.lastRequest(t); r.path != tc.path || r.model != "gpt-4o-mini-prod" {
				t.Errorf("the server got %+v", r)
			}
			checkAzureSpan(t, s, exp, tc.host, "gpt-4o-mini-prod")
		})
	}
}

// TestAzureProjectResponses: the Responses API of a Foundry project
// (https://NAME.services.ai.azure.com/api/projects/{project}/openai/v1/responses), where
// Foundry's own models answer through it too, through OpenAI's client: azure.ai.openai.
func TestAzureProjectResponses(t *testing.T) {
	quietGC(t)
	s := newAzureServer(t, 8*time.Millisecond, azureResponses)
	hc, exp := azureTracing(t, s.base(true))
	c := openai.NewClient(option.WithBaseURL("https://res-eu.services.ai.azure.com/api/projects/proj-1/openai/v1/"),
		option.WithAPIKey("entra-token"), option.WithHTTPClient(hc), option.WithMaxRetries(0))
	stream := c.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model: "gpt-4o-mini-prod", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
	})
	for stream.Next() {
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	_ = stream.Close()
	if r := s.lastRequest(t); r.path != "/api/projects/proj-1/openai/v1/responses" {
		t.Errorf("the server got %+v", r)
	}
	span, attrs := oneSpan(t, exp)
	wraptest.CheckTimeline(t, span, attrs, s.sentTimes(), wraptest.Busy())
	checkAttrs(t, span, attrs, map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "azure.ai.openai", "gen_ai.request.model": "gpt-4o-mini-prod",
		"gen_ai.response.model": "gpt-4o-2024-11-20", "gen_ai.response.id": "resp_az1", "gen_ai.usage.output_tokens": "2",
		"otelitl.chunk.count": "2", "server.address": "res-eu.services.ai.azure.com", "error.type": "",
	})
}
