package test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
)

func newTracing(t *testing.T, opts ...sdktrace.TracerProviderOption) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(append([]sdktrace.TracerProviderOption{sdktrace.WithSyncer(exp)}, opts...)...)
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, exp
}

func attrMap(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

var req = otelitl.Request{
	Operation: "chat", Provider: "openai", Model: "gpt-4o",
	ServerAddress: "api.openai.com", ServerPort: 443,
}

// replay records a generation with the given offsets (and tokens, nil meaning 1 each) through
// ChunkAt and EndAt, and returns the one span exported.
func replay(t *testing.T, in *otelitl.Instrumentation, exp *tracetest.InMemoryExporter, offsets []time.Duration, tokens []int, endAfter time.Duration, err error) tracetest.SpanStub {
	t.Helper()
	exp.Reset()
	start := time.Now()
	r := req
	r.StartTime = start
	_, g := in.Start(context.Background(), r)
	for i, off := range offsets {
		c := 1
		if tokens != nil {
			c = tokens[i]
		}
		g.ChunkAt(start.Add(off), c)
	}
	g.EndAt(start.Add(endAfter), err)
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("want 1 span, got %d", len(spans))
	}
	return spans[0]
}

func cadence(n int, ttft, gap time.Duration) []time.Duration {
	offs := make([]time.Duration, n)
	for i := range offs {
		offs[i] = ttft + time.Duration(i)*gap + time.Duration(i%7)*time.Microsecond*3
	}
	return offs
}

func TestSpanShapePerEncoding(t *testing.T) {
	tp, exp := newTracing(t)
	for _, enc := range []otelitl.Encoding{otelitl.EncodingAuto, otelitl.EncodingEvents, otelitl.EncodingCompact} {
		for _, n := range []int{5, 128, 129, 5000} {
			t.Run(fmt.Sprintf("%s/%d", enc, n), func(t *testing.T) {
				in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(enc))
				offs := cadence(n, 300*time.Millisecond, 20*time.Millisecond)
				end := offs[n-1] + 5*time.Millisecond
				s := replay(t, in, exp, offs, nil, end, nil)

				if s.Name != "chat gpt-4o" || s.SpanKind != trace.SpanKindClient {
					t.Errorf("name %q kind %v, want %q CLIENT", s.Name, s.SpanKind, "chat gpt-4o")
				}
				a := attrMap(s.Attributes)
				for k, want := range map[attribute.Key]attribute.Value{
					semconv.GenAIOperationNameKey: attribute.StringValue("chat"),
					semconv.GenAIProviderNameKey:  attribute.StringValue("openai"),
					semconv.GenAIRequestModelKey:  attribute.StringValue("gpt-4o"),
					semconv.GenAIRequestStreamKey: attribute.BoolValue(true),
					semconv.ServerAddressKey:      attribute.StringValue("api.openai.com"),
					semconv.ServerPortKey:         attribute.IntValue(443),
					itlconv.ChunkCountKey:         attribute.IntValue(n),
				} {
					if got := a[k]; got != want {
						t.Errorf("%s = %v, want %v", k, got.String(), want.String())
					}
				}
				if got := a[semconv.GenAIResponseTimeToFirstChunkKey].AsFloat64(); got != 0.3 {
					t.Errorf("time_to_first_chunk = %v, want 0.3", got)
				}
				if got := s.EndTime.Sub(s.StartTime); got != end {
					t.Errorf("duration %v, want %v", got, end)
				}
				if _, ok := a[itlconv.ChunkTokensKey]; ok {
					t.Errorf("tokens array written although every chunk is 1 token")
				}

				wantCompact := enc == otelitl.EncodingCompact || (enc == otelitl.EncodingAuto && n > itlconv.DefaultEventLimit)
				if wantCompact {
					if len(s.Events) != 0 {
						t.Errorf("compact encoding wrote %d events", len(s.Events))
					}
					got := a[itlconv.ChunkOffsetsKey].AsInt64Slice()
					if len(got) != n {
						t.Fatalf("offsets_us has %d entries, want %d", len(got), n)
					}
					for i, off := range offs {
						if got[i] != off.Microseconds() {
							t.Fatalf("offsets_us[%d] = %d, want %d", i, got[i], off.Microseconds())
						}
					}
					return
				}
				if _, ok := a[itlconv.ChunkOffsetsKey]; ok {
					t.Errorf("event encoding also wrote offsets_us")
				}
				// Past the SDK's limit of 128 events the SDK drops the oldest: that is what forced
				// events mean, and why Auto switches to compact.
				wantEvents := min(n, 128)
				if len(s.Events) != wantEvents || s.DroppedEvents != n-wantEvents {
					t.Fatalf("%d events, %d dropped; want %d and %d", len(s.Events), s.DroppedEvents, wantEvents, n-wantEvents)
				}
				first := n - wantEvents
				for i, ev := range s.Events {
					if ev.Name != itlconv.ChunkEventName || len(ev.Attributes) != 0 {
						t.Fatalf("event %d: %q %v", i, ev.Name, ev.Attributes)
					}
					if got := ev.Time.Sub(s.StartTime); got != offs[first+i] {
						t.Fatalf("event %d at %v, want %v", i, got, offs[first+i])
					}
				}
			})
		}
	}
}

