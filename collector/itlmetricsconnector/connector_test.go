package itlmetricsconnector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/internal/allocs"
	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

func newTestConnector(t *testing.T, mutate func(*Config), next consumer.Metrics) *itlMetrics {
	t.Helper()
	return newReplicaConnector(t, "", mutate, next)
}

// newReplicaConnector is newTestConnector for the collector whose service.instance.id is
// instance ("": none).
func newReplicaConnector(t *testing.T, instance string, mutate func(*Config), next consumer.Metrics) *itlMetrics {
	t.Helper()
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.MetricsFlushInterval = time.Hour // tests flush by hand or at shutdown
	if mutate != nil {
		mutate(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	set := connectortest.NewNopSettings(Type)
	if instance != "" {
		set.Resource.Attributes().PutStr("service.instance.id", instance)
	}
	reader := sdkmetric.NewManualReader()
	set.TelemetrySettings.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	c, err := NewFactory().CreateTracesToMetrics(context.Background(), set, cfg, next)
	if err != nil {
		t.Fatal(err)
	}
	testReaders.Store(c, reader)
	if err := c.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Shutdown(context.Background()) })
	return c.(*itlMetrics)
}

// testReaders holds the reader of each test connector's own telemetry.
var testReaders sync.Map // *itlMetrics -> *sdkmetric.ManualReader

// point finds the histogram point of metric name whose attributes include want (and whose
// error.type / token type match when given).
type dpKey struct{ model, extraKey, extraVal string }

func histPoints(md pmetric.Metrics, name string) map[dpKey]pmetric.HistogramDataPoint {
	out := map[dpKey]pmetric.HistogramDataPoint{}
	forMetric(md, name, func(m pmetric.Metric) {
		dps := m.Histogram().DataPoints()
		for i := range dps.Len() {
			dp := dps.At(i)
			k := dpKey{model: str(dp.Attributes(), "gen_ai.request.model")}
			for _, e := range []string{"error.type", "gen_ai.token.type"} {
				if v, ok := dp.Attributes().Get(e); ok {
					k.extraKey, k.extraVal = e, v.Str()
				}
			}
			out[k] = dp
		}
	})
	return out
}

func forMetric(md pmetric.Metrics, name string, f func(pmetric.Metric)) {
	pwalk.Metrics(md, func(m pmetric.Metric) {
		if m.Name() == name {
			f(m)
		}
	})
}

func str(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok {
		return v.AsString()
	}
	return ""
}

func bucketCounts(bounds, values []float64) []uint64 {
	c := make([]uint64, len(bounds)+1)
	for _, v := range values {
		i := 0
		for i < len(bounds) && v > bounds[i] {
			i++
		}
		c[i]++
	}
	return c
}

func checkHist(t *testing.T, what string, dp pmetric.HistogramDataPoint, ok bool, bounds, values []float64) {
	t.Helper()
	if len(values) == 0 {
		if ok {
			t.Errorf("%s: a point with count %d, want none", what, dp.Count())
		}
		return
	}
	if !ok {
		t.Errorf("%s: no point, want %d observations", what, len(values))
		return
	}
	var sum float64
	for _, v := range values {
		sum += v
	}
	if dp.Count() != uint64(len(values)) || math.Abs(dp.Sum()-sum) > 1e-6 {
		t.Errorf("%s: count %d sum %.9f, want %d and %.9f", what, dp.Count(), dp.Sum(), len(values), sum)
	}
	if got, want := fmt.Sprint(dp.BucketCounts().AsRaw()), fmt.Sprint(bucketCounts(bounds, values)); got != want {
		t.Errorf("%s: buckets %s, want %s", what, got, want)
	}
}

