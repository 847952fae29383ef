package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelitl/itl/collector/itlmetricsconnector"
	"github.com/otelitl/itl/collector/itlprocessor"
	"github.com/otelitl/itl/collector/pwalk"
)

// BenchmarkInProcess is target (a) without a collector around it, side by side in one run: each
// request of 100 client spans (the pipeline benchmark's loads) goes, in one goroutine, through the
// stages of a pass-through collector that handle every byte (the receiver's decoding, the
// exporter's encoding and its gzip at the default level: 60 to 80% of a pass-through's CPU in
// bench-pipeline), and through the same stages with, between decoding and encoding:
//
//   - carry: the six figures itl writes on each span, computed before the run and only written
//     here, as the processor writes them: what the span contract's output costs the collector
//     (its writing, its garbage, its encoding and gzip), which no implementation can avoid;
//   - floor: the floor processor, the least any implementation of our components does;
//   - floor_exact: the floor with the exact gap percentiles, whose figures are itl's;
//   - processor: the itl processor, its defaults;
//   - full: the itl processor, then the itl_metrics connector (its defaults) on the annotated
//     spans, as the full configuration runs them.
//
// The loads compact-200 and events-100 are as an older client sends them, without the figures
// today's client writes beside the timeline: the processor computes them. figures-compact-200
// and figures-events-100 are the same spans as today's client sends them, its figures on every
// span, which the processor keeps: there only passthrough, processor and full run, and every
// side exports what it received.
//
// Every side exports what its processor made of the spans, so the annotations' encoding and gzip
// count. The sides take turns in every iteration, in an order rotated each iteration, so that all
// see the same machine. <side>-ratio is the side over pass-through; in-full-processor-ns/span and
// in-full-connector-ns/span are the two components' own time inside full, in-carry-write-ns/span
// carry's writing of the figures. A collector does more on every span than these stages (gRPC,
// HTTP/2, batching, scheduling), which our components do not add to: end to end a side's ratio is
// lower, by that work's share. The connector's metrics are not exported (64 points every 15 s in
// the harness).
//
// The times are of this goroutine, so they leave out the garbage collector's background work on
// the other CPUs (its assists they include): <side>-B/span and <side>-allocs/span, what each side
// allocates, tell how much of that work each side makes.
//
//	go test -run '^$' -bench InProcess -count 10 -benchtime 200x .
func BenchmarkInProcess(b *testing.B) {
	ctx := context.Background()
	host := componenttest.NewNopHost()
	newProcessor := func(b *testing.B, f processor.Factory, cfg any) processor.Traces {
		p, err := f.CreateTraces(ctx, processortest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Start(ctx, host); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = p.Shutdown(ctx) })
		return p
	}
	for _, load := range slices.Concat(loads, figureLoads) {
		var raws [][]byte
		for _, td := range load.requests(b) {
			raw, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
			if err != nil {
				b.Fatal(err)
			}
			raws = append(raws, raw)
		}
		b.Run("load="+load.name, func(b *testing.B) {
			cf := itlmetricsconnector.NewFactory()
			conn, err := cf.CreateTracesToMetrics(ctx, connectortest.NewNopSettings(cf.Type()), cf.CreateDefaultConfig(), consumertest.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			if err := conn.Start(ctx, host); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = conn.Shutdown(ctx) })
			itl := itlprocessor.NewFactory()
			type side struct {
				name        string
				proc        processor.Traces
				carry       [][][]figure // with carry: per request, per span, what to write
				conn        consumer.Traces
				t, tp, tc   time.Duration
				exportedTo  int
				bytes, objs float64 // allocated per span
			}
			sides := []side{{name: "passthrough"}}
			if !load.figures {
				// What computing the figures in a collector costs, and its floors.
				sides = append(sides,
					side{name: "carry", carry: itlFigures(b, raws)},
					side{name: "floor", proc: newProcessor(b, newFloorFactory(), &floorConfig{})},
					side{name: "floor_exact", proc: newProcessor(b, newFloorFactory(), &floorConfig{Exact: true})})
			}
			sides = append(sides,
				side{name: "processor", proc: newProcessor(b, itl, itl.CreateDefaultConfig())},
				side{name: "full", proc: newProcessor(b, itl, itl.CreateDefaultConfig()), conn: conn})
			var gzBuf bytes.Buffer
			zw := gzip.NewWriter(&gzBuf)
			// pass takes one request through side s, timing it.
			pass := func(s *side, r int) {
				raw := raws[r]
				t0 := time.Now()
				req := ptraceotlp.NewExportRequest()
				if err := req.UnmarshalProto(raw); err != nil {
					b.Fatal(err)
				}
				if s.carry != nil {
					t1 := time.Now()
					writeFigures(req.Traces(), s.carry[r])
					s.tp += time.Since(t1)
				}
				if s.proc != nil {
					t1 := time.Now()
					if err := s.proc.ConsumeTraces(ctx, req.Traces()); err != nil {
						b.Fatal(err)
					}
					t2 := time.Now()
					s.tp += t2.Sub(t1)
					if s.conn != nil {
						if err := s.conn.ConsumeTraces(ctx, req.Traces()); err != nil {
							b.Fatal(err)
						}
						s.tc += time.Since(t2)
					}
				}
				out, err := req.MarshalProto()
				if err != nil {
					b.Fatal(err)
				}
				gzBuf.Reset()
				zw.Reset(&gzBuf)
				_, _ = zw.Write(out)
				_ = zw.Close()
				s.t += time.Since(t0)
				s.exportedTo = len(out)
			}
			n := 0
			for b.Loop() {
				for k := range sides {
					pass(&sides[(k+n)%len(sides)], n%len(raws))
				}
				n++
			}
			// What each side allocates, one side at a time and outside the timed loop: the runtime
			// counts small allocations a block of slots at a time, so only long runs of one side
			// attribute them right.
			const allocRounds = 5
			for k := range sides {
				s := sides[k] // a copy: its times stay the loop's
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				for range allocRounds {
					for r := range raws {
						pass(&s, r)
					}
				}
				runtime.ReadMemStats(&after)
				perSpan := float64(allocRounds * len(raws) * perRequest)
				sides[k].bytes = float64(after.TotalAlloc-before.TotalAlloc) / perSpan
				sides[k].objs = float64(after.Mallocs-before.Mallocs) / perSpan
			}
			spans := float64(n * perRequest)
			through := sides[0]
			for _, s := range sides[1:] {
				// On a figures load the processor keeps the client's figures: it exports what it
				// received. Otherwise every side writes the figures.
				if load.figures && s.exportedTo != through.exportedTo {
					b.Fatalf("%s exported %d B, the pass-through %d B: it changed spans whose figures it should keep", s.name, s.exportedTo, through.exportedTo)
				}
				if !load.figures && s.exportedTo <= through.exportedTo {
					b.Fatalf("%s exported %d B, the pass-through %d B: its processor wrote no figures", s.name, s.exportedTo, through.exportedTo)
				}
			}
			named := func(name string) (side, bool) {
				i := slices.IndexFunc(sides, func(s side) bool { return s.name == name })
				if i < 0 {
					return side{}, false
				}
				return sides[i], true
			}
			carry, hasCarry := named("carry")
			if p, _ := named("processor"); hasCarry && carry.exportedTo != p.exportedTo {
				b.Fatalf("carry exported %d B, the itl processor %d B: it must write exactly the processor's figures", carry.exportedTo, p.exportedTo)
			}
			for _, s := range sides {
				b.ReportMetric(float64(s.t.Nanoseconds())/spans, s.name+"-ns/span")
				b.ReportMetric(s.bytes, s.name+"-B/span")
				b.ReportMetric(s.objs, s.name+"-allocs/span")
				if s.name != "passthrough" {
					b.ReportMetric(float64(s.t)/float64(through.t), s.name+"-ratio")
				}
			}
			if hasCarry {
				b.ReportMetric(float64(carry.tp.Nanoseconds())/spans, "in-carry-write-ns/span")
			}
			full, _ := named("full")
			b.ReportMetric(float64(full.tp.Nanoseconds())/spans, "in-full-processor-ns/span")
			b.ReportMetric(float64(full.tc.Nanoseconds())/spans, "in-full-connector-ns/span")
		})
	}
}