// TestLiveChunksPerEncoding records through Chunk, the live path (the cycle counter where the kernel
// clocks with it), at each size TestSpanShapePerEncoding replays: the timeline has every chunk, in
// order, inside the span, with its token counts, in the encoding the size calls for.
func TestLiveChunksPerEncoding(t *testing.T) {
	tp, exp := newTracing(t)
	for _, enc := range []otelitl.Encoding{otelitl.EncodingAuto, otelitl.EncodingEvents, otelitl.EncodingCompact} {
		for _, n := range []int{5, 128, 129, 5000} {
			t.Run(fmt.Sprintf("%s/%d", enc, n), func(t *testing.T) {
				exp.Reset()
				in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(enc))
				_, g := in.Start(context.Background(), req)
				for i := range n {
					if i == n/2 {
						time.Sleep(time.Millisecond) // one gap the timeline must show
					}
					g.Chunk(1 + i%2)
				}
				g.End(nil)
				s := exp.GetSpans()[0]
				a := attrMap(s.Attributes)
				if got := a[itlconv.ChunkCountKey].AsInt64(); got != int64(n) {
					t.Fatalf("chunk.count = %d, want %d", got, n)
				}
				span := s.EndTime.Sub(s.StartTime)
				var offs []time.Duration
				var toks []int64
				if enc == otelitl.EncodingCompact || (enc == otelitl.EncodingAuto && n > itlconv.DefaultEventLimit) {
					for _, us := range a[itlconv.ChunkOffsetsKey].AsInt64Slice() {
						offs = append(offs, time.Duration(us)*time.Microsecond)
					}
					toks = a[itlconv.ChunkTokensKey].AsInt64Slice()
				} else {
					for _, ev := range s.Events {
						offs = append(offs, ev.Time.Sub(s.StartTime))
						c := int64(1)
						if v, ok := attrMap(ev.Attributes)[itlconv.ChunkTokensKey]; ok {
							c = v.AsInt64()
						}
						toks = append(toks, c)
					}
				}
				first := n - len(offs) // events past the SDK's limit drop the oldest
				if len(offs) != min(n, 128) && len(offs) != n || len(toks) != len(offs) {
					t.Fatalf("%d arrivals and %d token counts for %d chunks", len(offs), len(toks), n)
				}
				maxGap := time.Duration(0)
				for i, off := range offs {
					if off < 0 || off > span || (i > 0 && off < offs[i-1]) {
						t.Fatalf("arrival %d at %v: outside the span (%v) or before the previous one", i, off, span)
					}
					if i > 0 {
						maxGap = max(maxGap, off-offs[i-1])
					}
					if want := int64(1 + (first+i)%2); toks[i] != want {
						t.Fatalf("chunk %d carries %d tokens, want %d", first+i, toks[i], want)
					}
				}
				if first == 0 && maxGap < time.Millisecond {
					t.Errorf("largest gap %v, want the 1 ms sleep to show", maxGap)
				}
			})
		}
	}
}

