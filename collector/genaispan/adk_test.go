package genaispan_test

import (
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/itlconv"
)

// TestADKModelCalls: Google ADK (@google/adk 2.0.0) writes gen_ai.operation.name execute_node on
// its workflow's node spans, the workflow's own and the agent node's, which the rule "any operation
// not excluded is a model call" read as two model calls without a model, with the whole node's
// duration; its model call, call_llm, has no operation and counts as a span of the legacy
// conventions (gen_ai.system), whose value, gcp.vertex.agent, is ADK's own name: every call read
// under provider gcp.vertex.agent. Only call_llm counts, one per request, with no provider.
func TestADKModelCalls(t *testing.T) {
	for scenario, want := range map[string]int{"adk-chat": 1, "adk-agent": 2, "adk-workflow": 1} {
		var names []string
		d := genaispan.New(genaispan.Config{})
		for _, s := range capturedSpans(t, scenario) {
			c := d.Read(s, false)
			if !c.ModelCall {
				continue
			}
			names = append(names, s.Name())
			if c.Provider != "" {
				t.Errorf("%s: %q span read with provider %q, ADK's tracer name", scenario, s.Name(), c.Provider)
			}
			if c.Model != "cap-"+scenario {
				t.Errorf("%s: %q span read with model %q", scenario, s.Name(), c.Model)
			}
			if c.Figures.HasTTFT {
				t.Errorf("%s: a time to first chunk from %q, which ADK does not write", scenario, c.TTFTSource)
			}
		}
		if !slices.Equal(names, slices.Repeat([]string{"call_llm"}, want)) {
			t.Errorf("%s: model calls %v, want %d call_llm spans", scenario, names, want)
		}
	}

	// Each node span of adk-workflow, the Workflow's own and the agent node's, carries
	// execute_node; named in excluded_operations or not, a list that leaves it out counts it.
	var nodes []ptrace.Span
	for _, s := range capturedSpans(t, "adk-workflow") {
		if operationOf(s) == "execute_node" {
			nodes = append(nodes, s)
		}
	}
	if len(nodes) != 2 {
		t.Fatalf("%d execute_node spans in adk-workflow, want 2", len(nodes))
	}
	for _, s := range nodes {
		if genaispan.New(genaispan.Config{}).Read(s, false).ModelCall {
			t.Errorf("ADK's node span %q is a model call", s.Name())
		}
		if !genaispan.New(genaispan.Config{ExcludedOperations: []string{"invoke_agent"}}).Read(s, false).ModelCall {
			t.Errorf("ADK's node span %q is no model call although excluded_operations leaves execute_node out", s.Name())
		}
	}
}

// TestADKProvider: gen_ai.system gcp.vertex.agent names ADK, not the model's provider, and is not
// read as one; a provider written beside it, or gen_ai.system of another value, still is.
func TestADKProvider(t *testing.T) {
	var call ptrace.Span
	for _, s := range capturedSpans(t, "adk-chat") {
		if s.Name() == "call_llm" {
			call = s
		}
	}
	if v, _ := call.Attributes().Get("gen_ai.system"); v.Str() != itlconv.ADKSystem {
		t.Fatalf("adk-chat's call_llm has gen_ai.system %q, want %q", v.Str(), itlconv.ADKSystem)
	}
	d := genaispan.New(genaispan.Config{})
	if c := d.Read(call, false); !c.ModelCall || c.Provider != "" {
		t.Errorf("call_llm: model call %v, provider %q; want a model call with no provider", c.ModelCall, c.Provider)
	}
	s := ptrace.NewSpan()
	call.CopyTo(s)
	s.Attributes().PutStr("gen_ai.provider.name", "gcp.gemini")
	if c := d.Read(s, false); c.Provider != "gcp.gemini" {
		t.Errorf("call_llm with gen_ai.provider.name gcp.gemini: provider %q", c.Provider)
	}
	call.CopyTo(s)
	s.Attributes().PutStr("gen_ai.system", "gcp.vertex_ai")
	if c := d.Read(s, false); !c.ModelCall || c.Provider != "gcp.vertex_ai" {
		t.Errorf("gen_ai.system gcp.vertex_ai: model call %v, provider %q", c.ModelCall, c.Provider)
	}
}
