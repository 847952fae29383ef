package itlmetricsconnector

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelitl/itl/collector/itlprocessor"
	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/internal/benchspans"
	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

// TestAfterTheProcessor checks what the connector counts when it reads the spans after the itl
// processor rather than as they arrive, on every golden case, every foreign instrumentation's
// fixture, every span the npm packages of other instrumentations exported, spans the client wrote,
// and event and compact replies of 200 chunks; every point is compared, each count, sum, bucket
// and exemplar:
//
//   - after the processor's defaults (it annotates), the connector counts exactly the same;
//   - after compact_events, exactly what it counts when every chunk event's offset from the span
//     start is cut to the microsecond, which is what the compact form keeps (otelitl.chunk.offsets_us):
//     a gap may move by up to a microsecond, and nothing else changes.
//
// So a layout may put the connector after the processor (one pipeline) instead of before it (a
// pipeline of its own, which costs the collector a copy of every request), with compact_events at
// the price of that microsecond; only drop_timeline needs the connector before the processor.
func TestAfterTheProcessor(t *testing.T) {
	inputs := map[string]ptrace.Traces{
		"replies/events":  benchspans.Traces(8, 200, false),
		"replies/compact": benchspans.Traces(8, 200, true),
	}
	for _, c := range golden.Load(t).Cases {
		inputs["golden/"+c.Name] = c.Traces
	}
	for _, c := range golden.LoadForeign(t) {
		inputs["foreign/"+c.Name] = c.Traces
	}
	for name, c := range golden.LoadCaptured(t) {
		inputs["captured/"+name] = c.Traces
	}
	for _, c := range golden.LoadWritten(t) {
		inputs["written/"+c.Name] = c.Traces
	}
	for _, name := range slices.Sorted(maps.Keys(inputs)) {
		td := inputs[name]
		t.Run(name, func(t *testing.T) {
			if got, want := countedBy(t, processed(t, td, false)), countedBy(t, td); got != want {
				t.Errorf("after the processor, the connector counted\n%s\nand before it\n%s", got, want)
			}
			compacted := processed(t, td, true)
			if got, want := countedBy(t, compacted), countedBy(t, microseconds(td, compacted)); got != want {
				t.Errorf("after the processor with compact_events, the connector counted\n%s\nand before it, with the chunk events cut to the microsecond,\n%s", got, want)
			}
		})
	}
	// The comparison sees what it must: the processor did compact the event replies, and the
	// connector observed their gaps from the compact form.
	compacted := processed(t, inputs["replies/events"], true)
	pwalk.Spans(compacted, func(_ pcommon.Map, span ptrace.Span) {
		if _, ok := span.Attributes().Get(string(itlconv.ChunkOffsetsKey)); !ok || span.Events().Len() != 0 {
			t.Fatalf("compact_events left a reply with %d events (%s written: %v)", span.Events().Len(), itlconv.ChunkOffsetsKey, ok)
		}
	})
	if got := countedBy(t, compacted); !strings.Contains(got, "gen_ai.client.operation.time_per_output_chunk") {
		t.Errorf("no gap observations in\n%s", got)
	}
}

// microseconds returns a copy of td whose spans the processor compacted (after: td as it passed it
// on) have their chunk events at whole microseconds from the span's start, cut as the compact form
// cuts them. A span it left as events (an incomplete timeline) stays as it is.
func microseconds(td, after ptrace.Traces) ptrace.Traces {
	var compacted []bool
	pwalk.Spans(after, func(_ pcommon.Map, span ptrace.Span) {
		_, ok := span.Attributes().Get(string(itlconv.ChunkOffsetsKey))
		compacted = append(compacted, ok)
	})
	out := ptrace.NewTraces()
	td.CopyTo(out)
	i := 0
	pwalk.Spans(out, func(_ pcommon.Map, span ptrace.Span) {
		defer func() { i++ }()
		if !compacted[i] {
			return
		}
		start := int64(span.StartTimestamp())
		evs := span.Events()
		for i := range evs.Len() {
			ev := evs.At(i)
			if off := int64(ev.Timestamp()) - start; slices.Contains(itlconv.DefaultChunkEventNames, ev.Name()) && off >= 0 {
				ev.SetTimestamp(pcommon.Timestamp(start + itlconv.Micros(off)*1000))
			}
		}
	})
	return out
}