// TestGolden feeds every reference span to the connector and checks each metric per model: counts,
// sums and bucket counts, computed from expected.json.
func TestGolden(t *testing.T) {
	set := golden.Load(t)
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, func(cfg *Config) {
		cfg.StallThreshold = time.Duration(set.StallThresholdS * float64(time.Second))
	}, sink)
	for _, cs := range set.Cases {
		if err := c.ConsumeTraces(context.Background(), cs.Traces); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(sink.AllMetrics()) != 1 {
		t.Fatalf("%d flushes, want 1 at shutdown", len(sink.AllMetrics()))
	}
	md := sink.AllMetrics()[0]
	ttft := histPoints(md, "gen_ai.client.operation.time_to_first_chunk")
	gaps := histPoints(md, "gen_ai.client.operation.time_per_output_chunk")
	dur := histPoints(md, "gen_ai.client.operation.duration")
	tok := histPoints(md, "gen_ai.client.token.usage")
	tpot := histPoints(md, "otelitl.time_per_output_token")
	gmax := histPoints(md, "otelitl.chunk.gap.max")
	stalls := map[string]int64{}
	forMetric(md, "otelitl.stalls", func(m pmetric.Metric) {
		if !m.Sum().IsMonotonic() || m.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
			t.Errorf("otelitl.stalls must be a cumulative monotonic sum")
		}
		for i := range m.Sum().DataPoints().Len() {
			dp := m.Sum().DataPoints().At(i)
			stalls[str(dp.Attributes(), "gen_ai.request.model")] = dp.IntValue()
		}
	})
	opt := func(p *float64) []float64 {
		if p == nil {
			return nil
		}
		return []float64{*p}
	}
	for _, cs := range set.Cases {
		w := cs.Expected
		m := w.Model
		t.Run(cs.Name, func(t *testing.T) {
			dp, ok := ttft[dpKey{model: m}]
			checkHist(t, "ttft", dp, ok, itlconv.DurationBuckets, opt(w.TTFTS))
			dp, ok = gaps[dpKey{model: m}]
			checkHist(t, "gaps", dp, ok, itlconv.GapBuckets, w.GapsS)
			dp, ok = tpot[dpKey{model: m}]
			checkHist(t, "tpot", dp, ok, itlconv.GapBuckets, opt(w.TPOTS))
			dp, ok = gmax[dpKey{model: m}]
			checkHist(t, "gap max", dp, ok, itlconv.GapBuckets, opt(w.MaxGapS))
			var durVals []float64
			if w.GenAI {
				durVals = []float64{w.DurationS}
			}
			k := dpKey{model: m}
			if w.ErrorType != "" {
				k.extraKey, k.extraVal = "error.type", w.ErrorType
			}
			dp, ok = dur[k]
			checkHist(t, "duration", dp, ok, itlconv.DurationBuckets, durVals)
			var outVals []float64
			if w.OutputTokens != nil {
				outVals = []float64{float64(*w.OutputTokens)}
			}
			dp, ok = tok[dpKey{m, "gen_ai.token.type", "output"}]
			checkHist(t, "output tokens", dp, ok, itlconv.TokenBuckets, outVals)
			got, ok := stalls[m]
			if w.TimelineValid && w.ChunksSeen > 0 && (!ok || got != int64(w.Stalls)) {
				t.Errorf("stalls %d (present %v), want %d", got, ok, w.Stalls)
			}
			if !(w.TimelineValid && w.ChunksSeen > 0) && ok {
				t.Errorf("a span without a valid timeline produced a stall series: a stall it cannot see is not 0")
			}
		})
	}
	// Every point carries the default dimensions it can find.
	for k, dp := range ttft {
		if str(dp.Attributes(), "service.name") != "golden-client" || str(dp.Attributes(), "gen_ai.provider.name") == "" {
			t.Errorf("%v: dimensions %v", k, dp.Attributes().AsRaw())
		}
	}
}

func genSpan(td ptrace.Traces, model string, traceByte byte, ttftMs int, gapsMs ...int) {
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "svc")
	s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetTraceID(pcommon.TraceID{traceByte})
	s.SetSpanID(pcommon.SpanID{traceByte})
	start := time.Unix(1_800_000_000, 0)
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	a := s.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.request.model", model)
	offs := a.PutEmptySlice("otelitl.chunk.offsets_us")
	off := ttftMs * 1000
	offs.AppendEmpty().SetInt(int64(off))
	for _, g := range gapsMs {
		off += g * 1000
		offs.AppendEmpty().SetInt(int64(off))
	}
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(off+1000) * time.Microsecond)))
}