func TestMultiTokenChunks(t *testing.T) {
	tp, exp := newTracing(t)
	offs := cadence(6, 100*time.Millisecond, 40*time.Millisecond)
	tokens := []int{1, 3, 1, 4, 0, 2} // 0 is recorded as 1
	want := []int64{1, 3, 1, 4, 1, 2}

	s := replay(t, otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(otelitl.EncodingEvents)), exp, offs, tokens, time.Second, nil)
	for i, ev := range s.Events {
		a := attrMap(ev.Attributes)
		v, ok := a[itlconv.ChunkTokensKey]
		if want[i] == 1 && ok {
			t.Errorf("event %d carries tokens although it has 1", i)
		}
		if want[i] != 1 && v.AsInt64() != want[i] {
			t.Errorf("event %d tokens %v, want %d", i, v.String(), want[i])
		}
	}

	s = replay(t, otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(otelitl.EncodingCompact)), exp, offs, tokens, time.Second, nil)
	got := attrMap(s.Attributes)[itlconv.ChunkTokensKey].AsInt64Slice()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tokens array %v, want %v", got, want)
	}
}

func TestOutOfOrderArrivalsAndEarlyEnd(t *testing.T) {
	tp, exp := newTracing(t)
	offs := []time.Duration{300 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond}
	s := replay(t, otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(otelitl.EncodingCompact)), exp, offs, []int{3, 1, 2}, 50*time.Millisecond, nil)
	a := attrMap(s.Attributes)
	if got := fmt.Sprint(a[itlconv.ChunkOffsetsKey].AsInt64Slice()); got != "[100000 200000 300000]" {
		t.Errorf("offsets %s, want sorted", got)
	}
	if got := fmt.Sprint(a[itlconv.ChunkTokensKey].AsInt64Slice()); got != "[1 2 3]" {
		t.Errorf("tokens %s did not move with their offsets", got)
	}
	if d := s.EndTime.Sub(s.StartTime); d != 300*time.Millisecond {
		t.Errorf("an end before the last arrival must move to it; duration %v", d)
	}
	if ttft := a[semconv.GenAIResponseTimeToFirstChunkKey].AsFloat64(); ttft != 0.1 {
		t.Errorf("ttft %v, want 0.1", ttft)
	}
}

type rateLimited struct{}

func (rateLimited) Error() string     { return "429 too many requests" }
func (rateLimited) ErrorType() string { return "rate_limited" }

func TestErrors(t *testing.T) {
	tp, exp := newTracing(t)
	in := otelitl.New(otelitl.WithTracerProvider(tp))
	offs := cadence(3, 100*time.Millisecond, 10*time.Millisecond)

	s := replay(t, in, exp, offs, nil, time.Second, fmt.Errorf("stream: %w", rateLimited{}))
	a := attrMap(s.Attributes)
	if got := a[semconv.ErrorTypeKey].AsString(); got != "rate_limited" {
		t.Errorf("error.type %q, want rate_limited", got)
	}
	if s.Status.Code != codes.Error || s.Status.Description == "" {
		t.Errorf("status %+v, want an error status with a description", s.Status)
	}
	if a[itlconv.ChunkCountKey].AsInt64() != 3 || len(s.Events) != 3 {
		t.Errorf("the chunks before the failure must still be recorded")
	}

	s = replay(t, in, exp, nil, nil, 5*time.Millisecond, context.DeadlineExceeded)
	a = attrMap(s.Attributes)
	if a[itlconv.ChunkCountKey].AsInt64() != 0 {
		t.Errorf("chunk.count must be 0, got %v", a[itlconv.ChunkCountKey].String())
	}
	if _, ok := a[semconv.GenAIResponseTimeToFirstChunkKey]; ok {
		t.Errorf("no chunk, no time to first chunk")
	}
	if a[semconv.ErrorTypeKey].AsString() == "" {
		t.Errorf("error.type missing")
	}

	s = replay(t, in, exp, offs, nil, time.Second, nil)
	if _, ok := attrMap(s.Attributes)[semconv.ErrorTypeKey]; ok || s.Status.Code == codes.Error {
		t.Errorf("a success must carry neither error.type nor an error status")
	}
}

