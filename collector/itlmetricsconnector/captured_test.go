package itlmetricsconnector

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

// TestCaptured replays the spans the real npm packages of other instrumentations exported
// (tools/capture) through the connector, every scenario under its own model: one duration and one
// set of tokens per model call however many agent and wrapper spans surround it, a time to first
// chunk where the instrumentation wrote one, and never a gap, a stall series or a timeline: none of
// them writes per-chunk data.
func TestCaptured(t *testing.T) {
	cases := golden.LoadCaptured(t)
	sink := new(consumertest.MetricsSink)
	// A scenario two instrumentations describe is read with its excluded_scopes
	// (golden.CapturedExcludedScopes), by a connector of its own: the scope may be another
	// scenario's. Every other scenario goes to one connector.
	conns := map[string]*itlMetrics{}
	for name, cc := range cases {
		excluded, key := golden.CapturedExcludedScopes[name], ""
		if excluded != nil {
			key = name
		}
		c, ok := conns[key]
		if !ok {
			c = newTestConnector(t, func(cfg *Config) { cfg.ExcludedScopes = excluded }, sink)
			conns[key] = c
		}
		if err := c.ConsumeTraces(context.Background(), cc.Traces); err != nil {
			t.Fatal(err)
		}
	}
	md := pmetric.NewMetrics()
	for _, c := range conns {
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range sink.AllMetrics() {
		m.ResourceMetrics().MoveAndAppendTo(md.ResourceMetrics())
	}
	// No scenario's model call is the child of another, once the scopes its row says to exclude
	// are: one instrumentation writes one model call per request, however many spans surround it.
	for _, c := range conns {
		if n := ownTotal(t, c, "otelcol_connector_itl_metrics_spans_nested"); n != 0 {
			t.Errorf("%d model calls counted as nested in another", n)
		}
	}
	dur := histPoints(md, itlconv.Duration.Name)
	ttft := histPoints(md, itlconv.TimeToFirstChunk.Name)
	gaps := histPoints(md, itlconv.TimePerOutputChunk.Name)
	tok := histPoints(md, itlconv.TokenUsage.Name)
	stalls := sumPoints(md, itlconv.Stalls.Name, "")
	timing := sumPoints(md, itlconv.Generations.Name, itlconv.TimingKey)
	// Every duration observation is a scenario's model call: none under another model (a wrapper
	// span that names none, such as Strands' invoke_graph and node spans).
	var all, wantAll uint64
	forMetric(md, itlconv.Duration.Name, func(m pmetric.Metric) {
		for i := range m.Histogram().DataPoints().Len() {
			all += m.Histogram().DataPoints().At(i).Count()
		}
	})
	for name := range cases {
		wantAll += uint64(golden.Captured[name].ModelCalls)
	}
	if all != wantAll {
		t.Errorf("%d duration observations in all, want %d, one per model call of the scenarios", all, wantAll)
	}
	for name, cc := range cases {
		want := golden.Captured[name]
		m := cc.Truth.Model
		t.Run(name, func(t *testing.T) {
			// A scenario of no model call (langsmith-chain) has no point.
			dp, ok := dur[dpKey{model: m}]
			if count(dp, ok) != uint64(want.ModelCalls) {
				t.Errorf("%d duration observations, want one per model call: %d", count(dp, ok), want.ModelCalls)
			} else if ok {
				if p := str(dp.Attributes(), "gen_ai.provider.name"); p != want.Provider {
					t.Errorf("provider %q, want %q", p, want.Provider)
				}
			}
			wantTTFT := 0
			if want.TTFTSource != "" {
				wantTTFT = want.ModelCalls - want.NoTTFT
			}
			if dp, ok := ttft[dpKey{model: m}]; count(dp, ok) != uint64(wantTTFT) {
				t.Errorf("%d time-to-first-chunk observations, want %d", count(dp, ok), wantTTFT)
			}
			dp, ok = tok[dpKey{m, "gen_ai.token.type", "output"}]
			if want.OutputTokens < 0 && ok || want.OutputTokens >= 0 && (!ok || int64(dp.Sum()) != want.OutputTokens) {
				sum := 0.0
				if ok {
					sum = dp.Sum()
				}
				t.Errorf("output tokens %v (present %v), want %d: counted once per model call", sum, ok, want.OutputTokens)
			}
			if dp, ok := gaps[dpKey{model: m}]; ok {
				t.Errorf("%d gap observations from a source that holds no gaps", dp.Count())
			}
			if _, ok := stalls[dpKey{model: m}]; ok {
				t.Errorf("a stall series from a source that cannot see stalls")
			}
			// Every model call is one generation: of timing ttft when its time to first chunk was
			// read, else of timing none (Mastra's later steps, whose source is the first step's).
			for _, tm := range []string{itlconv.TimingTTFT, itlconv.TimingNone} {
				wantN := map[string]int{itlconv.TimingTTFT: wantTTFT, itlconv.TimingNone: want.ModelCalls - wantTTFT}[tm]
				if n := timing[dpKey{m, itlconv.TimingKey, tm}]; n != int64(wantN) {
					t.Errorf("%d generations with timing %s, want %d", n, tm, wantN)
				}
			}
		})
	}
}
