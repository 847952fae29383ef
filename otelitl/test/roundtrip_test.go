package test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/itlprocessor"
	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/internal/sdkptrace"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/itlconv/timeline"
	"github.com/otelitl/itl/otelitl"
)

// TestOtelitlRoundTrip replays the arrivals of every complete golden case through otelitl, in each
// encoding, and checks that the span otelitl writes decodes to the figures the golden files give:
// the client's span contract and the collector's reading of it agree.
func TestOtelitlRoundTrip(t *testing.T) {
	set := golden.Load(t)
	stall := time.Duration(set.StallThresholdS * float64(time.Second))
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	d := genaispan.New(genaispan.Config{StallThreshold: stall})
	ran := 0
	for _, c := range set.Cases {
		want := c.Expected
		if !want.TimelineComplete {
			continue
		}
		src := c.Span()
		r := d.Decode(src)
		offsets := append([]int64(nil), r.Timeline.Offsets...)
		var tokens []int64
		if r.Timeline.Tokens != nil {
			tokens = append([]int64(nil), r.Timeline.Tokens...)
		}
		usage := int64(-1)
		if v, ok := src.Attributes().Get(string(semconv.GenAIUsageOutputTokensKey)); ok {
			usage = v.Int()
		}
		for _, enc := range []otelitl.Encoding{otelitl.EncodingAuto, otelitl.EncodingEvents, otelitl.EncodingCompact} {
			t.Run(fmt.Sprintf("%s/%s", c.Name, enc), func(t *testing.T) {
				ran++
				exp.Reset()
				in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(enc), otelitl.WithEventLimit(128))
				start := src.StartTimestamp().AsTime()
				_, g := in.Start(context.Background(), otelitl.Request{Provider: "openai", Model: want.Model, StartTime: start})
				for i, off := range offsets {
					tok := 1
					if tokens != nil {
						tok = int(tokens[i])
					}
					g.ChunkAt(start.Add(time.Duration(off)), tok)
				}
				if usage >= 0 {
					g.SetUsage(-1, int(usage))
				}
				g.EndAt(src.EndTimestamp().AsTime(), nil)

				td := sdkptrace.Traces(exp.GetSpans().Snapshots())
				span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
				got := d.Read(span, true)
				written := writtenFigures(t, span)
				if enc == otelitl.EncodingEvents && want.ChunksSeen > 128 {
					// The client wrote its figures from every arrival, where the SDK kept 128.
					checkGolden(t, written, want, tol)
					// Forced events past the SDK's limit: the SDK dropped the oldest, the reader
					// sees an incomplete timeline whose TTFT comes from the attribute and whose
					// remaining gaps are still true gaps.
					f := got.Figures
					if !got.Valid || got.Complete || got.Timeline.Len() != 128 || !f.HasTTFT || !near(f.TTFT, *want.TTFTS) {
						t.Fatalf("truncated events: valid %v complete %v chunks %d ttft %v", got.Valid, got.Complete, got.Timeline.Len(), f.TTFT)
					}
					skip := len(want.GapsS) - got.Timeline.GapCount()
					for i := range got.Timeline.GapCount() {
						if !near(got.Timeline.Gap(i), want.GapsS[skip+i]) {
							t.Fatalf("gap %d = %v, want %v", i, got.Timeline.Gap(i), want.GapsS[skip+i])
						}
					}
					return
				}
				if !got.Valid || !got.Complete || got.Timeline.Len() != want.ChunksSeen {
					t.Fatalf("valid %v complete %v chunks %d (reason %q)", got.Valid, got.Complete, got.Timeline.Len(), got.Reason)
				}
				// The compact encoding keeps microseconds; events keep nanoseconds.
				tolerance := tol
				if got.Source == genaispan.SourceCompact {
					tolerance = 1.001e-6
				}
				f := got.Figures
				for _, c := range []struct {
					name string
					got  float64
					want *float64
				}{{"ttft", f.TTFT, want.TTFTS}, {"tpot", f.TPOT, want.TPOTS}, {"max gap", f.MaxGap, want.MaxGapS}, {"p50", f.P50, want.GapP50S}, {"p99", f.P99, want.GapP99S}} {
					if c.want != nil && (c.got-*c.want > tolerance || *c.want-c.got > tolerance) {
						t.Errorf("%s = %.9f, want %.9f", c.name, c.got, *c.want)
					}
				}
				if f.Stalls != want.Stalls || f.OutputTokens != *want.OutputTokens {
					t.Errorf("stalls %d tokens %d, want %d and %d", f.Stalls, f.OutputTokens, want.Stalls, *want.OutputTokens)
				}
				// The figures the client wrote are the reader's, bit for bit: the processor keeps them.
				if written != sameFigures(f) {
					t.Errorf("the client wrote %+v, the reader computes %+v", written, sameFigures(f))
				}
				keptByProcessor(t, td)
				wantCompact := enc == otelitl.EncodingCompact || (enc == otelitl.EncodingAuto && want.ChunksSeen > 128)
				if (got.Source == genaispan.SourceCompact) != wantCompact {
					t.Errorf("source %v for encoding %s and %d chunks", got.Source, enc, want.ChunksSeen)
				}
				if v, _ := span.Attributes().Get(string(semconv.GenAIResponseTimeToFirstChunkKey)); v.Type() != pcommon.ValueTypeDouble || (v.Double()-*want.TTFTS > tol || *want.TTFTS-v.Double() > tol) {
					t.Errorf("gen_ai.response.time_to_first_chunk = %v, want %v", v.AsRaw(), *want.TTFTS)
				}
			})
		}
	}
	if ran < 20 {
		t.Fatalf("only %d round trips ran", ran)
	}
}

