package genaispan_test

import (
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/itlconv"
)

// conventionsOperations are the gen_ai.operation.name values the GenAI semantic conventions list
// (open-telemetry/semantic-conventions-genai, docs/gen-ai/client-inference.md; docs/sources.md,
// "Well-known values"), each with whether it stands for a request to a model.
var conventionsOperations = map[string]bool{
	// "Chat completion operation", "Text completions operation", "Multimodal content generation
	// operation", "Embeddings operation": a request to a model.
	"chat": true, "text_completion": true, "generate_content": true, "embeddings": true,
	// Agents and what they run: wrappers of model calls.
	"invoke_agent": false, "invoke_workflow": false, "create_agent": false, "execute_tool": false,
	// "Agent planning or task decomposition phase": "The LLM call that generates the plan SHOULD be
	// a child of the plan span".
	"plan": false,
	// "a request to a Generative AI service or framework that retrieves relevant information or
	// context from a vector database or search system".
	"retrieval": false,
	// "Fetch a previously generated model response by its identifier, without performing
	// inference".
	"fetch_response": false,
	// gen_ai.memory.client: "calls to memory systems".
	"create_memory": false, "create_memory_store": false, "delete_memory": false,
	"delete_memory_store": false, "search_memory": false, "update_memory": false, "upsert_memory": false,
}

// operationSpan is a CLIENT span of 120 ms with gen_ai.operation.name op, a model and usage, as a
// vector store search or a memory call may carry (the embedding model it queried with).
func operationSpan(op string) ptrace.Span {
	s := ptrace.NewSpan()
	s.SetKind(ptrace.SpanKindClient)
	s.SetStartTimestamp(1_000_000_000)
	s.SetEndTimestamp(1_120_000_000)
	a := s.Attributes()
	a.PutStr("gen_ai.operation.name", op)
	a.PutStr("gen_ai.provider.name", "openai")
	a.PutStr("gen_ai.request.model", "text-embedding-3-small")
	a.PutInt("gen_ai.usage.input_tokens", 12)
	return s
}

// TestConventionsOperations: of the operations the conventions list, only those that stand for a
// request to a model are model calls by default. A vector store search (retrieval), a memory
// store's call, a plan wrapping the model call that makes it, or the fetch of a stored response
// added its duration, and any usage it carried, to the model calls' before.
func TestConventionsOperations(t *testing.T) {
	d := genaispan.New(genaispan.Config{})
	for op, want := range conventionsOperations {
		if got := d.Read(operationSpan(op), false).ModelCall; got != want {
			t.Errorf("an operation %q span: model call %v, want %v", op, got, want)
		}
	}
	for _, op := range itlconv.DefaultExcludedOperations {
		if want, ok := conventionsOperations[op]; ok && want {
			t.Errorf("the default excluded_operations lists %q, a request to a model", op)
		}
	}
	if def := genaispan.DefaultConfig().ExcludedOperations; !slices.Equal(def, itlconv.DefaultExcludedOperations) {
		t.Errorf("DefaultConfig().ExcludedOperations = %v, want %v", def, itlconv.DefaultExcludedOperations)
	}

	// excluded_operations: [] excludes nothing: every operation counts, as a user who lists their
	// own asked.
	all := genaispan.New(genaispan.Config{ExcludedOperations: []string{}})
	for op := range conventionsOperations {
		if !all.Read(operationSpan(op), false).ModelCall {
			t.Errorf("excluded_operations []: an operation %q span is no model call", op)
		}
	}
}
