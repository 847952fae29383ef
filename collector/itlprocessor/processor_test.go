package itlprocessor

import (
	"bytes"
	"context"
	"errors"
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/internal/benchspans"
	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

type harness struct {
	proc processor.Traces
	sink *consumertest.TracesSink
	tel  *componenttest.Telemetry
	logs *observer.ObservedLogs
}

func newHarness(t *testing.T, mutate func(*Config), next consumer.Traces) *harness {
	t.Helper()
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	if mutate != nil {
		mutate(cfg)
	}
	h := &harness{sink: new(consumertest.TracesSink), tel: componenttest.NewTelemetry()}
	t.Cleanup(func() { _ = h.tel.Shutdown(context.Background()) })
	set := processortest.NewNopSettings(Type)
	set.TelemetrySettings = h.tel.NewTelemetrySettings()
	core, logs := observer.New(zap.DebugLevel)
	set.Logger = zap.New(core)
	h.logs = logs
	if next == nil {
		next = h.sink
	}
	p, err := NewFactory().CreateTraces(context.Background(), set, cfg, next)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	h.proc = p
	return h
}

func (h *harness) run(t *testing.T, td ptrace.Traces) ptrace.Span {
	t.Helper()
	h.sink.Reset()
	if err := h.proc.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	out := h.sink.AllTraces()
	if len(out) != 1 || out[0].SpanCount() != td.SpanCount() {
		t.Fatalf("the processor must pass every span on: got %d batches", len(out))
	}
	return out[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
}

func protoBytes(t *testing.T, td ptrace.Traces) []byte {
	var m ptrace.ProtoMarshaler
	b, err := m.MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func double(t *testing.T, m pcommon.Map, k string) (float64, bool) {
	v, ok := m.Get(k)
	if !ok {
		return 0, false
	}
	if v.Type() != pcommon.ValueTypeDouble {
		t.Fatalf("%s is %s, want a double", k, v.Type())
	}
	return v.Double(), true
}

func checkAttr(t *testing.T, m pcommon.Map, k string, want *float64) {
	t.Helper()
	got, ok := double(t, m, k)
	switch {
	case want == nil && ok:
		t.Errorf("%s = %v, want none", k, got)
	case want != nil && !ok:
		t.Errorf("%s missing, want %v", k, *want)
	case want != nil && math.Abs(got-*want) > 1e-9:
		t.Errorf("%s = %.12f, want %.12f", k, got, *want)
	}
}

func malformedCount(t *testing.T, h *harness, reason string) int64 {
	m, err := h.tel.GetMetric("otelcol_processor_itl_spans_malformed")
	if err != nil {
		return 0
	}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		if v, _ := dp.Attributes.Value("reason"); v.AsString() == reason {
			return dp.Value
		}
	}
	return 0
}

// TestGolden runs every reference span through the processor.
func TestGolden(t *testing.T) {
	set := golden.Load(t)
	h := newHarness(t, func(c *Config) { c.StallThreshold = time.Duration(set.StallThresholdS * float64(time.Second)) }, nil)
	for _, c := range set.Cases {
		t.Run(c.Name, func(t *testing.T) {
			want := c.Expected
			in := ptrace.NewTraces()
			c.Traces.CopyTo(in)
			before := protoBytes(t, in)
			span := h.run(t, in)
			a := span.Attributes()

			// Spans with no chunk to read (an ordinary span, a generation that failed before its
			// first chunk) and spans with a malformed timeline pass through untouched.
			if !want.TimelineValid || want.ChunksSeen == 0 {
				if after := protoBytes(t, h.sink.AllTraces()[0]); !bytes.Equal(before, after) {
					t.Fatalf("a span without a valid timeline must pass through byte-identical")
				}
				return
			}
			checkAttr(t, a, string(semconv.GenAIResponseTimeToFirstChunkKey), want.TTFTS)
			checkAttr(t, a, string(itlconv.TPOTKey), want.TPOTS)
			checkAttr(t, a, string(itlconv.GapP50Key), want.GapP50S)
			checkAttr(t, a, string(itlconv.GapP90Key), want.GapP90S)
			checkAttr(t, a, string(itlconv.GapP99Key), want.GapP99S)
			checkAttr(t, a, string(itlconv.GapMaxKey), want.MaxGapS)
			if v, ok := a.Get(string(itlconv.StallsKey)); !ok || v.Int() != int64(want.Stalls) {
				t.Errorf("otelitl.stalls = %s, want %d", describe(v, ok), want.Stalls)
			}
			if v, ok := a.Get(string(itlconv.ChunkCountKey)); want.TimelineComplete && (!ok || v.Int() != int64(want.ChunksSeen)) {
				t.Errorf("otelitl.chunk.count = %s, want %d", describe(v, ok), want.ChunksSeen)
			}
		})
	}
	for _, reason := range []genaispan.Reason{genaispan.ReasonDecreasing, genaispan.ReasonLengthMismatch} {
		if got := malformedCount(t, h, string(reason)); got != 1 {
			t.Errorf("malformed spans with reason %s: %d, want 1", reason, got)
		}
	}
	if n := h.logs.FilterMessageSnippet("malformed values").Len(); n != 2 {
		t.Errorf("%d debug lines for malformed spans, want 2", n)
	}
}

func describe(v pcommon.Value, ok bool) string {
	if !ok {
		return "absent"
	}
	return v.AsString()
}

func goldenCase(t *testing.T, name string) ptrace.Traces {
	t.Helper()
	td, err := golden.ReadTraces(golden.Dir() + "/cases/" + name + ".otlp.json")
	if err != nil {
		t.Fatal(err)
	}
	return td
}

func TestCompactEvents(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.CompactEvents = true }, nil)
	src := goldenCase(t, "events-basic")
	d := genaispan.New(genaispan.Config{})
	orig := d.Decode(src.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0))
	wantGaps := make([]float64, orig.Timeline.GapCount())
	for i := range wantGaps {
		wantGaps[i] = orig.Timeline.Gap(i)
	}

	in := ptrace.NewTraces()
	src.CopyTo(in)
	span := h.run(t, in)
	if span.Events().Len() != 0 {
		t.Errorf("%d events left after compaction", span.Events().Len())
	}
	r := d.Decode(span)
	if r.Source != genaispan.SourceCompact || !r.Complete || r.Timeline.Len() != len(wantGaps)+1 {
		t.Fatalf("source %v complete %v chunks %d", r.Source, r.Complete, r.Timeline.Len())
	}
	for i, g := range wantGaps {
		if math.Abs(r.Timeline.Gap(i)-g) > 1e-6 {
			t.Fatalf("gap %d: %v after compaction, %v before", i, r.Timeline.Gap(i), g)
		}
	}
	if protoBytes(t, h.sink.AllTraces()[0]) == nil || len(protoBytes(t, h.sink.AllTraces()[0])) >= len(protoBytes(t, src)) {
		t.Errorf("compaction did not shrink the span")
	}

	// A truncated event timeline stays as events: the compact form could not say it lost chunks.
	in = ptrace.NewTraces()
	goldenCase(t, "truncated").CopyTo(in)
	span = h.run(t, in)
	if span.Events().Len() != 128 {
		t.Errorf("a truncated timeline was rewritten: %d events left", span.Events().Len())
	}
}