// figure is one attribute the itl processor writes on a span: a double, or with isInt an int.
type figure struct {
	key   string
	isInt bool
	d     float64
	i     int64
}

// itlFigures runs the itl processor (its defaults) on each request and returns, for each of its
// spans in order, the attributes the processor added, for the carry side to write.
func itlFigures(b *testing.B, raws [][]byte) [][][]figure {
	b.Helper()
	f := itlprocessor.NewFactory()
	sink := &consumertest.TracesSink{}
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), f.CreateDefaultConfig(), sink)
	if err != nil {
		b.Fatal(err)
	}
	var out [][][]figure
	for _, raw := range raws {
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(raw); err != nil {
			b.Fatal(err)
		}
		var before []int
		pwalk.Spans(req.Traces(), func(_ pcommon.Map, s ptrace.Span) { before = append(before, s.Attributes().Len()) })
		if err := p.ConsumeTraces(context.Background(), req.Traces()); err != nil {
			b.Fatal(err)
		}
		var spans [][]figure
		pwalk.Spans(req.Traces(), func(_ pcommon.Map, s ptrace.Span) {
			var added []figure
			attrs := s.Attributes()
			i := 0
			attrs.Range(func(k string, v pcommon.Value) bool {
				if i++; i <= before[len(spans)] {
					return true
				}
				switch v.Type() {
				case pcommon.ValueTypeDouble:
					added = append(added, figure{key: k, d: v.Double()})
				case pcommon.ValueTypeInt:
					added = append(added, figure{key: k, isInt: true, i: v.Int()})
				default:
					b.Fatalf("the itl processor wrote %s as a %s: carry writes doubles and ints only", k, v.Type())
				}
				return true
			})
			spans = append(spans, added)
		})
		out = append(out, spans)
	}
	return out
}

// writeFigures puts each span's figures on it, as the itl processor does: the attributes' capacity
// grown once, then a Put each.
func writeFigures(td ptrace.Traces, figs [][]figure) {
	i := 0
	pwalk.Spans(td, func(_ pcommon.Map, s ptrace.Span) {
		f := figs[i]
		i++
		if len(f) == 0 {
			return
		}
		attrs := s.Attributes()
		attrs.EnsureCapacity(attrs.Len() + len(f))
		for _, a := range f {
			if a.isInt {
				attrs.PutInt(a.key, a.i)
			} else {
				attrs.PutDouble(a.key, a.d)
			}
		}
	})
}
