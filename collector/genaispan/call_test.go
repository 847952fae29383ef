package genaispan

import (
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	semconv134 "go.opentelemetry.io/otel/semconv/v1.34.0"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/itlconv"
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

// TestNormalizeProviderOldConventions: the gen_ai.system values of the conventions before
// gen_ai.provider.name are read under the names that replaced them. opentelemetry-python-contrib's
// google-genai and vertexai instrumentations write "vertex_ai" (testdata/written/google-genai,
// vertexai), which passed as written: a Vertex AI call counted apart from every other
// instrumentation's gcp.vertex_ai.
func TestNormalizeProviderOldConventions(t *testing.T) {
	for give, want := range map[attribute.KeyValue]attribute.KeyValue{
		//lint:ignore SA1019 the deprecated value is the one these instrumentations write.
		semconv134.GenAISystemVertexAI: semconv.GenAIProviderNameGCPVertexAI,
		//lint:ignore SA1019 the deprecated value is the one these instrumentations write.
		semconv134.GenAISystemGemini:        semconv.GenAIProviderNameGCPGemini,
		semconv134.GenAISystemAzAIInference: semconv.GenAIProviderNameAzureAIInference,
		semconv134.GenAISystemAzAIOpenAI:    semconv.GenAIProviderNameAzureAIOpenAI,
		semconv134.GenAISystemXai:           semconv.GenAIProviderNameXAI,
	} {
		if got := normalizeProvider(give.Value.AsString()); got != want.Value.AsString() {
			t.Errorf("normalizeProvider(%q) = %q, want %q", give.Value.AsString(), got, want.Value.AsString())
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

// TestRedirectHop: a span without a timeline that answered with a redirect, as httpitl records the
// hop of a request an HTTP client then sends again elsewhere, is no model call: it would add a
// generation and a duration of a few milliseconds for every redirected call. With a timeline, or
// with any other status, the span is read as before.
func TestRedirectHop(t *testing.T) {
	for _, c := range []struct {
		status   int64 // 0: no status
		str      bool  // the status as a string, which no HTTP instrumentation writes
		timeline bool
		want     bool
	}{
		{307, false, false, false},
		{308, false, false, false},
		{301, false, false, false},
		{200, false, false, true},
		{429, false, false, true},
		{0, false, false, true},
		{307, true, false, true},
		{307, false, true, true},
		{300, false, false, false},
		{400, false, false, true},
	} {
		span := ptrace.NewSpan()
		span.SetKind(ptrace.SpanKindClient)
		span.SetStartTimestamp(1_000_000_000)
		span.SetEndTimestamp(1_004_000_000)
		a := span.Attributes()
		a.PutStr(string(semconv.GenAIOperationNameKey), "chat")
		a.PutStr(string(semconv.GenAIProviderNameKey), "openai")
		a.PutStr(string(semconv.GenAIRequestModelKey), "gpt-4o")
		a.PutInt(string(itlconv.ChunkCountKey), 0)
		switch {
		case c.str:
			a.PutStr(string(semconv.HTTPResponseStatusCodeKey), fmt.Sprint(c.status))
		case c.status != 0:
			a.PutInt(string(semconv.HTTPResponseStatusCodeKey), c.status)
		}
		if c.timeline {
			a.PutInt(string(itlconv.ChunkCountKey), 2)
			a.PutEmptySlice(string(itlconv.ChunkOffsetsKey)).FromRaw([]any{int64(1000), int64(2000)})
		}
		got := New(Config{}).Read(span, false)
		if got.ModelCall != c.want {
			t.Errorf("status %d (string %v), timeline %v: model call %v, want %v", c.status, c.str, c.timeline, got.ModelCall, c.want)
		}
	}
}
