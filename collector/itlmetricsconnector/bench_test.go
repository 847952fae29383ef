package itlmetricsconnector

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/collector/internal/buckets"
	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/internal/benchspans"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/itlconv/timeline"
)

// encodings are the two ways a timeline is written, for the benchmarks that run on both.
var encodings = []struct {
	name    string
	compact bool
}{{"events", false}, {"compact", true}}

// BenchmarkConsumeTraces measures ConsumeTraces on batches of 100 generation spans of 200 chunks,
// per encoding; ns/span and ns/gap are reported besides ns/op (one batch).
func BenchmarkConsumeTraces(b *testing.B) { benchmarkConsume(b, 200) }

// BenchmarkConsumeTracesClock is BenchmarkConsumeTraces on arrivals as a clock reads them
// (benchspans.ClockTraces): their gaps fall anywhere in the histogram's buckets, where those of
// BenchmarkConsumeTraces fall on whole milliseconds, so that a branch on a gap's bucket is
// mispredicted as often as on a real reply.
func BenchmarkConsumeTracesClock(b *testing.B) {
	const spans, chunks = 100, 200
	for _, enc := range encodings {
		b.Run("enc="+enc.name, func(b *testing.B) {
			consume(b, benchspans.ClockTraces(spans, chunks, enc.compact), spans, chunks)
		})
	}
}

// BenchmarkConsumeTracesPerSpan is BenchmarkConsumeTraces on spans of two chunks: what a span
// costs the connector besides its gaps (reading its attributes, finding its series, observing its
// per-span figures). Changes to that work, a few percent of a 200-chunk span, show here.
func BenchmarkConsumeTracesPerSpan(b *testing.B) { benchmarkConsume(b, 2) }

// BenchmarkConsumeTracesTokens is BenchmarkConsumeTraces on event spans whose every third chunk
// carries two tokens (otelitl.chunk.tokens on its event), as otelitl writes the replies of a server
// that decodes speculatively: the reader then reads a token count beside each arrival.
func BenchmarkConsumeTracesTokens(b *testing.B) {
	const spans, chunks = 100, 200
	td := benchspans.Traces(spans, chunks, false)
	pwalk.Spans(td, func(_ pcommon.Map, s ptrace.Span) {
		evs := s.Events()
		for i := 1; i < evs.Len(); i += 3 {
			evs.At(i).Attributes().PutInt(string(itlconv.ChunkTokensKey), 2)
		}
		s.Attributes().PutInt(string(semconv.GenAIUsageOutputTokensKey), int64(chunks+(chunks+1)/3))
	})
	consume(b, td, spans, chunks)
}

// benchmarkConsume runs ConsumeTraces on batches of 100 spans of chunks chunks, per encoding. It
// reports ns/gap for spans of more than two chunks.
func benchmarkConsume(b *testing.B, chunks int) {
	const spans = 100
	for _, enc := range encodings {
		b.Run("enc="+enc.name, func(b *testing.B) {
			consume(b, benchspans.Traces(spans, chunks, enc.compact), spans, chunks)
		})
	}
}

// consume runs ConsumeTraces on td, of spans spans of chunks chunks each, and reports ns/span, and
// ns/gap for spans of more than two chunks.
func consume(b *testing.B, td ptrace.Traces, spans, chunks int) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.MetricsFlushInterval = time.Hour
	c, err := newConnector(connectortestSettings(), cfg, consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = c.ConsumeTraces(context.Background(), td)
	}
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/float64(spans), "ns/span")
	if chunks > 2 {
		b.ReportMetric(perOp/float64(spans*(chunks-1)), "ns/gap")
	}
}

// BenchmarkReadFloor is the floor under BenchmarkConsumeTraces, on the same batches: it only loads
// each chunk's arrival from pdata (an event's name and timestamp, or a compact array element's
// integer) and sums them, with no validation, no gap and no histogram. Whatever reads the spans a
// pipeline hands it pays at least this per gap; the connector's ns/gap less this is what it adds.
func BenchmarkReadFloor(b *testing.B) {
	const spans, chunks = 100, 200
	for _, enc := range encodings {
		b.Run("enc="+enc.name, func(b *testing.B) {
			td := benchspans.Traces(spans, chunks, enc.compact)
			var sum int64
			b.ReportAllocs()
			for b.Loop() {
				pwalk.Spans(td, func(_ pcommon.Map, span ptrace.Span) {
					if enc.compact {
						v, ok := span.Attributes().Get(string(itlconv.ChunkOffsetsKey))
						if !ok {
							b.Fatal("no compact timeline")
						}
						offs := v.Slice()
						for i := range offs.Len() {
							sum += offs.At(i).Int()
						}
						return
					}
					evs := span.Events()
					for i := range evs.Len() {
						if ev := evs.At(i); ev.Name() == itlconv.ChunkEventName {
							sum += int64(ev.Timestamp())
						}
					}
				})
			}
			if sum == 0 {
				b.Fatal("read nothing")
			}
			perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(perOp/spans, "ns/span")
			b.ReportMetric(perOp/(spans*(chunks-1)), "ns/gap")
		})
	}
}