func TestResponseAttributes(t *testing.T) {
	tp, exp := newTracing(t)
	in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithAttributes(attribute.String("tenant", "a")))
	r := req
	r.Attributes = []attribute.KeyValue{attribute.String("route", "b")}
	_, g := in.Start(context.Background(), r)
	g.Chunk(1)
	g.SetUsage(12, -1)
	g.SetUsage(-1, 34)
	g.SetResponseModel("gpt-4o-2024-08-06")
	g.SetResponseID("chatcmpl-1")
	g.AddFinishReason("stop")
	g.AddFinishReason("length")
	g.End(nil)
	g.SetResponseModel("after end") // ignored
	a := attrMap(exp.GetSpans()[0].Attributes)
	for k, want := range map[attribute.Key]string{
		semconv.GenAIResponseModelKey:         "gpt-4o-2024-08-06",
		semconv.GenAIResponseIDKey:            "chatcmpl-1",
		semconv.GenAIUsageInputTokensKey:      "12",
		semconv.GenAIUsageOutputTokensKey:     "34",
		semconv.GenAIResponseFinishReasonsKey: `["stop","length"]`,
		"tenant":                              "a",
		"route":                               "b",
	} {
		if got := a[k].String(); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

func TestEndIsIdempotentAndChunkAfterEndIgnored(t *testing.T) {
	tp, exp := newTracing(t)
	_, g := otelitl.New(otelitl.WithTracerProvider(tp)).Start(context.Background(), req)
	g.Chunk(1)
	g.End(nil)
	g.Chunk(1)
	g.End(errors.New("late"))
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans exported, want 1", len(spans))
	}
	a := attrMap(spans[0].Attributes)
	if a[itlconv.ChunkCountKey].AsInt64() != 1 || len(spans[0].Events) != 1 {
		t.Errorf("a chunk after End was recorded")
	}
	if _, ok := a[semconv.ErrorTypeKey]; ok {
		t.Errorf("a second End changed the span")
	}
}

// TestCancellationRacesChunk ends generations from another goroutine while chunks stream in, as a
// context cancellation does. Run under -race; the span must stay self-consistent.
func TestCancellationRacesChunk(t *testing.T) {
	for _, cc := range []bool{true, false} {
		t.Run(fmt.Sprintf("cycleCounter=%v", cc), func(t *testing.T) { testCancellationRacesChunk(t, cc) })
	}
}

func testCancellationRacesChunk(t *testing.T, cycleCounter bool) {
	tp, exp := newTracing(t)
	in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(otelitl.EncodingCompact), otelitl.WithCycleCounter(cycleCounter))
	const runs = 50
	for range runs {
		_, g := in.Start(context.Background(), req)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := range 3 {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					g.Chunk(1 + (i+w)%3)
					g.SetUsage(i, -1)
				}
			})
		}
		time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
		g.End(context.Canceled)
		close(stop)
		wg.Wait()
	}
	spans := exp.GetSpans()
	if len(spans) != runs {
		t.Fatalf("%d spans, want %d", len(spans), runs)
	}
	for _, s := range spans {
		a := attrMap(s.Attributes)
		// On a slow machine the writers may pass the chunk cap: the count then includes the
		// dropped chunks.
		n := int(a[itlconv.ChunkCountKey].AsInt64() - a[itlconv.ChunkDroppedKey].AsInt64())
		offs := a[itlconv.ChunkOffsetsKey].AsInt64Slice()
		if len(offs) != n || n > itlconv.DefaultMaxChunks {
			t.Fatalf("chunk.count %v, chunk.dropped %v, but %d offsets", a[itlconv.ChunkCountKey].String(), a[itlconv.ChunkDroppedKey].String(), len(offs))
		}
		if tok := a[itlconv.ChunkTokensKey].AsInt64Slice(); tok != nil && len(tok) != n {
			t.Fatalf("chunk.count %d but %d token counts", n, len(tok))
		}
		for i := 1; i < len(offs); i++ {
			if offs[i] < offs[i-1] {
				t.Fatalf("offsets decrease at %d", i)
			}
		}
		if last := time.Duration(0); n > 0 {
			last = time.Duration(offs[n-1]) * time.Microsecond
			if s.EndTime.Sub(s.StartTime) < last {
				t.Fatalf("span ends before its last chunk")
			}
		}
	}
}