func TestDropTimeline(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.DropTimeline = true }, nil)
	for _, name := range []string{"events-basic", "compact-long", "openllmetry"} {
		in := ptrace.NewTraces()
		goldenCase(t, name).CopyTo(in)
		span := h.run(t, in)
		if _, ok := span.Attributes().Get(string(itlconv.ChunkOffsetsKey)); ok || span.Events().Len() != 0 {
			t.Errorf("%s: timeline left after drop_timeline", name)
		}
		if _, ok := span.Attributes().Get(string(itlconv.GapP99Key)); !ok {
			t.Errorf("%s: figures missing", name)
		}
	}
}

func TestReturnsNextConsumerError(t *testing.T) {
	boom := errors.New("backend full")
	h := newHarness(t, nil, consumertest.NewErr(boom))
	err := h.proc.ConsumeTraces(context.Background(), goldenCase(t, "events-basic"))
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want the next consumer's", err)
	}
}

func TestLifecycle(t *testing.T) {
	f := NewFactory()
	set := processortest.NewNopSettings(Type)
	p, err := f.CreateTraces(context.Background(), set, f.CreateDefaultConfig(), consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown before start: %v", err)
	}
	p, _ = f.CreateTraces(context.Background(), set, f.CreateDefaultConfig(), consumertest.NewNop())
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	if err := p.ConsumeTraces(context.Background(), goldenCase(t, "stalls")); err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !p.Capabilities().MutatesData {
		t.Error("the processor writes attributes: it must declare MutatesData")
	}
}

