package genaispan_test

import (
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

// strandsSpans returns the spans of a captured strands-* scenario (tools/capture), a copy.
func strandsSpans(t *testing.T, scenario string) []ptrace.Span {
	t.Helper()
	cc, ok := golden.LoadCaptured(t)[scenario]
	if !ok {
		t.Fatalf("no captured fixture %s", scenario)
	}
	td := ptrace.NewTraces()
	cc.Traces.CopyTo(td)
	var spans []ptrace.Span
	pwalk.Spans(td, func(_ pcommon.Map, s ptrace.Span) { spans = append(spans, s) })
	return spans
}

func operationOf(s ptrace.Span) string {
	v, _ := s.Attributes().Get("gen_ai.operation.name")
	return v.Str()
}

// TestStrandsModelCalls: Strands writes gen_ai.operation.name on its graph, node and memory spans
// too (invoke_graph, execute_node, memory.search, ...), the first two with the usage of the calls
// below them; only its chat spans, one per provider request, are model calls, whatever
// excluded_operations says of the others. Before, a graph of one agent read as three model calls
// (invoke_graph and the node without a model), and every call's provider as the service name
// Strands writes as gen_ai.system.
func TestStrandsModelCalls(t *testing.T) {
	spans := strandsSpans(t, "strands-graph")
	for name, excluded := range map[string][]string{"the default": nil, "[]": {}} {
		var ops []string
		d := genaispan.New(genaispan.Config{ExcludedOperations: excluded})
		for _, s := range spans {
			if c := d.Read(s, false); c.ModelCall {
				ops = append(ops, operationOf(s))
				if c.Provider != "" {
					t.Errorf("excluded_operations %s: %q span read with provider %q, Strands' service name", name, s.Name(), c.Provider)
				}
			}
		}
		if !slices.Equal(ops, []string{"chat"}) {
			t.Errorf("excluded_operations %s: model calls of operations %v, want the one chat span", name, ops)
		}
	}

	// Its other operations on a Strands span (gen_ai.event.start_time) are no model calls, a
	// memory search or an extraction's root span included; the model call an extraction makes is
	// a chat span of its own.
	chat := spans[len(spans)-1]
	if operationOf(chat) != "chat" {
		t.Fatalf("the last span of strands-graph is %q, want the chat span", chat.Name())
	}
	for _, op := range []string{"memory.search", "memory.add", "memory.inject", "memory.extract", "invoke_swarm", "execute_node"} {
		s := ptrace.NewSpan()
		chat.CopyTo(s)
		s.Attributes().PutStr("gen_ai.operation.name", op)
		if genaispan.New(genaispan.Config{}).Read(s, false).ModelCall {
			t.Errorf("a Strands %s span is a model call", op)
		}
	}

	// The chat span stays one however excluded_operations is set, but when it names chat.
	if genaispan.New(genaispan.Config{ExcludedOperations: []string{"chat"}}).Read(chat, false).ModelCall {
		t.Error("a Strands chat span counts although excluded_operations names chat")
	}

	// Without gen_ai.event.start_time, the same operations keep the general rule.
	plain := ptrace.NewSpan()
	chat.CopyTo(plain)
	plain.Attributes().Remove(itlconv.StrandsStartTimeKey)
	plain.Attributes().PutStr("gen_ai.operation.name", "execute_node")
	if !genaispan.New(genaispan.Config{}).Read(plain, false).ModelCall {
		t.Error("a span of operation execute_node without gen_ai.event.start_time is no model call")
	}
	plain.Attributes().PutStr("gen_ai.operation.name", "chat")
	if c := genaispan.New(genaispan.Config{}).Read(plain, false); c.Provider != "strands-agents" {
		t.Errorf("without gen_ai.event.start_time, provider %q, want gen_ai.system as written", c.Provider)
	}
}

// TestStrandsServerRequestDuration: Strands writes the provider's latency as
// gen_ai.server.request.duration in MILLISECONDS on the chat span (Bedrock's metrics; the OpenAI
// model reports none), where the conventions' metric of that name is in seconds. It is read as
// nothing: the call's duration is the span's, and nothing is malformed.
func TestStrandsServerRequestDuration(t *testing.T) {
	chat := strandsSpans(t, "strands-chat")[2]
	if operationOf(chat) != "chat" {
		t.Fatalf("span 3 of strands-chat is %q, want the chat span", chat.Name())
	}
	want := float64(chat.EndTimestamp()-chat.StartTimestamp()) / 1e9
	for _, v := range []func(pcommon.Map){
		func(a pcommon.Map) { a.PutInt("gen_ai.server.request.duration", 431) },
		func(a pcommon.Map) { a.PutDouble("gen_ai.server.request.duration", 0.431) },
	} {
		v(chat.Attributes())
		c := genaispan.New(genaispan.Config{}).Read(chat, false)
		if !c.ModelCall || !c.HasDuration || c.Duration != want || c.Figures.HasTTFT || len(c.Malformed()) > 0 {
			t.Errorf("with gen_ai.server.request.duration: model call %v, duration %v (%v), want %v; TTFT %v; malformed %v",
				c.ModelCall, c.Duration, c.HasDuration, want, c.Figures.HasTTFT, c.Malformed())
		}
	}
}