// TestChunkTimesOnTheMonotonicClock checks where Chunk puts arrivals, with either clock: each
// offset must lie between monotonic readings taken just before and just after the Chunk call.
func TestChunkTimesOnTheMonotonicClock(t *testing.T) {
	for _, cc := range []bool{true, false} {
		t.Run(fmt.Sprintf("cycleCounter=%v", cc), func(t *testing.T) {
			tp, exp := newTracing(t)
			in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(otelitl.EncodingCompact), otelitl.WithCycleCounter(cc))
			start := time.Now()
			r := req
			r.StartTime = start
			_, g := in.Start(context.Background(), r)
			const n = 30
			var before, after [n]time.Duration
			for i := range n {
				time.Sleep(time.Duration(i%4) * time.Millisecond)
				before[i] = time.Since(start)
				g.Chunk(1)
				after[i] = time.Since(start)
			}
			g.End(nil)
			s := exp.GetSpans()[0]
			offs := attrMap(s.Attributes)[itlconv.ChunkOffsetsKey].AsInt64Slice()
			if len(offs) != n {
				t.Fatalf("%d offsets, want %d", len(offs), n)
			}
			for i, us := range offs {
				// Offsets are whole microseconds, truncated; 5 µs covers that and the counter's
				// interpolation (nanoseconds here).
				got := time.Duration(us) * time.Microsecond
				if got < before[i]-5*time.Microsecond || got > after[i]+5*time.Microsecond {
					t.Errorf("chunk %d at %v, but the monotonic clock read %v before and %v after Chunk", i, got, before[i], after[i])
				}
			}
			if end := s.EndTime.Sub(s.StartTime); end < after[n-1] {
				t.Errorf("span lasts %v, less than its last chunk's %v", end, after[n-1])
			}
		})
	}
}

// TestChunkAndChunkAtMix records live chunks and replayed ones in one generation: whichever clock
// Chunk reads, the timeline comes out in arrival order on one scale.
func TestChunkAndChunkAtMix(t *testing.T) {
	tp, exp := newTracing(t)
	in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(otelitl.EncodingCompact))
	start := time.Now().Add(-time.Second)
	r := req
	r.StartTime = start
	_, g := in.Start(context.Background(), r)
	g.Chunk(1)                                    // ~1 s after start
	g.ChunkAt(start.Add(100*time.Millisecond), 2) // replayed, earlier
	time.Sleep(2 * time.Millisecond)
	g.Chunk(1) // ~1.002 s
	g.End(nil)
	a := attrMap(exp.GetSpans()[0].Attributes)
	offs, toks := a[itlconv.ChunkOffsetsKey].AsInt64Slice(), a[itlconv.ChunkTokensKey].AsInt64Slice()
	if len(offs) != 3 || len(toks) != 3 {
		t.Fatalf("offsets %v tokens %v, want 3 of each", offs, toks)
	}
	if offs[0] != 100_000 || toks[0] != 2 {
		t.Errorf("first arrival (%d µs, %d tokens), want the replayed one (100000 µs, 2 tokens)", offs[0], toks[0])
	}
	if offs[1] < 1_000_000 || offs[1] > 1_500_000 || offs[2]-offs[1] < 2000 || toks[1] != 1 || toks[2] != 1 {
		t.Errorf("live arrivals %v µs (tokens %v), want ~1 s after start and >= 2 ms apart", offs[1:], toks[1:])
	}
}

func TestNotRecording(t *testing.T) {
	in := otelitl.New(otelitl.WithTracerProvider(noop.NewTracerProvider()))
	ctx, g := in.Start(context.Background(), req)
	if g.IsRecording() || ctx == nil {
		t.Fatalf("a no-op provider must give an inert generation")
	}
	allocs := testing.AllocsPerRun(100, func() {
		g.Chunk(1)
		g.ChunkAt(time.Now(), 2)
		g.SetUsage(1, 2)
		g.SetResponseModel("m")
		g.AddFinishReason("stop")
		g.End(nil)
	})
	if allocs != 0 {
		t.Errorf("an inert generation allocated %v times per run", allocs)
	}
	var nilGen *otelitl.Generation
	nilGen.Chunk(1)
	nilGen.End(nil)

	tp, exp := newTracing(t, sdktrace.WithSampler(sdktrace.NeverSample()))
	_, g = otelitl.New(otelitl.WithTracerProvider(tp)).Start(context.Background(), req)
	if g.IsRecording() {
		t.Errorf("an unsampled span without metrics must give an inert generation")
	}
	g.End(nil)
	if len(exp.GetSpans()) != 0 {
		t.Errorf("an unsampled span was exported")
	}
}