func TestFastPathAllocatesNothing(t *testing.T) {
	p, err := newITLProcessor(processortest.NewNopSettings(Type), NewFactory().CreateDefaultConfig().(*Config))
	if err != nil {
		t.Fatal(err)
	}
	td := goldenCase(t, "not-genai")
	span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	d := genaispan.New(genaispan.Config{})
	allocs := testing.AllocsPerRun(200, func() {
		if p.processSpan(context.Background(), d, span) != outcomeUntouched {
			t.Fatal("a non-GenAI span was touched")
		}
	})
	if allocs != 0 {
		t.Errorf("the fast path allocates %v times per span", allocs)
	}
}

// Annotating a span whose attribute slice has room for what the processor adds, as a slice the
// receiver grew by appending often has, copies none of its attributes: it allocates the values
// it writes and nothing the size of the span's attributes.
func TestAnnotateUsesRoom(t *testing.T) {
	p, err := newITLProcessor(processortest.NewNopSettings(Type), NewFactory().CreateDefaultConfig().(*Config))
	if err != nil {
		t.Fatal(err)
	}
	d := genaispan.New(genaispan.Config{})
	src := benchspans.Traces(1, 200, false).ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	// The figures the processor adds to this span: the time to first chunk and its source (the
	// span has none), TPOT, p50, p90, p99, the maximum gap and the stalls.
	const adds = 8
	allocated := func(room int) (bytes uint64, grown int) {
		span := ptrace.NewSpan()
		src.CopyTo(span)
		n := span.Attributes().Len()
		span.Attributes().EnsureCapacity(n + room)
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if p.processSpan(context.Background(), d, span) != outcomeAnnotated {
			t.Fatal("the span was not annotated")
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, span.Attributes().Len() - n
	}
	allocated(adds) // the decoder's buffers grow on their first span
	withRoom, grown := allocated(adds)
	if grown != adds {
		t.Fatalf("the processor added %d attributes; the test expects %d", grown, adds)
	}
	without, _ := allocated(0)
	t.Logf("annotating allocated %d B with room for the figures, %d B without", withRoom, without)
	// 40 B per attribute in pdata: a copy of the slice is at least (10+8)*40 B.
	if slice := uint64(src.Attributes().Len()+adds) * 40; withRoom >= slice || without < slice {
		t.Errorf("annotating allocated %d B with room for the figures and %d B without; a copy of the attributes is %d B", withRoom, without, slice)
	}
}

// TestTelemetryNamesTheInstance: two itl processors in one collector count apart, each under its
// id, as the collector's own processor metrics do; before, their counts merged into one series.
func TestTelemetryNamesTheInstance(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	run := func(name, golden string) {
		set := processortest.NewNopSettings(Type)
		set.ID = component.NewIDWithName(Type, name)
		set.TelemetrySettings = tel.NewTelemetrySettings()
		p, err := NewFactory().CreateTraces(context.Background(), set, createDefaultConfig(), consumertest.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		if err := p.ConsumeTraces(context.Background(), goldenCase(t, golden)); err != nil {
			t.Fatal(err)
		}
	}
	run("a", "events-basic")
	run("a", "events-basic")
	run("b", "malformed-decreasing")
	count := func(metric, id string) int64 {
		m, err := tel.GetMetric(metric)
		if err != nil {
			return 0
		}
		var n int64
		for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
			if v, _ := dp.Attributes.Value("processor"); v.AsString() == id {
				n += dp.Value
			}
		}
		return n
	}
	for _, c := range []struct {
		metric, id string
		want       int64
	}{
		{"otelcol_processor_itl_spans_annotated", "itl/a", 2},
		{"otelcol_processor_itl_spans_annotated", "itl/b", 0},
		{"otelcol_processor_itl_spans_malformed", "itl/a", 0},
		{"otelcol_processor_itl_spans_malformed", "itl/b", 1},
	} {
		if got := count(c.metric, c.id); got != c.want {
			t.Errorf("%s{processor=%q} = %d, want %d", c.metric, c.id, got, c.want)
		}
	}
}