func TestCardinalityLimitAndOverflow(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, func(cfg *Config) { cfg.AggregationCardinalityLimit = 3 }, sink)
	td := ptrace.NewTraces()
	for i := range 10 {
		genSpan(td, fmt.Sprintf("model-%d", i), byte(i+1), 100, 20, 30)
	}
	if err := c.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	if err := c.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	md := sink.AllMetrics()[0]
	var total uint64
	overflow := 0
	forMetric(md, "gen_ai.client.operation.time_to_first_chunk", func(m pmetric.Metric) {
		dps := m.Histogram().DataPoints()
		if dps.Len() != 4 {
			t.Errorf("%d series, want 3 and the overflow series", dps.Len())
		}
		for i := range dps.Len() {
			total += dps.At(i).Count()
			if v, ok := dps.At(i).Attributes().Get("otel.metric.overflow"); ok && v.Bool() {
				overflow++
				if dps.At(i).Count() != 7 || dps.At(i).Attributes().Len() != 1 {
					t.Errorf("overflow series: count %d attrs %v", dps.At(i).Count(), dps.At(i).Attributes().AsRaw())
				}
			}
		}
	})
	if total != 10 || overflow != 1 {
		t.Errorf("total %d overflow series %d: no span may be lost", total, overflow)
	}
}

// flaky fails its first n calls.
type flaky struct {
	consumertest.MetricsSink
	fail      atomic.Int32
	permanent bool
}

func (f *flaky) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	if f.fail.Add(-1) >= 0 {
		err := errors.New("backend unavailable")
		if f.permanent {
			return consumererror.NewPermanent(err)
		}
		return err
	}
	return f.MetricsSink.ConsumeMetrics(ctx, md)
}

func gapCount(md pmetric.Metrics) (n uint64, temporality pmetric.AggregationTemporality) {
	forMetric(md, "gen_ai.client.operation.time_per_output_chunk", func(m pmetric.Metric) {
		temporality = m.Histogram().AggregationTemporality()
		for i := range m.Histogram().DataPoints().Len() {
			n += m.Histogram().DataPoints().At(i).Count()
		}
	})
	return n, temporality
}

func TestDeltaKeepsWhatAFailedFlushCouldNotSend(t *testing.T) {
	next := &flaky{}
	next.fail.Store(1)
	c := newTestConnector(t, func(cfg *Config) { cfg.AggregationTemporality = "delta" }, next)
	td := ptrace.NewTraces()
	genSpan(td, "m", 1, 100, 10, 10, 10) // 3 gaps
	_ = c.ConsumeTraces(context.Background(), td)
	if err := c.flush(context.Background()); err == nil {
		t.Fatal("the first flush must fail")
	}
	td = ptrace.NewTraces()
	genSpan(td, "m", 2, 100, 10, 10) // 2 more gaps
	_ = c.ConsumeTraces(context.Background(), td)
	if err := c.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.flush(context.Background()); err != nil { // an empty interval sends nothing
		t.Fatal(err)
	}
	all := next.AllMetrics()
	if len(all) != 1 {
		t.Fatalf("%d flushes delivered, want 1", len(all))
	}
	if n, temp := gapCount(all[0]); n != 5 || temp != pmetric.AggregationTemporalityDelta {
		t.Errorf("delivered %d gaps (%v), want the 5 of both intervals as delta", n, temp)
	}

	// A permanent refusal is not retried forever.
	next = &flaky{permanent: true}
	next.fail.Store(1)
	c = newTestConnector(t, func(cfg *Config) { cfg.AggregationTemporality = "delta" }, next)
	_ = c.ConsumeTraces(context.Background(), td)
	_ = c.flush(context.Background())
	_ = c.ConsumeTraces(context.Background(), td)
	_ = c.flush(context.Background())
	if n, _ := gapCount(next.AllMetrics()[0]); n != 2 {
		t.Errorf("after a permanent error, delivered %d gaps, want only the next interval's 2", n)
	}
}

