package itlmetricsconnector

import (
	"context"
	"math"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

// TestOpenAIAgents feeds the spans written from opentelemetry-instrumentation-openai-agents-v2 for
// one agent run of three requests to the model (testdata/written/openai-agents-v2: a guardrail, a
// handoff, a tool, the run's task span and three turn spans beside the three response spans) to
// the connector: three client durations and three output token counts, all under the model and
// operation chat. The handoff, the guardrail check and the task and turn spans ("unknown") were
// counted as model calls of their own operations, without a model, with the run's and each turn's
// whole duration.
func TestOpenAIAgents(t *testing.T) {
	md, cases := writtenMetrics(t, 1, func(name string) bool { return name == "openai-agents-v2" })
	want := cases[0].Expected
	if want.ModelCalls != 3 {
		t.Fatalf("the openai-agents-v2 fixture expects %d model calls, want 3", want.ModelCalls)
	}
	var wantSum float64
	for _, d := range want.DurationS {
		wantSum += d
	}
	var count uint64
	var sum float64
	forMetric(md, itlconv.Duration.Name, func(m pmetric.Metric) {
		for i := range m.Histogram().DataPoints().Len() {
			dp := m.Histogram().DataPoints().At(i)
			count += dp.Count()
			sum += dp.Sum()
		}
	})
	if count != 3 || math.Abs(sum-wantSum) > 1e-9 {
		t.Errorf("%s: %d observations summing %v s; want 3, %v s", itlconv.Duration.Name, count, sum, wantSum)
	}
	if dp, ok := histPoints(md, itlconv.TokenUsage.Name)[dpKey{"gpt-4o-mini-2024-07-18", "gen_ai.token.type", "output"}]; !ok || dp.Count() != 3 || dp.Sum() != float64(*want.OutputTokens) {
		t.Errorf("output tokens: present %v, count %d, sum %v; want 3 calls, %d", ok, dp.Count(), dp.Sum(), *want.OutputTokens)
	}
	pwalk.Metrics(md, func(m pmetric.Metric) {
		forPoints(m, func(attrs map[string]any) {
			if op, model := attrs["gen_ai.operation.name"], attrs["gen_ai.request.model"]; op != "chat" || model != "gpt-4o-mini-2024-07-18" {
				t.Errorf("%s: a point with gen_ai.operation.name %v, model %v; want chat, gpt-4o-mini-2024-07-18", m.Name(), op, model)
			}
		})
	})
}

// TestOpenAIAgentsWithOpenAIV2: with opentelemetry-instrumentation-openai-v2 on beside the agents
// instrumentation, a Chat Completions model's request is two spans, the agents' and, inside it
// (the agents' processor makes its span current), openai-v2's chat span for the same
// AsyncCompletions.create: two model calls, which the connector counts as a nested pair.
// excluded_scopes with openai-v2's scope counts the request once.
func TestOpenAIAgentsWithOpenAIV2(t *testing.T) {
	const v2Scope = "opentelemetry.instrumentation.openai_v2"
	traces := func(t *testing.T) ptrace.Traces {
		td := ptrace.NewTraces()
		var inner ptrace.ScopeSpans
		for _, wc := range golden.LoadWritten(t) {
			switch wc.Name {
			case "openai-agents-v2":
				wc.Traces.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
			case "openai-v2":
				inner = wc.Traces.ResourceSpans().At(0).ScopeSpans().At(0)
			}
		}
		if td.ResourceSpans().Len() != 1 || inner.Scope().Name() != v2Scope {
			t.Fatalf("no openai-agents-v2 fixture, or openai-v2's scope is %q, want %q", inner.Scope().Name(), v2Scope)
		}
		// The agents' span of the first request, and openai-v2's span for it, within its time.
		outer := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1)
		if kind, _ := outer.Attributes().Get("gen_ai.operation.name"); kind.Str() != "chat" {
			t.Fatalf("the fixture's second span is %q, want the first chat span", outer.Name())
		}
		ss := td.ResourceSpans().At(0).ScopeSpans().AppendEmpty()
		inner.CopyTo(ss)
		s := ss.Spans().At(0)
		s.SetTraceID(outer.TraceID())
		s.SetParentSpanID(outer.SpanID())
		s.SetStartTimestamp(outer.StartTimestamp() + 1_000_000)
		s.SetEndTimestamp(outer.EndTimestamp() - 1_000_000)
		return td
	}
	for _, tc := range []struct {
		excluded []string
		calls    uint64
		nested   int64
	}{{nil, 4, 1}, {[]string{v2Scope}, 3, 0}} {
		sink := new(consumertest.MetricsSink)
		c := newTestConnector(t, func(cfg *Config) { cfg.ExcludedScopes = tc.excluded }, sink)
		if err := c.ConsumeTraces(context.Background(), traces(t)); err != nil {
			t.Fatal(err)
		}
		if n := ownTotal(t, c, "otelcol_connector_itl_metrics_spans_nested"); n != tc.nested {
			t.Errorf("excluded_scopes %v: %d nested model calls, want %d", tc.excluded, n, tc.nested)
		}
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		var calls uint64
		forMetric(sink.AllMetrics()[0], itlconv.Duration.Name, func(m pmetric.Metric) {
			for i := range m.Histogram().DataPoints().Len() {
				calls += m.Histogram().DataPoints().At(i).Count()
			}
		})
		if calls != tc.calls {
			t.Errorf("excluded_scopes %v: %d model calls, want %d", tc.excluded, calls, tc.calls)
		}
	}
}
