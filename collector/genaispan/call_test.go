package genaispan

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// TestNormalizeProvider maps the Vercel AI SDK's and OpenInference's provider names to the
// conventions', and leaves the conventions' own names and unknown ones alone.
func TestNormalizeProvider(t *testing.T) {
	for give, want := range map[string]string{
		"openai": "openai", "openai.chat": "openai", "openai.responses": "openai", "anthropic.messages": "anthropic",
		"google.generative-ai": "gcp.gemini", "google.vertex.chat": "gcp.vertex_ai", "amazon-bedrock": "aws.bedrock",
		"mistral.chat": "mistral_ai", "xai.chat": "x_ai", "azure-openai.chat": "azure.ai.openai",
		"azure.ai.openai": "azure.ai.openai", "azure.ai.inference": "azure.ai.inference", "aws.bedrock": "aws.bedrock",
		"gcp.gemini": "gcp.gemini", "vertexai": "gcp.vertex_ai", "google": "gcp.gen_ai", "mistralai": "mistral_ai",
		"my-gateway": "my-gateway", "my.gateway.v2": "my.gateway.v2", "": "", ".": ".", "openai.": "openai",
	} {
		if got := normalizeProvider(give); got != want {
			t.Errorf("normalizeProvider(%q) = %q, want %q", give, got, want)
		}
	}
}

// TestNormalizeProviderKeepsTheConventionsNames checks every gen_ai.provider.name value of the
// semantic conventions' Go package: each stays as it is, and is one knownProvider knows (its fast
// path before any map look-up), so that a name the conventions add is noticed here.
func TestNormalizeProviderKeepsTheConventionsNames(t *testing.T) {
	for _, kv := range []attribute.KeyValue{
		semconv.GenAIProviderNameOpenAI, semconv.GenAIProviderNameGCPGenAI, semconv.GenAIProviderNameGCPVertexAI,
		semconv.GenAIProviderNameGCPGemini, semconv.GenAIProviderNameAnthropic, semconv.GenAIProviderNameCohere,
		semconv.GenAIProviderNameAzureAIInference, semconv.GenAIProviderNameAzureAIOpenAI,
		semconv.GenAIProviderNameIBMWatsonxAI, semconv.GenAIProviderNameAWSBedrock, semconv.GenAIProviderNamePerplexity,
		semconv.GenAIProviderNameXAI, semconv.GenAIProviderNameDeepseek, semconv.GenAIProviderNameGroq,
		semconv.GenAIProviderNameMistralAI,
	} {
		p := kv.Value.AsString()
		if !knownProvider(p) {
			t.Errorf("knownProvider(%q) is false", p)
		}
		if got := normalizeProvider(p); got != p {
			t.Errorf("normalizeProvider(%q) = %q", p, got)
		}
	}
}
