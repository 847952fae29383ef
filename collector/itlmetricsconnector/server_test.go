package itlmetricsconnector

import (
	"context"
	"math"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

// TestServerSpans: a SERVER span feeds the conventions' server metrics, with their bucket advice,
// and nothing else; a CLIENT span of the same model the client metrics. The two sides of one
// deployment sit next to each other without counting a request's tokens or stalls twice.
func TestServerSpans(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, nil, sink)
	td := ptrace.NewTraces()
	genSpan(td, "m", 1, 300, 20, 40, 500) // client: TTFT 300 ms, gaps 20, 40, 500 ms
	genSpan(td, "m", 2, 250, 10, 30, 50)  // server: TTFT 250 ms, gaps 10, 30, 50 ms
	server := td.ResourceSpans().At(1).ScopeSpans().At(0).Spans().At(0)
	server.SetKind(ptrace.SpanKindServer)
	toks := server.Attributes().PutEmptySlice(string(itlconv.ChunkTokensKey))
	for _, n := range []int64{1, 2, 1, 5} {
		toks.AppendEmpty().SetInt(n)
	}
	server.Attributes().PutStr("error.type", "overloaded")
	server.Attributes().PutInt("gen_ai.usage.output_tokens", 9)
	if err := c.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	md := sink.AllMetrics()[0]
	check := func(name string, key dpKey, bounds, values []float64) {
		t.Helper()
		dp, ok := histPoints(md, name)[key]
		checkHist(t, name, dp, ok, bounds, values)
	}
	check(itlconv.ServerTimeToFirstToken.Name, dpKey{model: "m"}, itlconv.ServerTTFTBuckets, []float64{0.25})
	check(itlconv.ServerTimePerOutputToken.Name, dpKey{model: "m"}, itlconv.ServerTPOTBuckets, []float64{0.010 / 2, 0.030 / 1, 0.050 / 5})
	check(itlconv.ServerRequestDuration.Name, dpKey{"m", "error.type", "overloaded"}, itlconv.DurationBuckets, []float64{0.341})
	check(itlconv.TimeToFirstChunk.Name, dpKey{model: "m"}, itlconv.DurationBuckets, []float64{0.3})
	check(itlconv.TimePerOutputChunk.Name, dpKey{model: "m"}, itlconv.GapBuckets, []float64{0.02, 0.04, 0.5})
	check(itlconv.Duration.Name, dpKey{model: "m"}, itlconv.DurationBuckets, []float64{0.861})
	if dp, ok := histPoints(md, itlconv.TokenUsage.Name)[dpKey{"m", "gen_ai.token.type", "output"}]; !ok || dp.Count() != 1 || dp.Sum() != 4 {
		t.Errorf("output tokens: the client's 4 (its chunks' sum) only, got count %d sum %v", dp.Count(), dp.Sum())
	}
	if s := sumPoints(md, itlconv.Stalls.Name, ""); s[dpKey{model: "m"}] != 1 {
		t.Errorf("stalls %v, want the client's one 500 ms gap only", s)
	}
	if n := sumPoints(md, itlconv.Generations.Name, itlconv.TimingKey); len(n) != 1 || n[dpKey{"m", itlconv.TimingKey, itlconv.TimingTimeline}] != 1 {
		t.Errorf("generations %v, want the client's one", n)
	}
	forMetric(md, itlconv.ServerTimePerOutputToken.Name, func(m pmetric.Metric) {
		if m.Unit() != "s" || m.Description() != itlconv.ServerTimePerOutputToken.Description {
			t.Errorf("unit %q description %q", m.Unit(), m.Description())
		}
	})
}

// TestVLLMServerSpans: vLLM's request spans (written from its source) give the server's time to
// first token and request duration, under the model it names (V0) or none (V1).
func TestVLLMServerSpans(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, nil, sink)
	var want []golden.WrittenCase
	for _, wc := range golden.LoadWritten(t) {
		if wc.Expected.SpanKind == "SERVER" && strings.HasPrefix(wc.Name, "vllm-") {
			want = append(want, wc)
			if err := c.ConsumeTraces(context.Background(), wc.Traces); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(want) < 2 {
		t.Fatalf("%d written SERVER fixtures, want the two vLLM ones", len(want))
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	md := sink.AllMetrics()[0]
	ttft := histPoints(md, itlconv.ServerTimeToFirstToken.Name)
	dur := histPoints(md, itlconv.ServerRequestDuration.Name)
	for _, wc := range want {
		model := ""
		if wc.Expected.Model != nil {
			model = *wc.Expected.Model
		}
		if dp, ok := ttft[dpKey{model: model}]; !ok || dp.Count() != 1 || math.Abs(dp.Sum()-wc.Expected.TTFTS[0]) > 1e-9 {
			t.Errorf("%s: server time to first token %v (present %v), want %v", wc.Name, dp.Sum(), ok, wc.Expected.TTFTS)
		}
		if dp, ok := dur[dpKey{model: model}]; !ok || dp.Count() != 1 || math.Abs(dp.Sum()-wc.Expected.DurationS[0]) > 1e-9 {
			t.Errorf("%s: server request duration %v (present %v), want %v", wc.Name, dp.Sum(), ok, wc.Expected.DurationS)
		}
	}
	if len(histPoints(md, itlconv.TimeToFirstChunk.Name)) != 0 || len(histPoints(md, itlconv.TokenUsage.Name)) != 0 {
		t.Errorf("SERVER spans produced client metrics")
	}
}