func TestCumulativeKeepsCounting(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, nil, sink)
	for i := range 3 {
		td := ptrace.NewTraces()
		genSpan(td, "m", byte(i+1), 100, 10, 10)
		_ = c.ConsumeTraces(context.Background(), td)
		_ = c.flush(context.Background())
	}
	var counts []uint64
	for _, md := range sink.AllMetrics() {
		n, temp := gapCount(md)
		if temp != pmetric.AggregationTemporalityCumulative {
			t.Fatal(temp)
		}
		counts = append(counts, n)
	}
	if fmt.Sprint(counts) != "[2 4 6]" {
		t.Errorf("cumulative gap counts %v, want [2 4 6]", counts)
	}
}

func TestExemplarsLinkTheWorstGap(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, func(cfg *Config) { cfg.Exemplars.MaxPerDataPoint = 2 }, sink)
	td := ptrace.NewTraces()
	genSpan(td, "m", 1, 100, 10, 20)
	genSpan(td, "m", 2, 100, 10, 900) // the slow one
	genSpan(td, "m", 3, 100, 10, 500)
	genSpan(td, "m", 4, 100, 10, 30)
	_ = c.ConsumeTraces(context.Background(), td)
	_ = c.flush(context.Background())
	dp := histPoints(sink.AllMetrics()[0], "gen_ai.client.operation.time_per_output_chunk")[dpKey{model: "m"}]
	var got []string
	for i := range dp.Exemplars().Len() {
		e := dp.Exemplars().At(i)
		got = append(got, fmt.Sprintf("%v@%.3f", e.TraceID()[0], e.DoubleValue()))
	}
	sort.Strings(got)
	if strings.Join(got, " ") != "2@0.900 3@0.500" {
		t.Errorf("exemplars %v, want the spans with the two largest gaps", got)
	}
}

func TestExponentialHistograms(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, func(cfg *Config) { cfg.Histogram.Exponential.MaxSize = 40 }, sink)
	td := ptrace.NewTraces()
	genSpan(td, "m", 1, 100, 10, 20, 30, 40)
	_ = c.ConsumeTraces(context.Background(), td)
	_ = c.flush(context.Background())
	found := false
	forMetric(sink.AllMetrics()[0], "gen_ai.client.operation.time_per_output_chunk", func(m pmetric.Metric) {
		dp := m.ExponentialHistogram().DataPoints().At(0)
		found = true
		if dp.Count() != 4 || math.Abs(dp.Sum()-0.1) > 1e-9 || dp.Min() != 0.01 || dp.Max() != 0.04 {
			t.Errorf("count %d sum %v min %v max %v", dp.Count(), dp.Sum(), dp.Min(), dp.Max())
		}
	})
	if !found {
		t.Fatal("no exponential histogram")
	}
}

func TestDimensionsInstanceIDAndTruncation(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	def := "none"
	c := newReplicaConnector(t, "replica-1", func(cfg *Config) {
		cfg.AddInstanceID = true
		cfg.DimensionValueMaxLength = 16
		cfg.Dimensions = append(cfg.Dimensions, Dimension{Name: "tenant", Default: &def})
		cfg.ExcludeDimensions = []string{"server.address"}
	}, sink)
	td := ptrace.NewTraces()
	genSpan(td, strings.Repeat("m", 100), 1, 100, 10)
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutStr("server.address", "x")
	_ = c.ConsumeTraces(context.Background(), td)
	_ = c.flush(context.Background())
	forMetric(sink.AllMetrics()[0], "gen_ai.client.operation.time_to_first_chunk", func(m pmetric.Metric) {
		a := m.Histogram().DataPoints().At(0).Attributes()
		if got := str(a, "gen_ai.request.model"); got != strings.Repeat("m", 13)+"..." {
			t.Errorf("model %q, want it truncated to 16 bytes", got)
		}
		if str(a, "collector.instance.id") != "replica-1" || str(a, "tenant") != "none" || str(a, "service.name") != "svc" {
			t.Errorf("attributes %v", a.AsRaw())
		}
		if _, ok := a.Get("server.address"); ok {
			t.Errorf("an excluded dimension is present")
		}
	})
}

