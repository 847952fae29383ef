package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelitl/itl/collector/itlprocessor"
	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/internal/loadgen"
	"github.com/otelitl/itl/internal/sdkptrace"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
)

// clientSpans are replies of chunks chunks as otelitl writes them (without figures, as an older
// client wrote them: the figures removed), with the load test's cadence
// (loadgen.Generation, bench/pipeline's load): 10-34 ms gaps and a 400 ms stall now and then.
func clientSpans(t testing.TB, enc otelitl.Encoding, replies, chunks int, figures bool) ptrace.Traces {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	limits := sdktrace.NewSpanLimits()
	limits.EventCountLimit = chunks
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithRawSpanLimits(limits))
	in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(enc))
	base := time.Unix(1_800_000_000, 0)
	for i := range replies {
		start := base.Add(time.Duration(i) * time.Second)
		loadgen.Generation(context.Background(), in, otelitl.Request{Provider: "load", Model: fmt.Sprintf("model-%d", i%8)}, int64(i), start, chunks)
	}
	td := sdkptrace.Traces(rec.Ended())
	if !figures {
		pwalk.Spans(td, func(_ pcommon.Map, span ptrace.Span) {
			for _, k := range itlconv.FigureKeys {
				span.Attributes().Remove(string(k))
			}
		})
	}
	return td
}

// TestFloorWritesWhatTheProcessorWrites holds the floor to its claim: on the spans the benchmark
// sends, it writes the same attributes as the itl processor, with values of the same types and
// the same encoded size, so that the exporter handles the same bytes, and it reads every arrival.
func TestFloorWritesWhatTheProcessorWrites(t *testing.T) {
	for _, enc := range []otelitl.Encoding{otelitl.EncodingCompact, otelitl.EncodingEvents} {
		t.Run(fmt.Sprint(enc), func(t *testing.T) {
			const replies, chunks = 40, 200
			src := clientSpans(t, enc, replies, chunks, false)

			viaITL := ptrace.NewTraces()
			src.CopyTo(viaITL)
			sink := &consumertest.TracesSink{}
			f := itlprocessor.NewFactory()
			proc, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), f.CreateDefaultConfig(), sink)
			if err != nil {
				t.Fatal(err)
			}
			if err := proc.ConsumeTraces(context.Background(), viaITL); err != nil {
				t.Fatal(err)
			}
			viaITL = sink.AllTraces()[0]

			for _, exact := range []bool{false, true} {
				t.Run(fmt.Sprint("exact=", exact), func(t *testing.T) { checkFloor(t, src, viaITL, exact, replies, chunks) })
			}
		})
	}
}

// checkFloor runs the floor (exact or not) on a copy of src and holds it against viaITL, the same
// spans through the itl processor.
func checkFloor(t *testing.T, src, viaITL ptrace.Traces, exact bool, replies, chunks int) {
	t.Helper()
	viaFloor := ptrace.NewTraces()
	src.CopyTo(viaFloor)
	p := &floorProcessor{exact: exact}
	if _, err := p.processTraces(context.Background(), viaFloor); err != nil {
		t.Fatal(err)
	}

	checkGaps(t, "floor", p, replies*(chunks-1))

	want, got := spans(viaITL), spans(viaFloor)
	if len(got) != replies || len(want) != replies {
		t.Fatalf("%d spans through the floor and %d through itl, want %d", len(got), len(want), replies)
	}
	for i := range want {
		if wk, gk := kinds(want[i]), kinds(got[i]); wk != gk {
			t.Errorf("span %d: itl leaves %s, the floor %s", i, wk, gk)
		}
		keys := []string{string(itlconv.StallsKey), string(itlconv.GapMaxKey)}
		if exact { // every figure is the processor's
			keys = append(keys, string(itlconv.GapP50Key), string(itlconv.GapP90Key), string(itlconv.GapP99Key), string(itlconv.TPOTKey))
		}
		for _, k := range keys {
			w, _ := want[i].Attributes().Get(k)
			g, _ := got[i].Attributes().Get(k)
			if !w.Equal(g) {
				t.Errorf("span %d: %s is %s through itl, %s through the floor: it did not read the same arrivals", i, k, w.AsString(), g.AsString())
			}
		}
	}
	var m ptrace.ProtoMarshaler
	if w, g := m.TracesSize(viaITL), m.TracesSize(viaFloor); w != g {
		t.Errorf("encoded size %d B through the floor, %d B through itl: the exporter would not handle the same bytes", g, w)
	}
}

func spans(td ptrace.Traces) []ptrace.Span {
	var out []ptrace.Span
	pwalk.Spans(td, func(_ pcommon.Map, s ptrace.Span) { out = append(out, s) })
	return out
}

// kinds lists a span's attribute keys and value types, in order.
func kinds(s ptrace.Span) string {
	var out string
	for k, v := range s.Attributes().All() {
		out += k + ":" + v.Type().String() + " "
	}
	return out
}

// checkGaps holds a floor processor to having counted want gaps, each in its histogram.
func checkGaps(t *testing.T, what string, p *floorProcessor, want int) {
	t.Helper()
	if p.gaps != uint64(want) {
		t.Errorf("%s observed %d gaps, want %d", what, p.gaps, want)
	}
	var seen uint64
	for _, n := range p.hist {
		seen += n
	}
	if seen != p.gaps {
		t.Errorf("%s's histogram holds %d gaps, its count %d", what, seen, p.gaps)
	}
}

// TestFloorReadOnly: floor_read, the connector's floor on spans that carry their figures, reads
// every arrival of both encodings and leaves the spans exactly as they came.
func TestFloorReadOnly(t *testing.T) {
	for _, enc := range []otelitl.Encoding{otelitl.EncodingCompact, otelitl.EncodingEvents} {
		const replies, chunks = 40, 120
		src := clientSpans(t, enc, replies, chunks, true)
		td := ptrace.NewTraces()
		src.CopyTo(td)
		p := &floorProcessor{readOnly: true}
		if _, err := p.processTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
		checkGaps(t, fmt.Sprintf("floor_read on %v", enc), p, replies*(chunks-1))
		if p.sumNs == 0 {
			t.Errorf("%v: floor_read's gaps sum to 0 ns", enc)
		}
		var m ptrace.ProtoMarshaler
		a, _ := m.MarshalTraces(src)
		b, _ := m.MarshalTraces(td)
		if string(a) != string(b) {
			t.Errorf("%v: floor_read changed the spans", enc)
		}
	}
}

func TestFloorConfig(t *testing.T) {
	for _, c := range []struct {
		cfg floorConfig
		ok  bool
	}{{floorConfig{}, true}, {floorConfig{Exact: true}, true}, {floorConfig{ReadOnly: true}, true}, {floorConfig{Exact: true, ReadOnly: true}, false}} {
		if err := c.cfg.Validate(); (err == nil) != c.ok {
			t.Errorf("%+v: %v", c.cfg, err)
		}
	}
	f := newFloorFactory()
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), &floorConfig{ReadOnly: true}, consumertest.NewNop())
	if err != nil || p.Capabilities().MutatesData {
		t.Errorf("floor_read: %v, mutates data: %v", err, err == nil && p.Capabilities().MutatesData)
	}
}
