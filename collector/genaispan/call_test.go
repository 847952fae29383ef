package genaispan

import "testing"

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
