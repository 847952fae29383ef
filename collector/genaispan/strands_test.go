package genaispan_test

import (
	"math"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/itlconv"
)

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
	spans := capturedSpans(t, "strands-graph")
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

	// Without gen_ai.event.start_time, the same operations keep the general rule: invoke_swarm,
	// which excluded_operations does not name, counts. (execute_node no longer serves here: the
	// default excluded_operations names it, for Google ADK's node spans.)
	plain := ptrace.NewSpan()
	chat.CopyTo(plain)
	plain.Attributes().Remove(itlconv.StrandsStartTimeKey)
	plain.Attributes().PutStr("gen_ai.operation.name", "invoke_swarm")
	if !genaispan.New(genaispan.Config{}).Read(plain, false).ModelCall {
		t.Error("a span of operation invoke_swarm without gen_ai.event.start_time is no model call")
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
	chat := capturedSpans(t, "strands-chat")[2]
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

// TestStrandsTimeToFirstByteMs: the Python SDK (strands-agents/sdk-python, src/strands/telemetry/
// tracer.py _add_optional_usage_and_metrics_attributes) writes the time from the model request to
// its first content block, event_loop/streaming.py's timeToFirstByteMs, in MILLISECONDS as
// gen_ai.server.time_to_first_token on the chat span, where the conventions' unit is seconds. On a
// Strands span it is read as milliseconds: before, 350 ms on a 5 s call read as 350 s, over the
// span's duration, so the call had no TTFT and counted as malformed, and 2 ms read as 2 s.
func TestStrandsTimeToFirstByteMs(t *testing.T) {
	chat := capturedSpans(t, "strands-chat")[2]
	if operationOf(chat) != "chat" {
		t.Fatalf("span 3 of strands-chat is %q, want the chat span", chat.Name())
	}
	chat.SetEndTimestamp(chat.StartTimestamp() + 5e9)
	for _, c := range []struct {
		put  func(pcommon.Map)
		want float64
	}{
		{func(a pcommon.Map) { a.PutInt(itlconv.ServerTimeToFirstTokenKey, 350) }, 0.35},
		{func(a pcommon.Map) { a.PutInt(itlconv.ServerTimeToFirstTokenKey, 2) }, 0.002},
		{func(a pcommon.Map) { a.PutDouble(itlconv.ServerTimeToFirstTokenKey, 1234.5) }, 1.2345},
	} {
		c.put(chat.Attributes())
		got := genaispan.New(genaispan.Config{}).Read(chat, false)
		if !got.ModelCall || !got.Figures.HasTTFT || math.Abs(got.Figures.TTFT-c.want) > 1e-12 || got.TTFTSource != itlconv.ServerTimeToFirstTokenKey || len(got.Malformed()) > 0 {
			t.Errorf("gen_ai.server.time_to_first_token %v: model call %v, TTFT %v (%v) from %q, malformed %v; want %v s",
				chat.Attributes().AsRaw()[itlconv.ServerTimeToFirstTokenKey], got.ModelCall, got.Figures.TTFT, got.Figures.HasTTFT, got.TTFTSource, got.Malformed(), c.want)
		}
	}
	// Elsewhere it stays seconds (OpenLIT's).
	other := ptrace.NewSpan()
	chat.CopyTo(other)
	other.Attributes().Remove(itlconv.StrandsStartTimeKey)
	other.Attributes().PutInt(itlconv.ServerTimeToFirstTokenKey, 2)
	if got := genaispan.New(genaispan.Config{}).Read(other, false); got.Figures.TTFT != 2 {
		t.Errorf("without gen_ai.event.start_time: TTFT %v, want 2 s", got.Figures.TTFT)
	}
}
