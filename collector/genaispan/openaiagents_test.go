package genaispan_test

import (
	"slices"
	"testing"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/itlconv"
)

// TestOpenAIAgentsModelCalls: opentelemetry-instrumentation-openai-agents-v2 writes
// gen_ai.operation.name on every span it makes of the OpenAI Agents SDK's: agent_handoff on a
// handoff, guardrail_check on a guardrail, and "unknown" on the run's task span and each turn's
// span (openai-agents 0.14 and later), which the rule "any operation not excluded is a model call"
// read as model calls without a model, with the whole turn's or run's duration: 9 model calls for
// a run of 3 requests (testdata/written/openai-agents-v2). Only the 3 response spans count.
func TestOpenAIAgentsModelCalls(t *testing.T) {
	d := genaispan.New(genaispan.Config{})
	var calls []string
	ops := map[string]int{}
	for _, s := range writtenSpans(t, "openai-agents-v2") {
		ops[operationOf(s)]++
		c := d.Read(s, false)
		if !c.ModelCall {
			continue
		}
		calls = append(calls, s.Name())
		if c.Provider != "openai" || c.Model != "gpt-4o-mini-2024-07-18" || c.Operation != "chat" {
			t.Errorf("%q read as provider %q, model %q, operation %q", s.Name(), c.Provider, c.Model, c.Operation)
		}
	}
	if want := slices.Repeat([]string{"chat gpt-4o-mini-2024-07-18"}, 3); !slices.Equal(calls, want) {
		t.Errorf("model calls %q, want %q", calls, want)
	}
	// The fixture holds each kind of span the rule is about.
	for op, n := range map[string]int{itlconv.OpenAIAgentsHandoffOperation: 1, itlconv.OpenAIAgentsGuardrailOperation: 1, itlconv.UnknownOperation: 4, "invoke_agent": 3, "execute_tool": 1} {
		if ops[op] != n {
			t.Errorf("%d %s spans in the fixture, want %d", ops[op], op, n)
		}
	}
}

// TestUnknownOperation: a span of operation "unknown" is no model call when it names no model, as
// the agents instrumentation writes it; one that names its model (another instrumentation's
// request of a kind it does not know) still counts. agent_handoff and guardrail_check are
// excluded_operations' defaults: a list without them counts them, as the user asked.
func TestUnknownOperation(t *testing.T) {
	d := genaispan.New(genaispan.Config{})
	s := operationSpan(itlconv.UnknownOperation)
	if !d.Read(s, false).ModelCall {
		t.Errorf("an operation unknown span with gen_ai.request.model is no model call")
	}
	s.Attributes().Remove("gen_ai.request.model")
	if d.Read(s, false).ModelCall {
		t.Errorf("an operation unknown span without a model is a model call")
	}
	s.Attributes().PutStr("gen_ai.response.model", "gpt-4o-mini-2024-07-18")
	if !d.Read(s, false).ModelCall {
		t.Errorf("an operation unknown span with gen_ai.response.model is no model call")
	}
	all := genaispan.New(genaispan.Config{ExcludedOperations: []string{"invoke_agent"}})
	for _, op := range []string{itlconv.OpenAIAgentsHandoffOperation, itlconv.OpenAIAgentsGuardrailOperation} {
		if d.Read(operationSpan(op), false).ModelCall {
			t.Errorf("an operation %s span is a model call by default", op)
		}
		if !all.Read(operationSpan(op), false).ModelCall {
			t.Errorf("an operation %s span is no model call although excluded_operations leaves it out", op)
		}
	}
}
