package itlmetricsconnector

import (
	"context"
	"math"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

// sumPoints returns the int sum points of metric name, by model and the value of attribute key.
func sumPoints(md pmetric.Metrics, name, key string) map[dpKey]int64 {
	out := map[dpKey]int64{}
	forMetric(md, name, func(m pmetric.Metric) {
		for i := range m.Sum().DataPoints().Len() {
			dp := m.Sum().DataPoints().At(i)
			out[dpKey{str(dp.Attributes(), "gen_ai.request.model"), key, str(dp.Attributes(), key)}] += dp.IntValue()
		}
	})
	return out
}

// TestForeign feeds every foreign reference trace to the connector, each under its own model, and
// checks the metrics: one duration and one set of tokens per model call (agent and wrapper spans
// add none), a TTFT observation from whichever source the instrumentation wrote, and per-gap,
// stall and timing figures only where the source holds a timeline.
func TestForeign(t *testing.T) {
	cases := golden.LoadForeign(t)
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, nil, sink)
	for _, fc := range cases {
		if err := c.ConsumeTraces(context.Background(), fc.Traces); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	md := sink.AllMetrics()[0]
	ttft := histPoints(md, itlconv.TimeToFirstChunk.Name)
	gaps := histPoints(md, itlconv.TimePerOutputChunk.Name)
	dur := histPoints(md, itlconv.Duration.Name)
	tok := histPoints(md, itlconv.TokenUsage.Name)
	stalls := sumPoints(md, itlconv.Stalls.Name, "")
	timing := sumPoints(md, itlconv.Generations.Name, itlconv.TimingKey)
	malformed := malformedTotal(t, c)
	wantMalformed := 0
	for _, fc := range cases {
		w := fc.Expected
		m := w.Model
		if w.Malformed {
			wantMalformed++
		}
		t.Run(fc.Name, func(t *testing.T) {
			dp, ok := dur[dpKey{model: m}]
			if !ok || dp.Count() != uint64(w.ModelCalls) || math.Abs(dp.Sum()-sum(w.DurationS)) > 1e-6 {
				t.Errorf("duration: %d observations summing %v, want %d summing %v", dp.Count(), dp.Sum(), w.ModelCalls, sum(w.DurationS))
			}
			dp, ok = ttft[dpKey{model: m}]
			if got := count(dp, ok); got != uint64(len(w.TTFTS)) || ok && math.Abs(dp.Sum()-sum(w.TTFTS)) > w.Tolerance()*float64(len(w.TTFTS)) {
				t.Errorf("ttft: %d observations summing %v, want %v", got, dp.Sum(), w.TTFTS)
			}
			dp, ok = tok[dpKey{m, "gen_ai.token.type", "output"}]
			switch {
			case w.OutputTokens == nil && ok:
				t.Errorf("output tokens recorded (%v), want none", dp.Sum())
			case w.OutputTokens != nil && (!ok || dp.Sum() != float64(*w.OutputTokens)):
				t.Errorf("output tokens %v (present %v), want %d: counted once, not per wrapper span", dp.Sum(), ok, *w.OutputTokens)
			}
			dp, ok = gaps[dpKey{model: m}]
			if got := count(dp, ok); got != uint64(w.Gaps) {
				t.Errorf("%d gap observations, want %d: a mean is not a gap", got, w.Gaps)
			}
			if _, ok := stalls[dpKey{model: m}]; ok != w.StallSeries {
				t.Errorf("a stall series: %v, want %v", ok, w.StallSeries)
			}
			wantTiming := itlconv.TimingNone
			switch {
			case w.Gaps > 0:
				wantTiming = itlconv.TimingTimeline
			case len(w.TTFTS) > 0:
				wantTiming = itlconv.TimingTTFT
			}
			if n := timing[dpKey{m, itlconv.TimingKey, wantTiming}]; n != int64(w.ModelCalls) {
				t.Errorf("%s generations %d, want %d (all: %v)", wantTiming, n, w.ModelCalls, timing)
			}
		})
	}
	if malformed != int64(wantMalformed) {
		t.Errorf("%d malformed values counted, want %d", malformed, wantMalformed)
	}
}

func sum(vs []float64) float64 {
	var s float64
	for _, v := range vs {
		s += v
	}
	return s
}

func count(dp pmetric.HistogramDataPoint, ok bool) uint64 {
	if !ok {
		return 0
	}
	return dp.Count()
}

// malformedTotal reads the connector's malformed counter from its own telemetry.
func malformedTotal(t *testing.T, c *itlMetrics) int64 {
	t.Helper()
	return ownTotal(t, c, "otelcol_connector_itl_metrics_spans_malformed")
}

// writtenMetrics feeds a new connector the written fixtures (testdata/written) whose names
// match, fails unless there are want of them, shuts the connector down, and returns its metrics and
// the fixtures.
func writtenMetrics(t *testing.T, want int, match func(name string) bool) (pmetric.Metrics, []golden.WrittenCase) {
	t.Helper()
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, nil, sink)
	var cases []golden.WrittenCase
	for _, wc := range golden.LoadWritten(t) {
		if !match(wc.Name) {
			continue
		}
		cases = append(cases, wc)
		if err := c.ConsumeTraces(context.Background(), wc.Traces); err != nil {
			t.Fatal(err)
		}
	}
	if len(cases) != want {
		t.Fatalf("%d written fixtures match, want %d", len(cases), want)
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return sink.AllMetrics()[0], cases
}

// ownTotal reads the sum of one of the connector's own counters, over its attributes.
func ownTotal(t *testing.T, c *itlMetrics, name string) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	r, _ := testReaders.Load(c)
	if err := r.(*sdkmetric.ManualReader).Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				n += dp.Value
			}
		}
	}
	return n
}