// tol is the tolerance of the reference figures: their inputs are whole nanoseconds.
const tol = 1e-9

func near(a, b float64) bool { return math.Abs(a-b) <= tol }

// TestCappedTimelineRoundTrip: the collector's reader sees a timeline cut at the chunk cap as
// valid but incomplete, in either encoding: its gaps are true gaps, its time to first chunk comes
// from the span's attribute, and it yields no token sum, while the provider's usage still counts.
func TestCappedTimelineRoundTrip(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	d := genaispan.New(genaispan.Config{StallThreshold: itlconv.DefaultStallThreshold})
	for _, enc := range []otelitl.Encoding{otelitl.EncodingEvents, otelitl.EncodingCompact} {
		for _, usage := range []int{-1, 77} {
			exp.Reset()
			in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(enc), otelitl.WithMaxChunks(20))
			start := time.Now()
			_, g := in.Start(context.Background(), otelitl.Request{Model: "m", StartTime: start})
			for i := range 60 {
				g.ChunkAt(start.Add(time.Duration(200+10*i)*time.Millisecond), 1)
			}
			g.SetUsage(-1, usage)
			g.EndAt(start.Add(time.Second), nil)
			span := sdkptrace.Traces(exp.GetSpans().Snapshots()).ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
			r := d.Read(span, true)
			f := r.Figures
			if w := writtenFigures(t, span); w != sameFigures(f) {
				t.Errorf("%s, usage %d: the client wrote %+v, the reader computes %+v", enc, usage, w, sameFigures(f))
			}
			if !r.Valid || r.Complete || r.Timeline.Len() != 20 {
				t.Fatalf("%s: valid %v complete %v chunks %d; want a valid, incomplete timeline of 20", enc, r.Valid, r.Complete, r.Timeline.Len())
			}
			if !f.HasTTFT || !near(f.TTFT, 0.2) || !f.HasGaps || !near(f.MaxGap, 0.01) {
				t.Errorf("%s: ttft %v (%v), max gap %v (%v); want 0.2 and 0.01", enc, f.TTFT, f.HasTTFT, f.MaxGap, f.HasGaps)
			}
			if f.HasOutputTokens != (usage >= 0) || (usage >= 0 && f.OutputTokens != int64(usage)) || f.HasTPOT {
				t.Errorf("%s, usage %d: output tokens %d (%v), tpot %v: want the usage only, and no TPOT", enc, usage, f.OutputTokens, f.HasOutputTokens, f.HasTPOT)
			}
		}
	}
}

