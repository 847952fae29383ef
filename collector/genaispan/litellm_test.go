package genaispan_test

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

// liteLLMWritten returns the fixtures written from LiteLLM's otel callback (testdata/written/litellm-*).
func liteLLMWritten(t *testing.T) []golden.WrittenCase {
	t.Helper()
	var out []golden.WrittenCase
	for _, wc := range golden.LoadWritten(t) {
		if strings.HasPrefix(wc.Name, "litellm-") {
			out = append(out, wc)
		}
	}
	if len(out) < 3 {
		t.Fatalf("%d litellm-* fixtures in testdata/written, want the SDK's and the proxy's two", len(out))
	}
	return out
}

// TestLiteLLMModelCalls: one streamed completion through LiteLLM's otel callback is one model call,
// whichever span carries it (litellm_request from the SDK or under the proxy's SERVER span, or the
// proxy's SERVER span itself), and never raw_gen_ai_request beside it; and it is a chat, although
// LiteLLM writes its call type as gen_ai.operation.name: "acompletion" for every proxy request
// (the router calls litellm.acompletion), which the metrics carried as an operation of its own.
func TestLiteLLMModelCalls(t *testing.T) {
	for _, wc := range liteLLMWritten(t) {
		t.Run(wc.Name, func(t *testing.T) {
			d := genaispan.New(genaispan.Config{})
			var names []string
			pwalk.Spans(wc.Traces, func(_ pcommon.Map, span ptrace.Span) {
				c := d.Read(span, false)
				if !c.ModelCall {
					return
				}
				names = append(names, span.Name())
				if c.Operation != "chat" {
					t.Errorf("%s: operation %q, want chat", span.Name(), c.Operation)
				}
				if c.Provider != "openai" {
					t.Errorf("%s: provider %q, want openai", span.Name(), c.Provider)
				}
				if c.Server != (wc.Expected.SpanKind == "SERVER") {
					t.Errorf("%s: server %v, want the span kind %s", span.Name(), c.Server, wc.Expected.SpanKind)
				}
			})
			if len(names) != 1 || names[0] == itlconv.LiteLLMRawRequestSpanName {
				t.Errorf("model calls %q, want one, not %s", names, itlconv.LiteLLMRawRequestSpanName)
			}
		})
	}
}

// TestLiteLLMCallTypes: a span whose gen_ai.operation.name is its llm.request.type is LiteLLM's
// (set_attributes writes the call type under both), and its operation is what LiteLLM's own
// mapping gives (OTELGenAISemconvMixin._gen_ai_operation_name: "embedding" in the call type is
// embeddings, "text_completion" is text_completion, anything else chat), for the metrics and for
// excluded_operations alike. Any other operation stays as written.
func TestLiteLLMCallTypes(t *testing.T) {
	for _, c := range []struct{ op, reqType, want string }{
		{"acompletion", "acompletion", "chat"},
		{"aembedding", "aembedding", "embeddings"},
		{"embedding", "embedding", "embeddings"},
		{"atext_completion", "atext_completion", "text_completion"},
		{"aresponses", "aresponses", "chat"},
		{"chat", "completion", "chat"},             // LiteLLM's sync completion
		{"chat", "chat", "chat"},                   // OpenLLMetry's names agree already
		{"acompletion", "", "acompletion"},         // not LiteLLM's pair: as written
		{"embeddings", "chat", "embeddings"},       // as written
		{"aembedding", "embedding", "aembedding"},  // the two differ: as written
		{"completion", "completion", "completion"}, // LiteLLM writes chat for completion: as written
	} {
		span := ptrace.NewSpan()
		span.SetStartTimestamp(1_780_000_000_000_000_000)
		span.SetEndTimestamp(1_780_000_001_000_000_000)
		span.Attributes().PutStr("gen_ai.operation.name", c.op)
		if c.reqType != "" {
			span.Attributes().PutStr(itlconv.OpenLLMetryTypeKey, c.reqType)
		}
		got := genaispan.New(genaispan.Config{}).Read(span, false)
		if !got.ModelCall || got.Operation != c.want {
			t.Errorf("operation %q, llm.request.type %q: model call %v, operation %q; want %q", c.op, c.reqType, got.ModelCall, got.Operation, c.want)
		}
		excluded := genaispan.New(genaispan.Config{ExcludedOperations: []string{c.want}}).Read(span, false)
		if excluded.ModelCall {
			t.Errorf("operation %q, llm.request.type %q: a model call with excluded_operations [%s]", c.op, c.reqType, c.want)
		}
	}
}

// liteLLMWithout returns a copy of wc's spans with LiteLLM's message logging off
// (litellm.turn_off_message_logging, or OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=NO_CONTENT
// in later versions): set_attributes returns before it writes the messages and
// gen_ai.operation.name, so the call type is left only in llm.request.type.
func liteLLMWithout(wc golden.WrittenCase) ptrace.Traces {
	td := ptrace.NewTraces()
	wc.Traces.CopyTo(td)
	pwalk.Spans(td, func(_ pcommon.Map, span ptrace.Span) {
		span.Attributes().RemoveIf(func(k string, _ pcommon.Value) bool {
			switch k {
			case "gen_ai.operation.name", "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.response.finish_reasons":
				return true
			}
			return false
		})
	})
	return td
}