// BenchmarkObserveGaps is the histogram's share of BenchmarkConsumeTraces: observeGaps alone, on
// the same replies' offsets, already decoded.
func BenchmarkObserveGaps(b *testing.B) {
	const spans, chunks = 100, 200
	td := benchspans.Traces(spans, chunks, true)
	var offsets [][]int64
	var stats []timeline.GapStats
	pwalk.Spans(td, func(_ pcommon.Map, span ptrace.Span) {
		v, _ := span.Attributes().Get(string(itlconv.ChunkOffsetsKey))
		offs := make([]int64, v.Slice().Len())
		for i := range offs {
			offs[i] = itlconv.Nanos(v.Slice().At(i).Int())
		}
		offsets = append(offsets, offs)
		stats = append(stats, timeline.Timeline{Offsets: offs}.Stats(itlconv.DefaultStallThreshold))
	})
	h := newExplicit(buckets.New(itlconv.GapBuckets), 0)
	b.ReportAllocs()
	for b.Loop() {
		for i, o := range offsets {
			h.observeGaps(o, stats[i])
		}
	}
	if h.count() == 0 {
		b.Fatal("observed nothing")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(spans*(chunks-1)), "ns/gap")
}

// BenchmarkConsumeTracesDedup is BenchmarkConsumeTraces with deduplicate.max_spans off and at
// gateway.yaml's 100,000, on spans whose IDs are new at every batch (renumbered in both, so that
// the two differ by the check alone), and on the same batch again and again (resent: every span
// after the first batch is skipped as a duplicate, which costs its reading and the check).
func BenchmarkConsumeTracesDedup(b *testing.B) {
	const spans, chunks = 100, 200
	for _, enc := range encodings {
		for _, run := range []struct {
			name     string
			maxSpans int
			renumber bool
		}{{"off", 0, true}, {"on", 100_000, true}, {"resent", 100_000, false}} {
			b.Run("enc="+enc.name+"/dedup="+run.name, func(b *testing.B) {
				td := benchspans.Traces(spans, chunks, enc.compact)
				cfg := NewFactory().CreateDefaultConfig().(*Config)
				cfg.MetricsFlushInterval = time.Hour
				cfg.Deduplicate.MaxSpans = run.maxSpans
				c, err := newConnector(connectortestSettings(), cfg, consumertest.NewNop())
				if err != nil {
					b.Fatal(err)
				}
				var next uint64
				b.ReportAllocs()
				for b.Loop() {
					if run.renumber {
						pwalk.Spans(td, func(_ pcommon.Map, s ptrace.Span) {
							next++
							var sid pcommon.SpanID
							binary.LittleEndian.PutUint64(sid[:], next)
							s.SetSpanID(sid)
						})
					}
					_ = c.ConsumeTraces(context.Background(), td)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/spans, "ns/span")
			})
		}
	}
}

// BenchmarkNestedCheck: the nested-call check of one request of 100 client model calls, each with a
// parent span, by the connector's index (spanIndex) and, beside it, by a Go map of the same keys
// made once and cleared after each request, the first way it was written. Per request; divide by
// 100 for a model call.
func BenchmarkNestedCheck(b *testing.B) {
	calls := make([]callRef, 100)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range calls {
		for j := range calls[i].trace {
			calls[i].trace[j] = byte(rng.IntN(256))
		}
		for j := range calls[i].span {
			calls[i].span[j] = byte(rng.IntN(256))
			calls[i].parent[j] = byte(rng.IntN(256))
		}
	}
	calls[7].parent = calls[3].span
	calls[7].trace = calls[3].trace
	b.Run("index", func(b *testing.B) {
		var x spanIndex
		for b.Loop() {
			x.fill(calls)
			n := 0
			for _, r := range calls {
				if x.find(calls, r.trace, r.parent) >= 0 {
					n++
				}
			}
			if n != 1 {
				b.Fatalf("%d nested, want 1", n)
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		type key struct {
			trace pcommon.TraceID
			span  pcommon.SpanID
		}
		m := map[key]int{}
		for b.Loop() {
			for i, r := range calls {
				m[key{r.trace, r.span}] = i
			}
			n := 0
			for _, r := range calls {
				if _, ok := m[key{r.trace, r.parent}]; ok {
					n++
				}
			}
			clear(m)
			if n != 1 {
				b.Fatalf("%d nested, want 1", n)
			}
		}
	})
}
