package genaispan_test

import (
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/itlconv"
)

// TestOpenLLMetryLangChainModelCalls: OpenLLMetry's LangChain instrumentation
// (@traceloop/instrumentation-langchain 0.27.0) writes a span per chain run, "workflow {name}" with
// gen_ai.operation.name workflow (its own name, no convention's) and traceloop.span.kind workflow:
// the rule "any operation not excluded is a model call" read the chain of openllmetry-langchain
// (prompt | model | parser) as four model calls, three of them without a model and the sequence's
// as long as the whole chain. Only the model run's span, "chat {model}", counts, with its model,
// provider and usage, whatever excluded_operations says of workflow.
func TestOpenLLMetryLangChainModelCalls(t *testing.T) {
	spans := capturedSpans(t, "openllmetry-langchain")
	for _, excluded := range [][]string{nil, {}, {"invoke_agent"}} {
		var names []string
		d := genaispan.New(genaispan.Config{ExcludedOperations: excluded})
		for _, s := range spans {
			c := d.Read(s, false)
			if !c.ModelCall {
				continue
			}
			names = append(names, s.Name())
			if c.Model != "cap-openllmetry-langchain" || c.Provider != "openai" || c.Operation != "chat" {
				t.Errorf("excluded_operations %v: %q read as a %s call of model %q, provider %q", excluded, s.Name(), c.Operation, c.Model, c.Provider)
			}
			if !c.Figures.HasOutputTokens || c.Figures.OutputTokens != 20 {
				t.Errorf("excluded_operations %v: output tokens %d (%v), want 20", excluded, c.Figures.OutputTokens, c.Figures.HasOutputTokens)
			}
		}
		if !slices.Equal(names, []string{"chat cap-openllmetry-langchain"}) {
			t.Errorf("excluded_operations %v: model calls %v, want the chat span alone", excluded, names)
		}
	}

	// The workflow spans as captured: one per chain run, the sequence's, the prompt template's and
	// the parser's.
	var workflows []ptrace.Span
	for _, s := range spans {
		if operationOf(s) == "workflow" {
			workflows = append(workflows, s)
		}
	}
	if len(workflows) != 3 {
		t.Fatalf("%d workflow spans in openllmetry-langchain, want 3", len(workflows))
	}

	// Each of OpenLLMetry's kinds of span that asks no model (its decorators' workflow, task, agent
	// and tool) is none, under any operation; without traceloop.span.kind the general rule holds,
	// and a kind OpenLLMetry does not write leaves it alone.
	for _, tc := range []struct {
		kind string // "" for none
		op   string
		want bool
	}{
		{"workflow", "workflow", false},
		{"task", "execute_tool", false},
		{"agent", "invoke_agent", false},
		{"tool", "chat", false},
		{"workflow", "chat", false},
		{"", "workflow", true},
		{"unknown", "chat", true},
	} {
		s := ptrace.NewSpan()
		workflows[0].CopyTo(s)
		s.Attributes().Remove(itlconv.OpenLLMetrySpanKindKey)
		if tc.kind != "" {
			s.Attributes().PutStr(itlconv.OpenLLMetrySpanKindKey, tc.kind)
		}
		s.Attributes().PutStr("gen_ai.operation.name", tc.op)
		s.Attributes().PutStr("gen_ai.request.model", "m")
		if got := genaispan.New(genaispan.Config{ExcludedOperations: []string{"invoke_agent", "execute_tool"}}).Read(s, false).ModelCall; got != tc.want {
			t.Errorf("traceloop.span.kind %q, operation %s: model call %v, want %v", tc.kind, tc.op, got, tc.want)
		}
	}
}