// TestLiteLLMNoMessageLogging: with message logging off LiteLLM writes no gen_ai.operation.name,
// and its call type is left in llm.request.type, OpenLLMetry's name, where "completion" means the
// legacy text completion API: the SDK's chat call was read as text_completion, the proxy's
// "acompletion" as no operation at all. A span with LiteLLM's metadata.user_api_key_hash (every
// key of StandardLoggingMetadata is written, None as "") takes its operation from its call type,
// as LiteLLM maps it; so do the spans of its gen_ai_latest_experimental mode without content
// capture, whose provider is gen_ai.provider.name. OpenLLMetry's "completion" stays text_completion.
func TestLiteLLMNoMessageLogging(t *testing.T) {
	for _, wc := range liteLLMWritten(t) {
		for _, semconvMode := range []bool{false, true} {
			td := liteLLMWithout(wc)
			if semconvMode {
				// OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental: gen_ai.provider.name for
				// gen_ai.system, gen_ai.request.stream for llm.is_streaming (set_attributes,
				// OTELGenAISemconvMixin._set_semconv_request_attributes).
				pwalk.Spans(td, func(_ pcommon.Map, span ptrace.Span) {
					a := span.Attributes()
					if v, ok := a.Get("gen_ai.system"); ok {
						a.PutStr("gen_ai.provider.name", v.Str())
						a.Remove("gen_ai.system")
						a.Remove(itlconv.LLMIsStreamingKey)
						a.PutBool(itlconv.RequestStreamKey, true)
					}
				})
			}
			d := genaispan.New(genaispan.Config{})
			calls := 0
			pwalk.Spans(td, func(_ pcommon.Map, span ptrace.Span) {
				c := d.Read(span, false)
				if !c.ModelCall {
					return
				}
				calls++
				if c.Operation != "chat" || c.Provider != "openai" {
					t.Errorf("%s (semconv %v) %s: operation %q, provider %q; want chat, openai", wc.Name, semconvMode, span.Name(), c.Operation, c.Provider)
				}
			})
			if calls != 1 {
				t.Errorf("%s (semconv %v): %d model calls, want 1", wc.Name, semconvMode, calls)
			}
		}
	}

	// OpenLLMetry's legacy spans carry no metadata.user_api_key_hash: their "completion" is the
	// text completion API.
	span := ptrace.NewSpan()
	span.SetStartTimestamp(1_780_000_000_000_000_000)
	span.SetEndTimestamp(1_780_000_001_000_000_000)
	span.Attributes().PutStr(itlconv.OpenLLMetryTypeKey, "completion")
	span.Attributes().PutStr(itlconv.SystemKey, "openai")
	if c := genaispan.New(genaispan.Config{}).Read(span, false); !c.ModelCall || c.Operation != "text_completion" {
		t.Errorf("OpenLLMetry's completion: model call %v, operation %q; want text_completion", c.ModelCall, c.Operation)
	}
	// And LiteLLM's embeddings without message logging are excluded as embeddings.
	span.Attributes().PutStr(itlconv.OpenLLMetryTypeKey, "aembedding")
	span.Attributes().PutStr(itlconv.LiteLLMMarkerKey, "")
	if c := genaispan.New(genaispan.Config{ExcludedOperations: []string{"embeddings"}}).Read(span, false); c.ModelCall {
		t.Errorf("LiteLLM's aembedding without an operation counted with excluded_operations [embeddings]")
	}
}

// TestLiteLLMProviders: LiteLLM writes its own provider names (LlmProviders, custom_llm_provider)
// as gen_ai.system, or gen_ai.provider.name in its gen_ai_latest_experimental mode: a call to
// Bedrock was counted under "bedrock" where every other instrumentation's is "aws.bedrock". On
// LiteLLM's spans (metadata.user_api_key_hash) they take the conventions' names; the names the
// conventions share, and those nobody maps, stay.
func TestLiteLLMProviders(t *testing.T) {
	wc := liteLLMWritten(t)[0]
	for _, key := range []string{itlconv.SystemKey, "gen_ai.provider.name"} {
		for from, want := range map[string]string{
			"bedrock": "aws.bedrock", "vertex_ai": "gcp.vertex_ai", "vertex_ai_beta": "gcp.vertex_ai",
			"gemini": "gcp.gemini", "azure": "azure.ai.openai", "azure_text": "azure.ai.openai",
			"azure_ai": "azure.ai.inference", "mistral": "mistral_ai", "xai": "x_ai", "watsonx": "ibm.watsonx.ai",
			"text-completion-openai": "openai", "cohere_chat": "cohere", "anthropic_text": "anthropic",
			"anthropic": "anthropic", "groq": "groq", "openai": "openai", "ollama": "ollama",
		} {
			td := ptrace.NewTraces()
			wc.Traces.CopyTo(td)
			pwalk.Spans(td, func(_ pcommon.Map, span ptrace.Span) {
				a := span.Attributes()
				if _, ok := a.Get(itlconv.SystemKey); ok {
					a.Remove(itlconv.SystemKey)
					a.PutStr(key, from)
				}
			})
			got := read(td)
			if got.calls != 1 || got.providers[0] != want {
				t.Errorf("%s %q: %d model calls, providers %q; want 1, %q", key, from, got.calls, got.providers, want)
			}
		}
	}

	// Without LiteLLM's metadata, a gen_ai.system of "bedrock" is someone else's: as written.
	span := ptrace.NewSpan()
	span.SetStartTimestamp(1_780_000_000_000_000_000)
	span.SetEndTimestamp(1_780_000_001_000_000_000)
	span.Attributes().PutStr("gen_ai.operation.name", "chat")
	span.Attributes().PutStr(itlconv.SystemKey, "bedrock")
	if c := genaispan.New(genaispan.Config{}).Read(span, false); c.Provider != "bedrock" {
		t.Errorf("gen_ai.system bedrock without LiteLLM's metadata: provider %q, want it as written", c.Provider)
	}
}