// processed returns a copy of td as the itl processor (its defaults, or compact_events) passes it on.
func processed(t *testing.T, td ptrace.Traces, compact bool) ptrace.Traces {
	t.Helper()
	f := itlprocessor.NewFactory()
	cfg := f.CreateDefaultConfig().(*itlprocessor.Config)
	cfg.CompactEvents = compact
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(itlprocessor.Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	feed(t, p, td)
	if len(sink.AllTraces()) != 1 {
		t.Fatalf("the processor passed on %d requests", len(sink.AllTraces()))
	}
	return sink.AllTraces()[0]
}

// feed hands a started component a copy of td, then shuts it down.
func feed(t *testing.T, c interface {
	component.Component
	consumer.Traces
}, td ptrace.Traces) {
	t.Helper()
	in := ptrace.NewTraces()
	td.CopyTo(in)
	if err := c.ConsumeTraces(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// countedBy runs a copy of td through a new connector and describes every point it flushes at
// shutdown, sorted: metric, attributes and the point's values, exemplars included, without the
// timestamps.
func countedBy(t *testing.T, td ptrace.Traces) string {
	t.Helper()
	sink := new(consumertest.MetricsSink)
	feed(t, newTestConnector(t, nil, sink), td)
	var lines []string
	for _, md := range sink.AllMetrics() {
		pwalk.Metrics(md, func(m pmetric.Metric) { lines = append(lines, points(m)...) })
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// points describes a metric's points, one line each.
func points(m pmetric.Metric) []string {
	var out []string
	line := func(attrs pcommon.Map, values string, ex pmetric.ExemplarSlice) {
		var exs []string
		for i := range ex.Len() {
			e := ex.At(i)
			exs = append(exs, fmt.Sprintf("%v/%v@%s/%s", e.DoubleValue(), e.IntValue(), e.TraceID(), e.SpanID()))
		}
		out = append(out, fmt.Sprintf("%s %v %s exemplars %v", m.Name(), attrs.AsRaw(), values, exs))
	}
	switch m.Type() {
	case pmetric.MetricTypeHistogram:
		dps := m.Histogram().DataPoints()
		for i := range dps.Len() {
			dp := dps.At(i)
			line(dp.Attributes(), fmt.Sprintf("count %d sum %v min %v max %v buckets %v", dp.Count(), dp.Sum(), dp.Min(), dp.Max(), dp.BucketCounts().AsRaw()), dp.Exemplars())
		}
	case pmetric.MetricTypeExponentialHistogram:
		dps := m.ExponentialHistogram().DataPoints()
		for i := range dps.Len() {
			dp := dps.At(i)
			line(dp.Attributes(), fmt.Sprintf("count %d sum %v min %v max %v scale %d zero %d pos %d%v neg %d%v", dp.Count(), dp.Sum(), dp.Min(), dp.Max(), dp.Scale(), dp.ZeroCount(),
				dp.Positive().Offset(), dp.Positive().BucketCounts().AsRaw(), dp.Negative().Offset(), dp.Negative().BucketCounts().AsRaw()), dp.Exemplars())
		}
	case pmetric.MetricTypeSum:
		dps := m.Sum().DataPoints()
		for i := range dps.Len() {
			dp := dps.At(i)
			line(dp.Attributes(), fmt.Sprintf("int %d double %v", dp.IntValue(), dp.DoubleValue()), dp.Exemplars())
		}
	case pmetric.MetricTypeGauge:
		dps := m.Gauge().DataPoints()
		for i := range dps.Len() {
			dp := dps.At(i)
			line(dp.Attributes(), fmt.Sprintf("int %d double %v", dp.IntValue(), dp.DoubleValue()), dp.Exemplars())
		}
	default:
		out = append(out, fmt.Sprintf("%s: a %s metric", m.Name(), m.Type()))
	}
	return out
}
