package itlmetricsconnector

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/itlconv"
)

// TestConventionsOperationsAreNoModelCalls: a RAG agent's vector store search (retrieval), its
// memory calls and its plan span, which the conventions define and which carry the model they
// queried with, add nothing to the model calls' metrics; the chat call under the plan counts once.
// Before, the retrieval span added its 120 ms to the duration histogram of its model.
func TestConventionsOperationsAreNoModelCalls(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, nil, sink)
	td := ptrace.NewTraces()
	genSpan(td, "gpt-4o", 1, 100, 10)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	start := time.Unix(1_800_000_000, 0)
	for i, op := range []string{"retrieval", "search_memory", "upsert_memory", "plan", "fetch_response"} {
		s := spans.AppendEmpty()
		s.SetKind(ptrace.SpanKindClient)
		s.SetTraceID(pcommon.TraceID{1})
		s.SetSpanID(pcommon.SpanID{2, byte(i)})
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(120 * time.Millisecond)))
		a := s.Attributes()
		a.PutStr("gen_ai.operation.name", op)
		a.PutStr("gen_ai.provider.name", "openai")
		a.PutStr("gen_ai.request.model", "text-embedding-3-small")
		a.PutInt("gen_ai.usage.input_tokens", 12)
	}
	if err := c.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	md := flushed(t, c, sink)
	// One series per operation: add up every point of the model (of one token type, if given).
	total := func(name, tokenType string) (n uint64, sum float64) {
		forMetric(md, name, func(m pmetric.Metric) {
			for i := range m.Histogram().DataPoints().Len() {
				dp := m.Histogram().DataPoints().At(i)
				if str(dp.Attributes(), "gen_ai.request.model") == "text-embedding-3-small" && str(dp.Attributes(), "gen_ai.token.type") == tokenType {
					n, sum = n+dp.Count(), sum+dp.Sum()
				}
			}
		})
		return n, sum
	}
	if n, secs := total(itlconv.Duration.Name, ""); n != 0 {
		t.Errorf("retrieval, memory, plan and fetch_response spans: %d duration observations summing %.3f s, want none", n, secs)
	}
	if _, tokens := total(itlconv.TokenUsage.Name, "input"); tokens != 0 {
		t.Errorf("%v input tokens counted from spans that are no model calls", tokens)
	}
	if n := sumPoints(md, itlconv.Generations.Name, "")[dpKey{model: "text-embedding-3-small"}]; n != 0 {
		t.Errorf("%d generations counted from spans that are no model calls", n)
	}
	if dp, ok := histPoints(md, itlconv.Duration.Name)[dpKey{model: "gpt-4o"}]; !ok || dp.Count() != 1 {
		t.Errorf("the chat call: %d duration observations, want 1", count(dp, ok))
	}
}