func TestChunkAmortizedAllocations(t *testing.T) {
	tp, _ := newTracing(t)
	_, g := otelitl.New(otelitl.WithTracerProvider(tp)).Start(context.Background(), req)
	defer g.End(nil)
	for range 10000 { // grow the buffer past the sizes a reply reaches
		g.Chunk(1)
	}
	if a := testing.AllocsPerRun(1000, func() { g.Chunk(1) }); a > 0.01 {
		t.Errorf("Chunk allocates %v per call amortized, want 0", a)
	}
}

func histogram(t *testing.T, rm metricdata.ResourceMetrics, name string) metricdata.Metrics {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m
			}
		}
	}
	t.Fatalf("metric %s not recorded", name)
	return metricdata.Metrics{}
}

func TestClientMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	// Metrics do not depend on sampling: the span is dropped, the metrics stay.
	tp, exp := newTracing(t, sdktrace.WithSampler(sdktrace.NeverSample()))
	in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithMeterProvider(mp))

	start := time.Now()
	r := req
	r.StartTime = start
	_, g := in.Start(context.Background(), r)
	offs := []time.Duration{250 * time.Millisecond, 270 * time.Millisecond, 300 * time.Millisecond, 340 * time.Millisecond}
	for i, o := range offs {
		g.ChunkAt(start.Add(o), 1+i%2)
	}
	g.SetUsage(100, -1)
	g.SetResponseModel("gpt-4o-2024")
	g.EndAt(start.Add(400*time.Millisecond), rateLimited{})
	if len(exp.GetSpans()) != 0 {
		t.Fatalf("unsampled span exported")
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	check := func(name string, count uint64, sum float64) metricdata.HistogramDataPoint[float64] {
		t.Helper()
		h := histogram(t, rm, name).Data.(metricdata.Histogram[float64])
		if len(h.DataPoints) != 1 {
			t.Fatalf("%s: %d points", name, len(h.DataPoints))
		}
		dp := h.DataPoints[0]
		if dp.Count != count || abs(dp.Sum-sum) > 1e-9 {
			t.Errorf("%s: count %d sum %v, want %d and %v", name, dp.Count, dp.Sum, count, sum)
		}
		for k, v := range map[attribute.Key]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o-2024", "server.address": "api.openai.com"} {
			if got, _ := dp.Attributes.Value(k); got.String() != v {
				t.Errorf("%s: %s = %q, want %q", name, k, got.String(), v)
			}
		}
		return dp
	}
	check("gen_ai.client.operation.time_to_first_chunk", 1, 0.25)
	check("gen_ai.client.operation.time_per_output_chunk", 3, 0.02+0.03+0.04)
	dp := check("gen_ai.client.operation.duration", 1, 0.4)
	if v, _ := dp.Attributes.Value(semconv.ErrorTypeKey); v.AsString() != "rate_limited" {
		t.Errorf("duration lacks error.type: %v", dp.Attributes)
	}

	tok := histogram(t, rm, "gen_ai.client.token.usage").Data.(metricdata.Histogram[int64])
	got := map[string]int64{}
	for _, dp := range tok.DataPoints {
		v, _ := dp.Attributes.Value("gen_ai.token.type")
		got[v.AsString()] = dp.Sum
	}
	if got["input"] != 100 || got["output"] != 6 { // output: no usage, so the chunks' sum 1+2+1+2
		t.Errorf("token usage %v, want input 100 and output 6", got)
	}
}

