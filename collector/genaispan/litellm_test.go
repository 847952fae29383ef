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
