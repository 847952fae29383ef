package httpitl

import (
	"net/http"
	"testing"

	"github.com/otelitl/itl/otelitl/internal/endpoint"
)

// TestEndpointProvider: the SDK wrappers' endpoint.Provider is set, and tells a request's provider
// and the model its URL names (a deployment, a Bedrock or Vertex model) as detect does, "" for a
// request detect does not recognise.
func TestEndpointProvider(t *testing.T) {
	if endpoint.Provider == nil {
		t.Fatal("endpoint.Provider is not set")
	}
	for _, tc := range []struct {
		method, url          string
		provider, deployment string
	}{
		{http.MethodPost, "https://api.openai.com/v1/chat/completions", providerOpenAI, ""},
		{http.MethodPost, "https://res.openai.azure.com/openai/deployments/prod-eu/chat/completions?api-version=2024-10-21", providerAzure, "prod-eu"},
		{http.MethodPost, "https://res.openai.azure.com/openai/responses?api-version=2025-03-01-preview", providerAzure, ""},
		{http.MethodPost, "https://evil-openai.azure.com.example.org/openai/v1/chat/completions", providerOpenAI, ""},
		{http.MethodPost, "https://api.anthropic.com/v1/messages", providerAnthropic, ""},
		{http.MethodPost, "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/invoke-with-response-stream", providerBedrock, "us.anthropic.claude-sonnet-4-20250514-v1:0"},
		{http.MethodPost, "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict", providerVertex, "claude-sonnet-4-5@20250929"},
		{http.MethodPost, "https://example.com/v1/files", "", ""},
		{http.MethodGet, "https://api.openai.com/v1/chat/completions", "", ""},
	} {
		req, err := http.NewRequest(tc.method, tc.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p, d := endpoint.Provider(req); p != tc.provider || d != tc.deployment {
			t.Errorf("%s %s: %q, %q; want %q, %q", tc.method, tc.url, p, d, tc.provider, tc.deployment)
		}
	}
}
