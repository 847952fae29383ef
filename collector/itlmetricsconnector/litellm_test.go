package itlmetricsconnector

import (
	"context"
	"math"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

// TestLiteLLM feeds the spans written from LiteLLM's otel callback (testdata/written/litellm-*: the
// SDK, the proxy, the proxy with USE_OTEL_LITELLM_REQUEST_SPAN=true) to the connector: each is one
// model call, a chat, although LiteLLM writes the proxy's call type, "acompletion", as
// gen_ai.operation.name, which the metrics carried as an operation of its own. The SDK's and the
// request span's calls give a client duration and output tokens each; the proxy's SERVER span the
// server request duration, and no tokens.
func TestLiteLLM(t *testing.T) {
	md, cases := writtenMetrics(t, 3, func(name string) bool { return strings.HasPrefix(name, "litellm-") })
	var server, client []float64
	for _, wc := range cases {
		if wc.Expected.SpanKind == "SERVER" {
			server = append(server, wc.Expected.DurationS...)
		} else {
			client = append(client, wc.Expected.DurationS...)
		}
	}
	if len(server) != 1 || len(client) != 2 {
		t.Fatalf("%d SERVER and %d other litellm-* fixtures, want 1 and 2", len(server), len(client))
	}
	sum := func(xs []float64) (s float64) {
		for _, x := range xs {
			s += x
		}
		return s
	}
	for _, w := range []struct {
		name  string
		durs  []float64
		point pmetric.HistogramDataPoint
		ok    bool
	}{
		{name: itlconv.Duration.Name, durs: client},
		{name: itlconv.ServerRequestDuration.Name, durs: server},
	} {
		w.point, w.ok = histPoints(md, w.name)[dpKey{model: "gpt-4o-mini"}]
		if !w.ok || w.point.Count() != uint64(len(w.durs)) || math.Abs(w.point.Sum()-sum(w.durs)) > 1e-9 {
			t.Errorf("%s: present %v, count %d, sum %v; want %d, %v", w.name, w.ok, w.point.Count(), w.point.Sum(), len(w.durs), sum(w.durs))
		}
	}
	if dp, ok := histPoints(md, itlconv.TokenUsage.Name)[dpKey{"gpt-4o-mini", "gen_ai.token.type", "output"}]; !ok || dp.Count() != 2 || dp.Sum() != 38 {
		t.Errorf("output tokens: present %v, count %d, sum %v; want the two client calls' 19 each", ok, dp.Count(), dp.Sum())
	}
	pwalk.Metrics(md, func(m pmetric.Metric) {
		forPoints(m, func(attrs map[string]any) {
			if op := attrs["gen_ai.operation.name"]; op != "chat" {
				t.Errorf("%s: a point with gen_ai.operation.name %v, want chat", m.Name(), op)
			}
		})
	})
}

// forPoints calls f with the attributes of each data point of m, a histogram or a sum.
func forPoints(m pmetric.Metric, f func(map[string]any)) {
	switch m.Type() {
	case pmetric.MetricTypeHistogram:
		for i := range m.Histogram().DataPoints().Len() {
			f(m.Histogram().DataPoints().At(i).Attributes().AsRaw())
		}
	case pmetric.MetricTypeSum:
		for i := range m.Sum().DataPoints().Len() {
			f(m.Sum().DataPoints().At(i).Attributes().AsRaw())
		}
	}
}

// TestLiteLLMNoMessageLogging: with LiteLLM's message logging off its spans carry no
// gen_ai.operation.name (set_attributes returns before it), only the call type in
// llm.request.type: the proxy's "acompletion" gave points with no operation, the SDK's
// "completion" points under text_completion, as OpenLLMetry's request type would. Both are chats.
func TestLiteLLMNoMessageLogging(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, nil, sink)
	n := 0
	for _, wc := range golden.LoadWritten(t) {
		if !strings.HasPrefix(wc.Name, "litellm-") {
			continue
		}
		n++
		td := ptrace.NewTraces()
		wc.Traces.CopyTo(td)
		pwalk.Spans(td, func(_ pcommon.Map, span ptrace.Span) {
			span.Attributes().Remove("gen_ai.operation.name")
		})
		if err := c.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	if n != 3 {
		t.Fatalf("%d litellm-* fixtures, want 3", n)
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	md := sink.AllMetrics()[0]
	points := 0
	pwalk.Metrics(md, func(m pmetric.Metric) {
		forPoints(m, func(attrs map[string]any) {
			points++
			if op := attrs["gen_ai.operation.name"]; op != "chat" {
				t.Errorf("%s: a point with gen_ai.operation.name %v, want chat", m.Name(), op)
			}
		})
	})
	if points == 0 {
		t.Error("no points")
	}
}

// TestLiteLLMProvider: LiteLLM writes its own provider names as gen_ai.system ("bedrock"); the
// metrics carry the conventions' ("aws.bedrock"), as every other instrumentation's calls to it do.
func TestLiteLLMProvider(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, nil, sink)
	for _, wc := range golden.LoadWritten(t) {
		if wc.Name != "litellm-proxy-request-span" {
			continue
		}
		td := ptrace.NewTraces()
		wc.Traces.CopyTo(td)
		pwalk.Spans(td, func(_ pcommon.Map, span ptrace.Span) {
			if _, ok := span.Attributes().Get(itlconv.SystemKey); ok {
				span.Attributes().PutStr(itlconv.SystemKey, "bedrock")
			}
		})
		if err := c.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	points := 0
	pwalk.Metrics(sink.AllMetrics()[0], func(m pmetric.Metric) {
		forPoints(m, func(attrs map[string]any) {
			points++
			if p := attrs["gen_ai.provider.name"]; p != "aws.bedrock" {
				t.Errorf("%s: a point with gen_ai.provider.name %v, want aws.bedrock", m.Name(), p)
			}
		})
	})
	if points == 0 {
		t.Error("no points: no litellm-proxy-request-span fixture?")
	}
}