// TestClientMetricsWithoutProvider: a generation whose provider the application did not name records
// its metrics without gen_ai.provider.name, as its span does, not with "" (which splits a series
// and shows as an empty label); failures and tokens alike.
func TestClientMetricsWithoutProvider(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tp, _ := newTracing(t)
	in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithMeterProvider(mp))
	for _, fail := range []error{nil, rateLimited{}} {
		_, g := in.Start(context.Background(), otelitl.Request{Operation: "chat", Model: "manual"})
		g.Chunk(1)
		g.Chunk(1)
		g.SetUsage(3, 2)
		g.End(fail)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	points := 0
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			var sets []attribute.Set
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					sets = append(sets, dp.Attributes)
				}
			case metricdata.Histogram[int64]:
				for _, dp := range d.DataPoints {
					sets = append(sets, dp.Attributes)
				}
			}
			for _, set := range sets {
				points++
				if v, ok := set.Value("gen_ai.provider.name"); ok {
					t.Errorf("%s: gen_ai.provider.name = %q, want none", m.Name, v.AsString())
				}
				if v, _ := set.Value("gen_ai.request.model"); v.AsString() != "manual" {
					t.Errorf("%s: gen_ai.request.model = %q", m.Name, v.AsString())
				}
			}
		}
	}
	if points < 6 {
		t.Errorf("%d points checked, want the TTFT, gaps, two durations and two token types", points)
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

func TestErrorTypeNames(t *testing.T) {
	for err, want := range map[error]string{
		context.Canceled:                         "cancelled",
		fmt.Errorf("read: %w", context.Canceled): "cancelled",
		context.DeadlineExceeded:                 "timeout",
		fmt.Errorf("x: %w", rateLimited{}):       "rate_limited",
		&customErr{}:                             "*test.customErr",
	} {
		if got := otelitl.ErrorType(err).Value.AsString(); got != want {
			t.Errorf("ErrorType(%v) = %q, want %q", err, got, want)
		}
	}
}

type customErr struct{}

func (*customErr) Error() string { return "custom" }

func TestSetServer(t *testing.T) {
	tp, exp := newTracing(t)
	_, g := otelitl.New(otelitl.WithTracerProvider(tp)).Start(context.Background(), otelitl.Request{Model: "m"})
	g.SetServer("127.0.0.1", 8080)
	g.End(nil)
	a := attrMap(exp.GetSpans()[0].Attributes)
	if a[semconv.ServerAddressKey].AsString() != "127.0.0.1" || a[semconv.ServerPortKey].AsInt64() != 8080 {
		t.Errorf("server %v:%v", a[semconv.ServerAddressKey], a[semconv.ServerPortKey])
	}
	if exp.GetSpans()[0].Name != "chat m" {
		t.Errorf("an empty operation defaults to chat: %q", exp.GetSpans()[0].Name)
	}
}

// TestSetRequestModel: a model known only after Start (httpitl reads it from the part of a body
// sent after the span started) names the span and reaches its attributes and its metrics as if
// Start had it; a model Start had, or an earlier one, stays; after End nothing changes.
func TestSetRequestModel(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tp, exp := newTracing(t)
	in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithMeterProvider(mp))
	for _, tc := range []struct {
		start    string
		set      []string
		wantName string
		want     string
	}{
		{"", []string{"late"}, "text_completion late", "late"},
		{"", []string{"first", "second"}, "text_completion first", "first"},
		{"", []string{""}, "text_completion", ""},
		{"", []string{strings.Repeat("é", 200)}, "text_completion " + strings.Repeat("é", 128), strings.Repeat("é", 128)},
		{"early", []string{"late"}, "text_completion early", "early"},
	} {
		exp.Reset()
		_, g := in.Start(context.Background(), otelitl.Request{Operation: "text_completion", Provider: "openai", Model: tc.start})
		for _, m := range tc.set {
			g.SetRequestModel(m)
		}
		g.Chunk(1)
		g.End(nil)
		g.SetRequestModel("after the end")
		span := exp.GetSpans()[0]
		if span.Name != tc.wantName {
			t.Errorf("%q then %q: span name %q, want %q", tc.start, tc.set, span.Name, tc.wantName)
		}
		got, ok := attrMap(span.Attributes)[semconv.GenAIRequestModelKey]
		if got.AsString() != tc.want || ok != (tc.want != "") {
			t.Errorf("%q then %q: gen_ai.request.model %q (present %v), want %q", tc.start, tc.set, got.AsString(), ok, tc.want)
		}
		var n int
		for _, a := range span.Attributes {
			if a.Key == semconv.GenAIRequestModelKey {
				n++
			}
		}
		if n > 1 {
			t.Errorf("%q then %q: gen_ai.request.model written %d times", tc.start, tc.set, n)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	models := map[string]bool{}
	for _, dp := range histogram(t, rm, "gen_ai.client.operation.duration").Data.(metricdata.Histogram[float64]).DataPoints {
		v, _ := dp.Attributes.Value(semconv.GenAIRequestModelKey)
		models[v.AsString()] = true
	}
	for _, m := range []string{"late", "first", "", strings.Repeat("é", 128), "early"} {
		if !models[m] {
			t.Errorf("no duration point with gen_ai.request.model %q: %v", m, models)
		}
	}
	if len(models) != 5 {
		t.Errorf("duration points' models %v, want 5", models)
	}
}

// TestSetProvider: a provider known once the request is made (a wrapper reads it off the URL)
// replaces Start's on the span, once, and in the metrics; the last non-empty value wins, an empty
// one and one after the end change nothing, a long one is cut.
func TestSetProvider(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tp, exp := newTracing(t)
	in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithMeterProvider(mp))
	for _, tc := range []struct {
		start string
		set   []string
		want  string
	}{
		{"openai", []string{"azure.ai.openai"}, "azure.ai.openai"},
		{"openai", []string{"azure.ai.openai", "groq"}, "groq"},
		{"openai", []string{"groq", ""}, "groq"},
		{"openai", nil, "openai"},
		{"", []string{"deepseek"}, "deepseek"},
		{"openai", []string{strings.Repeat("é", 200)}, strings.Repeat("é", 128)},
	} {
		exp.Reset()
		_, g := in.Start(context.Background(), otelitl.Request{Provider: tc.start, Model: "m"})
		for _, p := range tc.set {
			g.SetProvider(p)
		}
		g.Chunk(1)
		g.End(nil)
		g.SetProvider("after the end")
		span := exp.GetSpans()[0]
		if got := attrMap(span.Attributes)[semconv.GenAIProviderNameKey]; got.AsString() != tc.want {
			t.Errorf("%q then %q: gen_ai.provider.name %q, want %q", tc.start, tc.set, got.AsString(), tc.want)
		}
		var n int
		for _, a := range span.Attributes {
			if a.Key == semconv.GenAIProviderNameKey {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%q then %q: gen_ai.provider.name written %d times", tc.start, tc.set, n)
		}
		if span.Name != "chat m" {
			t.Errorf("%q then %q: span name %q", tc.start, tc.set, span.Name)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	providers := map[string]int{}
	for _, dp := range histogram(t, rm, "gen_ai.client.operation.duration").Data.(metricdata.Histogram[float64]).DataPoints {
		v, _ := dp.Attributes.Value(semconv.GenAIProviderNameKey)
		providers[v.AsString()] += int(dp.Count)
	}
	want := map[string]int{"azure.ai.openai": 1, "groq": 2, "openai": 1, "deepseek": 1, strings.Repeat("é", 128): 1}
	if !maps.Equal(providers, want) {
		t.Errorf("duration points by provider %v, want %v", providers, want)
	}
}

// TestSpanKind: a generation is a CLIENT span unless the request says SERVER; every other kind is
// taken as CLIENT, since a generation is one or the other.
func TestSpanKind(t *testing.T) {
	tp, exp := newTracing(t)
	in := otelitl.New(otelitl.WithTracerProvider(tp))
	for _, tc := range []struct{ give, want trace.SpanKind }{
		{trace.SpanKindUnspecified, trace.SpanKindClient},
		{trace.SpanKindClient, trace.SpanKindClient},
		{trace.SpanKindServer, trace.SpanKindServer},
		{trace.SpanKindInternal, trace.SpanKindClient},
	} {
		exp.Reset()
		r := req
		r.Kind = tc.give
		_, g := in.Start(context.Background(), r)
		g.Chunk(1)
		g.End(nil)
		if got := exp.GetSpans()[0].SpanKind; got != tc.want {
			t.Errorf("Kind %v: span kind %v, want %v", tc.give, got, tc.want)
		}
	}
}

// TestNonStreaming: a request that asked for a whole reply carries no gen_ai.request.stream, as the
// conventions say "not streamed"; a streamed one carries true.
func TestNonStreaming(t *testing.T) {
	tp, exp := newTracing(t)
	in := otelitl.New(otelitl.WithTracerProvider(tp))
	for _, nonStreaming := range []bool{false, true} {
		exp.Reset()
		r := req
		r.NonStreaming = nonStreaming
		_, g := in.Start(context.Background(), r)
		g.End(nil)
		v, ok := attrMap(exp.GetSpans()[0].Attributes)[semconv.GenAIRequestStreamKey]
		if nonStreaming == ok || ok && !v.AsBool() {
			t.Errorf("NonStreaming %v: gen_ai.request.stream present %v value %v", nonStreaming, ok, v.String())
		}
	}
}
