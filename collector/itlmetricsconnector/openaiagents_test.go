package itlmetricsconnector

import (
	"context"
	"math"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"

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
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, nil, sink)
	var want golden.WrittenExpected
	for _, wc := range golden.LoadWritten(t) {
		if wc.Name != "openai-agents-v2" {
			continue
		}
		want = wc.Expected
		if err := c.ConsumeTraces(context.Background(), wc.Traces); err != nil {
			t.Fatal(err)
		}
	}
	if want.ModelCalls != 3 {
		t.Fatalf("the openai-agents-v2 fixture expects %d model calls, want 3", want.ModelCalls)
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	md := sink.AllMetrics()[0]
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