func TestLifecycleAndShutdownFlush(t *testing.T) {
	f := NewFactory()
	sink := new(consumertest.MetricsSink)
	cfg := f.CreateDefaultConfig()
	c, err := f.CreateTracesToMetrics(context.Background(), connectortest.NewNopSettings(Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown before start: %v", err)
	}
	c, _ = f.CreateTracesToMetrics(context.Background(), connectortest.NewNopSettings(Type), cfg, sink)
	for range 2 { // a second Start starts no second flush loop (which panicked at Shutdown)
		if err := c.Start(context.Background(), componenttest.NewNopHost()); err != nil {
			t.Fatal(err)
		}
	}
	td := ptrace.NewTraces()
	genSpan(td, "m", 1, 100, 10)
	if err := c.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatalf("second shutdown: %v", err)
	}
	if len(sink.AllMetrics()) != 1 {
		t.Fatalf("shutdown must flush: %d flushes", len(sink.AllMetrics()))
	}
}

func TestFlushLoopRuns(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, func(cfg *Config) { cfg.MetricsFlushInterval = minFlushInterval }, sink)
	td := ptrace.NewTraces()
	genSpan(td, "m", 1, 100, 10)
	_ = c.ConsumeTraces(context.Background(), td)
	deadline := time.Now().Add(5 * time.Second)
	for len(sink.AllMetrics()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if len(sink.AllMetrics()) == 0 {
		t.Fatal("the flush loop sent nothing")
	}
}

func TestMetricsExpiration(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, func(cfg *Config) { cfg.MetricsExpiration = time.Nanosecond }, sink)
	td := ptrace.NewTraces()
	genSpan(td, "m", 1, 100, 10)
	_ = c.ConsumeTraces(context.Background(), td)
	time.Sleep(time.Millisecond)
	_ = c.flush(context.Background())
	c.mu.Lock()
	n := len(c.series)
	c.mu.Unlock()
	if n != 0 || len(sink.AllMetrics()) != 1 {
		t.Errorf("%d series left after expiration, %d flushes", n, len(sink.AllMetrics()))
	}
}

func TestErrorTypesAreBounded(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, nil, sink)
	td := ptrace.NewTraces()
	for i := range 100 {
		genSpan(td, "m", byte(i), 100, 10)
		s := td.ResourceSpans().At(i).ScopeSpans().At(0).Spans().At(0)
		s.Attributes().PutStr("error.type", fmt.Sprintf("invented-%d", i))
	}
	_ = c.ConsumeTraces(context.Background(), td)
	_ = c.flush(context.Background())
	var points int
	var total uint64
	forMetric(sink.AllMetrics()[0], "gen_ai.client.operation.duration", func(m pmetric.Metric) {
		points = m.Histogram().DataPoints().Len()
		for i := range points {
			total += m.Histogram().DataPoints().At(i).Count()
		}
	})
	if points > maxErrorTypes || total != 100 {
		t.Errorf("%d duration points for 100 error types (bound %d), %d observations (want 100)", points, maxErrorTypes, total)
	}
}

// slowSink takes its time over each flush, while spans keep arriving.
type slowSink struct{ consumertest.MetricsSink }

func (s *slowSink) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	time.Sleep(2 * time.Millisecond)
	return s.MetricsSink.ConsumeMetrics(ctx, md)
}