// figures are the span contract's figures of a span (SPEC.md §3), as written or computed.
type figures struct {
	tpot, p50, p90, p99, max float64
	hasTPOT, hasGaps         bool
	stalls                   int64
}

// sameFigures is f as figures.
func sameFigures(f timeline.Figures) figures {
	return figures{tpot: f.TPOT, p50: f.P50, p90: f.P90, p99: f.P99, max: f.MaxGap, hasTPOT: f.HasTPOT, hasGaps: f.HasGaps, stalls: int64(f.Stalls)}
}

// writtenFigures reads the figures otelitl wrote on span, failing unless they are there with
// their types: the stalls always, the four gap figures together.
func writtenFigures(t *testing.T, span ptrace.Span) figures {
	t.Helper()
	a := span.Attributes()
	var f figures
	get := func(k attribute.Key, typ pcommon.ValueType) (pcommon.Value, bool) {
		v, ok := a.Get(string(k))
		if ok && v.Type() != typ {
			t.Fatalf("%s is a %s, want a %s", k, v.Type(), typ)
		}
		return v, ok
	}
	v, ok := get(itlconv.StallsKey, pcommon.ValueTypeInt)
	if !ok {
		t.Fatalf("no %s on the client's span", itlconv.StallsKey)
	}
	f.stalls = v.Int()
	if v, ok := get(itlconv.TPOTKey, pcommon.ValueTypeDouble); ok {
		f.tpot, f.hasTPOT = v.Double(), true
	}
	n := 0
	for _, g := range []struct {
		k attribute.Key
		p *float64
	}{{itlconv.GapP50Key, &f.p50}, {itlconv.GapP90Key, &f.p90}, {itlconv.GapP99Key, &f.p99}, {itlconv.GapMaxKey, &f.max}} {
		if v, ok := get(g.k, pcommon.ValueTypeDouble); ok {
			*g.p = v.Double()
			n++
		}
	}
	if n != 0 && n != 4 {
		t.Fatalf("%d of the 4 gap figures on the client's span", n)
	}
	f.hasGaps = n == 4
	return f
}

// checkGolden checks written figures against a golden case's expectations, within tolerance.
func checkGolden(t *testing.T, w figures, want golden.Expected, tolerance float64) {
	t.Helper()
	for _, c := range []struct {
		name string
		got  float64
		has  bool
		want *float64
	}{{"tpot", w.tpot, w.hasTPOT, want.TPOTS}, {"max gap", w.max, w.hasGaps, want.MaxGapS}, {"p50", w.p50, w.hasGaps, want.GapP50S}, {"p90", w.p90, w.hasGaps, want.GapP90S}, {"p99", w.p99, w.hasGaps, want.GapP99S}} {
		if (c.want != nil) != c.has || (c.want != nil && math.Abs(c.got-*c.want) > tolerance) {
			t.Errorf("written %s = %.9f (%v), want %v", c.name, c.got, c.has, c.want)
		}
	}
	if w.stalls != int64(want.Stalls) {
		t.Errorf("written stalls %d, want %d", w.stalls, want.Stalls)
	}
}

// keptByProcessor runs td through the itl processor at its defaults, and with
// keep_client_figures off: both pass the client's span through byte-identical, the first without
// reading its timeline, the second computing the same figures again.
func keptByProcessor(t *testing.T, td ptrace.Traces) {
	t.Helper()
	want := protoBytes(t, td)
	f := itlprocessor.NewFactory()
	for _, keep := range []bool{true, false} {
		cfg := f.CreateDefaultConfig().(*itlprocessor.Config)
		cfg.KeepClientFigures = keep
		sink := new(consumertest.TracesSink)
		p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), cfg, sink)
		if err != nil {
			t.Fatal(err)
		}
		in := ptrace.NewTraces()
		td.CopyTo(in)
		if err := p.ConsumeTraces(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		if got := protoBytes(t, sink.AllTraces()[0]); !bytes.Equal(got, want) {
			t.Errorf("keep_client_figures %v: the processor changed the client's span", keep)
		}
	}
}

func protoBytes(t *testing.T, td ptrace.Traces) []byte {
	t.Helper()
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
