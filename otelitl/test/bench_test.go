package test

import (
	"bytes"
	"compress/gzip"
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/otelitl/itl/internal/sdkptrace"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
)

func benchProvider(b *testing.B) *sdktrace.TracerProvider {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp
}

// replyChunks is the length of the replies the per-chunk benchmarks stream: a typical chat answer.
const replyChunks = 200

// replySlots is how many replies perReply opens at a time. Stopping the benchmark timer reads the
// runtime's memory statistics, which stops the world: doing it once per replySlots replies instead
// of once per reply keeps that out of the run's wall time without touching what is timed.
const replySlots = 32

// perReply runs one chunk per benchmark iteration, in replies of replyChunks chunks each opened and
// ended outside the timer, so that a figure is the cost of one chunk in a realistic reply, buffer
// growth included, and not of an ever-growing one.
func perReply(b *testing.B, r recorder) {
	b.ReportAllocs()
	open := func() {
		for k := range replySlots {
			r.begin(k)
		}
	}
	end := func() {
		for k := range replySlots {
			r.finish(k)
		}
	}
	open()
	k, i := 0, 0
	for b.Loop() {
		r.chunk(k)
		if i++; i == replyChunks {
			if i, k = 0, k+1; k == replySlots {
				b.StopTimer()
				end()
				open()
				k = 0
				b.StartTimer()
			}
		}
	}
	b.StopTimer()
	end()
}

// recorder is one way of recording chunks in replySlots replies at once: begin opens reply k, chunk
// records one chunk in it, finish ends it.
type recorder struct{ begin, chunk, finish func(k int) }

// recorderNames are the implementations the per-chunk benchmarks compare, side by side: otelitl's
// Chunk as shipped (the cycle counter where the kernel clocks with it), Chunk on the monotonic
// clock, and one span.AddEvent per chunk on the same SDK, the way other instrumentations record
// chunks.
var recorderNames = []string{"otelitl", "otelitl-monotonic", "span.AddEvent"}

func newRecorder(b *testing.B, name string) recorder {
	if name == "span.AddEvent" {
		tracer := benchProvider(b).Tracer("bench")
		spans := make([]trace.Span, replySlots)
		return recorder{
			func(k int) { _, spans[k] = tracer.Start(context.Background(), "chat gpt-4o") },
			func(k int) { spans[k].AddEvent(itlconv.ChunkEventName) },
			func(k int) { spans[k].End() }}
	}
	in := otelitl.New(otelitl.WithTracerProvider(benchProvider(b)), otelitl.WithCycleCounter(name == "otelitl"))
	gs := make([]*otelitl.Generation, replySlots)
	return recorder{
		func(k int) { _, gs[k] = in.Start(context.Background(), req) },
		func(k int) { gs[k].Chunk(1) },
		func(k int) { gs[k].End(nil) }}
}

// BenchmarkPerChunk is the hot path: one chunk, per recorder. Compare with benchstat -col /impl.
func BenchmarkPerChunk(b *testing.B) {
	for _, name := range recorderNames {
		b.Run("impl="+name, func(b *testing.B) {
			perReply(b, newRecorder(b, name))
		})
	}
}

// BenchmarkReply is a whole 200-chunk reply, start to end, per chunk: what a generation costs the
// application in all, including the work Chunk leaves to End (writing the timeline, and converting
// cycle-counter readings). The otelitl span is compact (200 chunks exceed the event limit of
// EncodingAuto); the AddEvent span keeps the SDK's last 128 events, as it would in an application.
func BenchmarkReply(b *testing.B) {
	for _, name := range recorderNames {
		b.Run("impl="+name, func(b *testing.B) {
			r := newRecorder(b, name)
			b.ReportAllocs()
			for b.Loop() {
				r.begin(0)
				for range replyChunks {
					r.chunk(0)
				}
				r.finish(0)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*replyChunks), "ns/chunk")
		})
	}
}

// BenchmarkChunkNotRecording is Chunk on an unsampled generation without metrics.
func BenchmarkChunkNotRecording(b *testing.B) {
	_, g := otelitl.New(otelitl.WithTracerProvider(noop.NewTracerProvider())).Start(context.Background(), req)
	b.ReportAllocs()
	for b.Loop() {
		g.Chunk(1)
	}
}

// BenchmarkEnd1000 is the cost of End for a 1000-chunk generation: writing the timeline to the span
// and ending it through the SDK, per encoding. Chunks are recorded outside the timer.
func BenchmarkEnd1000(b *testing.B) {
	for _, enc := range []otelitl.Encoding{otelitl.EncodingEvents, otelitl.EncodingCompact} {
		b.Run("enc="+enc.String(), func(b *testing.B) {
			tp := sdktrace.NewTracerProvider(
				sdktrace.WithSyncer(tracetest.NewNoopExporter()),
				sdktrace.WithRawSpanLimits(sdktrace.SpanLimits{EventCountLimit: 1000, AttributeCountLimit: 128, AttributeValueLengthLimit: -1, AttributePerEventCountLimit: 128, LinkCountLimit: 128, AttributePerLinkCountLimit: 128}),
			)
			in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(enc))
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				start := time.Now()
				r := req
				r.StartTime = start
				_, g := in.Start(context.Background(), r)
				for i := range 1000 {
					g.ChunkAt(start.Add(time.Duration(300+20*i)*time.Millisecond), 1)
				}
				end := start.Add(21 * time.Second)
				b.StartTimer()
				g.EndAt(end, nil)
			}
		})
	}
}