// TestDeltaLosesNothingToConcurrentSpans flushes while other goroutines keep consuming spans: every
// gap must be delivered exactly once across the flushes.
func TestDeltaLosesNothingToConcurrentSpans(t *testing.T) {
	next := &slowSink{}
	c := newTestConnector(t, func(cfg *Config) { cfg.AggregationTemporality = "delta" }, next)
	const writers, per = 4, 200
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range per {
					td := ptrace.NewTraces()
					genSpan(td, fmt.Sprintf("m%d", w), byte(i), 100, 10, 10) // 2 gaps
					_ = c.ConsumeTraces(context.Background(), td)
				}
			})
		}
		wg.Wait()
	}()
	for flushing := true; flushing; {
		select {
		case <-done:
			flushing = false
		default:
		}
		if err := c.flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	_ = c.flush(context.Background())
	var total uint64
	for _, md := range next.AllMetrics() {
		n, _ := gapCount(md)
		total += n
	}
	if total != writers*per*2 {
		t.Errorf("delivered %d gaps across the flushes, want %d", total, writers*per*2)
	}
}

// TestDimensionsFromTheSpanThenItsResource checks where each default dimension's value comes from:
// the span's attribute (found by the reader on its way for the keys it looks for, by a search for
// the others, as tenant), else the resource's. Two spans of one resource: the first carries every
// dimension and a service.name of its own, the second none of them but the model.
func TestDimensionsFromTheSpanThenItsResource(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, func(cfg *Config) {
		cfg.Dimensions = append(cfg.Dimensions, Dimension{Name: "tenant"}) // a key the reader does not look for
	}, sink)
	td := ptrace.NewTraces()
	genSpan(td, "m", 1, 100, 10)
	rs := td.ResourceSpans().At(0)
	rs.Resource().Attributes().PutStr("tenant", "resource-tenant")
	rs.Resource().Attributes().PutStr("server.address", "resource.example.com")
	rs.Resource().Attributes().PutStr("gen_ai.response.model", "resource-model")
	spans := rs.ScopeSpans().At(0).Spans()
	a := spans.At(0).Attributes()
	a.PutStr("service.name", "span-svc")
	a.PutStr("tenant", "span-tenant")
	a.PutStr("server.address", "span.example.com")
	a.PutStr("gen_ai.response.model", "m-2026")
	spans.At(0).CopyTo(spans.AppendEmpty())
	b := spans.At(1).Attributes()
	b.Remove("service.name")
	b.Remove("tenant")
	b.Remove("server.address")
	b.Remove("gen_ai.response.model")
	b.PutStr("gen_ai.request.model", "n")
	if err := c.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	if err := c.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{
		"m": {"service.name": "span-svc", "tenant": "span-tenant", "server.address": "span.example.com", "gen_ai.response.model": "m-2026"},
		"n": {"service.name": "svc", "tenant": "resource-tenant", "server.address": "resource.example.com", "gen_ai.response.model": "resource-model"},
	}
	seen := 0
	forMetric(sink.AllMetrics()[0], "gen_ai.client.operation.time_to_first_chunk", func(m pmetric.Metric) {
		for i := range m.Histogram().DataPoints().Len() {
			a := m.Histogram().DataPoints().At(i).Attributes()
			model := str(a, "gen_ai.request.model")
			for k, v := range want[model] {
				if got := str(a, k); got != v {
					t.Errorf("model %s: %s = %q, want %q", model, k, got, v)
				}
			}
			seen++
		}
	})
	if seen != 2 {
		t.Fatalf("%d series, want 2", seen)
	}
}