// BenchmarkWireBytes reports the OTLP protobuf size per chunk of a 1000-chunk generation span per
// encoding (B/chunk), as the OTLP exporter would send it.
func BenchmarkWireBytes(b *testing.B) {
	for _, enc := range []otelitl.Encoding{otelitl.EncodingEvents, otelitl.EncodingCompact} {
		b.Run("enc="+enc.String(), func(b *testing.B) {
			size, gz := wireBytes(b, enc, 1000)
			for b.Loop() {
				_ = size
			}
			b.ReportMetric(float64(size)/1000, "B/chunk")
			b.ReportMetric(float64(gz)/1000, "gzipB/chunk")
		})
	}
}

// wireBytes returns the protobuf size of one generation of n chunks (20 ms apart) minus that of the
// same span without chunks, both without the figures the client writes beside the timeline, so
// that the figure is the timeline's own cost; and the same difference
// after gzip, the compression OTLP exporters commonly enable.
func wireBytes(tb testing.TB, enc otelitl.Encoding, n int) (raw, gzipped int) {
	size := func(chunks int) (int, int) {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
			sdktrace.WithRawSpanLimits(sdktrace.SpanLimits{EventCountLimit: n, AttributeCountLimit: 128, AttributeValueLengthLimit: -1, AttributePerEventCountLimit: 128, LinkCountLimit: 128, AttributePerLinkCountLimit: 128}))
		in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(enc))
		start := time.Now()
		r := req
		r.StartTime = start
		_, g := in.Start(context.Background(), r)
		for i := range chunks {
			// A realistic cadence: 20 ms gaps with microsecond jitter.
			g.ChunkAt(start.Add(300*time.Millisecond+time.Duration(i)*20*time.Millisecond+time.Duration(i*7919%1000)*time.Microsecond), 1)
		}
		g.End(nil)
		td := sdkptrace.Traces(exp.GetSpans().Snapshots())
		// The figures the client writes beside the timeline (about 200 B a span, whatever its
		// length) are not the timeline's cost.
		attrs := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
		for _, k := range itlconv.FigureKeys {
			attrs.Remove(string(k))
		}
		var m ptrace.ProtoMarshaler
		buf, err := m.MarshalTraces(td)
		if err != nil {
			tb.Fatal(err)
		}
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		_, _ = zw.Write(buf)
		_ = zw.Close()
		return len(buf), z.Len()
	}
	r1, z1 := size(n)
	r0, z0 := size(0)
	return r1 - r0, z1 - z0
}

// TestCompactWireSize guards the compact encoding's size against regressions. OTLP encodes an int
// array attribute as one AnyValue message per element (3 bytes of framing plus the varint), so a
// microsecond offset costs 6-7 bytes against about 26 for an event: the raw ratio is bounded near
// 4x by the wire format itself. Sizes are deterministic, so this is no timed test.
func TestCompactWireSize(t *testing.T) {
	ev, evz := wireBytes(t, otelitl.EncodingEvents, 1000)
	co, coz := wireBytes(t, otelitl.EncodingCompact, 1000)
	t.Logf("1000 chunks: events %d B (gzip %d), compact %d B (gzip %d): %.2fx raw, %.2fx gzip", ev, evz, co, coz, float64(ev)/float64(co), float64(evz)/float64(coz))
	if co > 7*1000 || float64(ev) < 3.5*float64(co) {
		t.Errorf("compact timeline is %d B against %d B for events: above 7 B per chunk or less than 3.5x smaller", co, ev)
	}
}

// TestCompactWireBound measures, with the collector's own OTLP encoder, what one element of the
// compact offsets array and one chunk event cost on the wire. It pins down why the compact form the
// span contract defines cannot be 5x smaller than events: past 16.4 ms an offset costs at least 6
// bytes and an event at least 26, so the ratio stays under 26 / 6 = 4.3.
func TestCompactWireBound(t *testing.T) {
	var m ptrace.ProtoMarshaler
	const n = 1000
	size := func(fill func(ptrace.Span)) int {
		td := ptrace.NewTraces()
		s := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		s.SetName("chat gpt-4o")
		fill(s)
		return m.TracesSize(td)
	}
	empty := size(func(s ptrace.Span) { s.Attributes().PutEmptySlice(string(itlconv.ChunkOffsetsKey)) })
	perElement := func(us int64) float64 {
		full := size(func(s ptrace.Span) {
			sl := s.Attributes().PutEmptySlice(string(itlconv.ChunkOffsetsKey))
			for range n {
				sl.AppendEmpty().SetInt(us)
			}
		})
		return float64(full-empty) / n
	}
	base := size(func(ptrace.Span) {})
	event := float64(size(func(s ptrace.Span) {
		for i := range n {
			e := s.Events().AppendEmpty()
			e.SetName(itlconv.ChunkEventName)
			e.SetTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + uint64(i)*20_000_000))
		}
	})-base) / n
	t.Logf("one chunk event: %.2f B", event)
	if event < 26 {
		t.Errorf("a chunk event costs %.2f B on the wire, want >= 26 (fixed64 time and the name)", event)
	}
	for _, tc := range []struct {
		us   int64
		want float64
	}{
		{1 << 14, 6}, {100_000, 6}, {1<<21 - 1, 6}, {1 << 21, 7}, {20_000_000, 7}, {1<<28 - 1, 7},
	} {
		got := perElement(tc.us)
		// The enclosing messages' lengths grow by a byte or two over 1000 elements: 0.05 B of slack.
		if got < tc.want || got > tc.want+0.05 {
			t.Errorf("an offset of %d µs costs %.3f B, want %.0f (3 of framing and the varint)", tc.us, got, tc.want)
		}
		if event/got >= 5 {
			t.Errorf("events/compact = %.2f at %d µs: the 5x bound this test documents no longer holds; update BENCHMARKS.md", event/got, tc.us)
		}
	}
}