// TestBatchesKeepEachSpan checks the batches spans are read in before they are recorded: in one
// request of more model calls than a batch holds, between ordinary spans, each call's own figures
// reach its own series (call i has i+1 gaps of i+1 ms, under model m<i mod 3>), none read over by
// the next one before it was recorded.
func TestBatchesKeepEachSpan(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, nil, sink)
	td := ptrace.NewTraces()
	const calls = 2*batchSize + 3
	wantGaps := map[string][]float64{}
	for i := range calls {
		model := fmt.Sprintf("m%d", i%3)
		gaps := make([]int, i+1)
		for j := range gaps {
			gaps[j] = i + 1
			wantGaps[model] = append(wantGaps[model], float64(i+1)/1000)
		}
		genSpan(td, model, byte(i), 50, gaps...)
		ordinary := td.ResourceSpans().At(i).ScopeSpans().At(0).Spans().AppendEmpty()
		ordinary.Attributes().PutStr("http.request.method", "GET")
	}
	if err := c.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	if err := c.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	points := histPoints(sink.AllMetrics()[0], "gen_ai.client.operation.time_per_output_chunk")
	for model, gaps := range wantGaps {
		dp, ok := points[dpKey{model: model}]
		checkHist(t, model, dp, ok, itlconv.GapBuckets, gaps)
	}
	if n, _ := gapCount(sink.AllMetrics()[0]); n != calls*(calls+1)/2 {
		t.Fatalf("%d gaps, want %d", n, calls*(calls+1)/2)
	}
}

// TestBatchTrimmedInPool: a batch goes back to the pool with its decoders without the buffers a
// long timeline grew, so that reading that timeline again allocates them anew; kept out of the
// pool, a batch reads it again without allocating.
func TestBatchTrimmedInPool(t *testing.T) {
	c := newTestConnector(t, nil, new(consumertest.MetricsSink))
	td := ptrace.NewTraces()
	gaps := make([]int, 4*genaispan.KeepChunks)
	for i := range gaps {
		gaps[i] = 1
	}
	genSpan(td, "m", 1, 50, gaps...)
	rs := td.ResourceSpans().At(0)
	span := rs.ScopeSpans().At(0).Spans().At(0)
	b := c.newBatch()
	read := func() {
		if !c.read(context.Background(), b, span, rs.Resource().Attributes(), rs.ScopeSpans().At(0).Scope()) {
			t.Fatal("not read as a model call")
		}
		c.recordBatch(b, time.Now())
		b.calls = b.calls[:0] // as ConsumeTraces does after its request
	}
	read()
	if n := testing.AllocsPerRun(1, read); n != 0 {
		t.Fatalf("a second read of the same span allocated %v times: the test cannot tell a trimmed batch", n)
	}
	// Taking a batch out of the pool again keeps the pool from growing. Only the read is
	// measured: under the race detector the pool drops a quarter of what it is given, and the Get
	// then allocates a new batch, which would pass this test with untrimmed buffers.
	c.putBatch(b)
	c.batches.Get()
	if allocs.Of(read) == 0 {
		t.Errorf("a batch put back in the pool kept the buffers of a %d-gap timeline", len(gaps))
	}
}

// TestOverflowSeriesPerReplica: with add_instance_id, each replica's overflow series carries its
// instance id, as its other series do, so that two replicas past the cardinality limit never write
// the same series.
func TestOverflowSeriesPerReplica(t *testing.T) {
	overflowAttrs := func(replica string) map[string]any {
		sink := new(consumertest.MetricsSink)
		c := newReplicaConnector(t, replica, func(cfg *Config) {
			cfg.AddInstanceID = true
			cfg.AggregationCardinalityLimit = 1
		}, sink)
		td := ptrace.NewTraces()
		genSpan(td, "model-a", 1, 100, 10)
		genSpan(td, "model-b", 2, 100, 10)
		_ = c.ConsumeTraces(context.Background(), td)
		_ = c.flush(context.Background())
		var got map[string]any
		forMetric(sink.AllMetrics()[0], "gen_ai.client.operation.time_to_first_chunk", func(m pmetric.Metric) {
			for i := range m.Histogram().DataPoints().Len() {
				a := m.Histogram().DataPoints().At(i).Attributes()
				if _, ok := a.Get("otel.metric.overflow"); ok {
					got = a.AsRaw()
				}
			}
		})
		return got
	}
	for _, replica := range []string{"replica-1", "replica-2"} {
		want := map[string]any{"otel.metric.overflow": true, "collector.instance.id": replica}
		if got := overflowAttrs(replica); !reflect.DeepEqual(got, want) {
			t.Errorf("%s's overflow series: %v, want %v", replica, got, want)
		}
	}
}
