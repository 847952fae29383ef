package test

// Tests of the bounds a generation keeps whatever its caller, its provider or its clock does: the
// chunk cap, impossible timestamps, nil and zero inputs, and absurd values.

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
)

// oneSpan returns the only span exported and its attributes.
func oneSpan(t *testing.T, exp *tracetest.InMemoryExporter) (tracetest.SpanStub, map[attribute.Key]attribute.Value) {
	t.Helper()
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("want 1 span, got %d", len(spans))
	}
	return spans[0], attrMap(spans[0].Attributes)
}

// TestChunkCapLive streams three times the cap through Chunk: the first cap arrivals are kept, in
// either encoding, the rest counted.
func TestChunkCapLive(t *testing.T) {
	tp, exp := newTracing(t)
	const limit = 50
	for _, enc := range []otelitl.Encoding{otelitl.EncodingCompact, otelitl.EncodingEvents} {
		t.Run(enc.String(), func(t *testing.T) {
			exp.Reset()
			in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(enc), otelitl.WithMaxChunks(limit))
			_, g := in.Start(context.Background(), req)
			time.Sleep(2 * time.Millisecond) // a TTFT the kept timeline must show
			for i := range 3 * limit {
				g.Chunk(1 + i%2)
			}
			g.End(nil)
			s, a := oneSpan(t, exp)
			if got := a[itlconv.ChunkCountKey].AsInt64(); got != 3*limit {
				t.Errorf("chunk.count %d, want the %d received", got, 3*limit)
			}
			if got := a[itlconv.ChunkDroppedKey].AsInt64(); got != 2*limit {
				t.Errorf("chunk.dropped %d, want %d", got, 2*limit)
			}
			var offs []time.Duration
			var toks []int64
			if enc == otelitl.EncodingCompact {
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
			if len(offs) != limit || len(toks) != limit {
				t.Fatalf("%d arrivals and %d token counts recorded, want the first %d", len(offs), len(toks), limit)
			}
			for i, c := range toks {
				if c != int64(1+i%2) {
					t.Fatalf("chunk %d carries %d tokens: not the first %d chunks", i, c, limit)
				}
			}
			ttft := a[semconv.GenAIResponseTimeToFirstChunkKey].AsFloat64()
			if offs[0] < 2*time.Millisecond || math.Abs(ttft-offs[0].Seconds()) > 1e-6 {
				t.Errorf("time to first chunk %v s, first arrival %v: the first chunk must be kept", ttft, offs[0])
			}
		})
	}
}

// TestChunkCapDefault: without WithMaxChunks, and with values below 1, the cap is the collector's
// max_chunks.
func TestChunkCapDefault(t *testing.T) {
	tp, exp := newTracing(t)
	for _, opts := range [][]otelitl.Option{nil, {otelitl.WithMaxChunks(0)}, {otelitl.WithMaxChunks(-3)}} {
		exp.Reset()
		in := otelitl.New(append(opts, otelitl.WithTracerProvider(tp))...)
		_, g := in.Start(context.Background(), req)
		for range itlconv.DefaultMaxChunks + 7 {
			g.Chunk(1)
		}
		g.End(nil)
		_, a := oneSpan(t, exp)
		if n := len(a[itlconv.ChunkOffsetsKey].AsInt64Slice()); n != itlconv.DefaultMaxChunks {
			t.Errorf("%d options: %d arrivals recorded, want %d", len(opts), n, itlconv.DefaultMaxChunks)
		}
		if got := a[itlconv.ChunkDroppedKey].AsInt64(); got != 7 {
			t.Errorf("%d options: chunk.dropped %d, want 7", len(opts), got)
		}
	}
}

// TestChunkCapNoDroppedAttribute: a generation within its cap writes no otelitl.chunk.dropped.
func TestChunkCapNoDroppedAttribute(t *testing.T) {
	tp, exp := newTracing(t)
	in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithMaxChunks(3))
	_, g := in.Start(context.Background(), req)
	for range 3 {
		g.Chunk(1)
	}
	g.End(nil)
	if _, a := oneSpan(t, exp); a[itlconv.ChunkDroppedKey].Type() != attribute.EMPTY {
		t.Errorf("chunk.dropped %v written for a generation within its cap", a[itlconv.ChunkDroppedKey].String())
	}
}

// TestChunkCapReplayKeepsFirstArrival: replayed arrivals may come out of order; one dropped past the
// cap that precedes every kept one still sets the time to first chunk.
func TestChunkCapReplayKeepsFirstArrival(t *testing.T) {
	tp, exp := newTracing(t)
	in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(otelitl.EncodingCompact), otelitl.WithMaxChunks(3))
	offs := []time.Duration{500 * time.Millisecond, 400 * time.Millisecond, 300 * time.Millisecond, 100 * time.Millisecond, 900 * time.Millisecond}
	s := replay(t, in, exp, offs, nil, time.Second, nil)
	a := attrMap(s.Attributes)
	if got := fmt.Sprint(a[itlconv.ChunkOffsetsKey].AsInt64Slice()); got != "[300000 400000 500000]" {
		t.Errorf("offsets %s, want the first three given, sorted", got)
	}
	if got := a[semconv.GenAIResponseTimeToFirstChunkKey].AsFloat64(); got != 0.1 {
		t.Errorf("time to first chunk %v, want 0.1 (the dropped earliest arrival)", got)
	}
	if a[itlconv.ChunkCountKey].AsInt64() != 5 || a[itlconv.ChunkDroppedKey].AsInt64() != 2 {
		t.Errorf("count %v dropped %v, want 5 and 2", a[itlconv.ChunkCountKey].String(), a[itlconv.ChunkDroppedKey].String())
	}
}

// TestChunkCapMetrics: past the cap, no gap is observed for a dropped chunk, and the chunks' token
// sum is not passed off as the output token count; the provider's usage still is.
func TestChunkCapMetrics(t *testing.T) {
	for _, usage := range []int{-1, 42} {
		t.Run(fmt.Sprintf("usage=%d", usage), func(t *testing.T) {
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			in := otelitl.New(otelitl.WithTracerProvider(tracenoop.NewTracerProvider()), otelitl.WithMeterProvider(mp), otelitl.WithMaxChunks(5))
			start := time.Now()
			r := req
			r.StartTime = start
			_, g := in.Start(context.Background(), r)
			for i := range 15 {
				g.ChunkAt(start.Add(time.Duration(100+10*i)*time.Millisecond), 1)
			}
			g.SetUsage(7, usage)
			g.EndAt(start.Add(time.Second), nil)

			var rm metricdata.ResourceMetrics
			if err := reader.Collect(context.Background(), &rm); err != nil {
				t.Fatal(err)
			}
			gaps := histogram(t, rm, itlconv.TimePerOutputChunk.Name).Data.(metricdata.Histogram[float64]).DataPoints[0]
			if gaps.Count != 4 {
				t.Errorf("%d gap observations, want 4 (between the 5 recorded chunks)", gaps.Count)
			}
			ttft := histogram(t, rm, itlconv.TimeToFirstChunk.Name).Data.(metricdata.Histogram[float64]).DataPoints[0]
			if ttft.Count != 1 || math.Abs(ttft.Sum-0.1) > 1e-9 {
				t.Errorf("ttft count %d sum %v, want 1 and 0.1", ttft.Count, ttft.Sum)
			}
			got := map[string]int64{}
			for _, dp := range histogram(t, rm, itlconv.TokenUsage.Name).Data.(metricdata.Histogram[int64]).DataPoints {
				v, _ := dp.Attributes.Value(semconv.GenAITokenTypeKey)
				got[v.AsString()] = dp.Sum
			}
			want := map[string]int64{"input": 7}
			if usage >= 0 {
				want["output"] = int64(usage)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("token usage %v, want %v", got, want)
			}
		})
	}
}

// TestChunkCapMemory: a generation fed three times its cap allocates no more than twice the cap's
// 8 bytes per arrival, growth included: the timeline stops growing at the cap.
func TestChunkCapMemory(t *testing.T) {
	tp, _ := newTracing(t)
	const limit = 4096
	in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithMaxChunks(limit))
	runtime.GC() // twice empties the buffer pool: the generation starts from a fresh 64-entry buffer
	runtime.GC()
	_, g := in.Start(context.Background(), req)
	defer g.End(nil)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 3 * limit {
		g.Chunk(1)
	}
	runtime.ReadMemStats(&after)
	const bound = limit*16 + 1024 // the buffers' headers and the first one's 64 entries
	t.Logf("%d chunks, cap %d: %d bytes allocated (bound %d)", 3*limit, limit, after.TotalAlloc-before.TotalAlloc, bound)
	if got := after.TotalAlloc - before.TotalAlloc; got > bound {
		t.Errorf("%d chunks with a cap of %d allocated %d bytes, want at most %d", 3*limit, limit, got, bound)
	}
}

// TestChunkAfterManyOneTokenChunks: a multi-token chunk after more one-token chunks than a fresh
// buffer holds.
func TestChunkAfterManyOneTokenChunks(t *testing.T) {
	// Many 1-token chunks, then one of 3: the per-chunk token buffer must hold the earlier ones.
	tp, exp := newTracing(t)
	in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(otelitl.EncodingCompact))
	_, g := in.Start(context.Background(), req)
	for range 1000 {
		g.Chunk(1)
	}
	g.Chunk(3)
	g.End(nil)
	_, a := oneSpan(t, exp)
	toks := a[itlconv.ChunkTokensKey].AsInt64Slice()
	if len(toks) != 1001 || toks[0] != 1 || toks[999] != 1 || toks[1000] != 3 {
		t.Errorf("%d token counts, last %v; want 1000 ones and a 3", len(toks), toks[len(toks)-1:])
	}
}

var farFuture = time.Now().AddDate(200, 0, 0)

// TestImpossibleArrivals: ChunkAt drops and counts arrivals more than MaxDuration from the start;
// they neither stretch the span nor set its time to first chunk.
func TestImpossibleArrivals(t *testing.T) {
	tp, exp := newTracing(t)
	in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(otelitl.EncodingCompact))
	start := time.Now()
	r := req
	r.StartTime = start
	_, g := in.Start(context.Background(), r)
	g.ChunkAt(time.Time{}, 1)                                // the zero time: long before the start
	g.ChunkAt(start.Add(-time.Millisecond), 1)               // slightly early: recorded at the start
	g.ChunkAt(start.Add(300*time.Millisecond), 1)            // fine
	g.ChunkAt(farFuture, 1)                                  // 200 years ahead
	g.ChunkAt(start.Add(itlconv.MaxDuration+time.Second), 1) // just beyond the bound
	g.ChunkAt(start.Add(itlconv.MaxDuration), 1)             // at the bound: possible
	g.End(nil)
	s, a := oneSpan(t, exp)
	if got := fmt.Sprint(a[itlconv.ChunkOffsetsKey].AsInt64Slice()); got != fmt.Sprint([]int64{0, 300000, itlconv.MaxDuration.Microseconds()}) {
		t.Errorf("offsets %s", got)
	}
	if a[itlconv.ChunkDroppedKey].AsInt64() != 3 || a[itlconv.ChunkCountKey].AsInt64() != 6 {
		t.Errorf("dropped %v count %v, want 3 and 6", a[itlconv.ChunkDroppedKey].String(), a[itlconv.ChunkCountKey].String())
	}
	if d := s.EndTime.Sub(s.StartTime); d != itlconv.MaxDuration {
		t.Errorf("span lasts %v, want %v (its last possible arrival)", d, itlconv.MaxDuration)
	}
}

// TestImpossibleEnd: an end more than MaxDuration after the start moves to the last recorded
// arrival, or to the start.
func TestImpossibleEnd(t *testing.T) {
	tp, exp := newTracing(t)
	in := otelitl.New(otelitl.WithTracerProvider(tp))
	for _, tc := range []struct {
		chunks []time.Duration
		end    time.Time
		want   time.Duration
	}{
		{[]time.Duration{100 * time.Millisecond, 250 * time.Millisecond}, farFuture, 250 * time.Millisecond},
		{nil, farFuture, 0},
		{[]time.Duration{100 * time.Millisecond}, time.Time{}, 100 * time.Millisecond}, // before the start
	} {
		exp.Reset()
		start := time.Now()
		r := req
		r.StartTime = start
		_, g := in.Start(context.Background(), r)
		for _, off := range tc.chunks {
			g.ChunkAt(start.Add(off), 1)
		}
		g.EndAt(tc.end, nil)
		s, _ := oneSpan(t, exp)
		if d := s.EndTime.Sub(s.StartTime); d != tc.want {
			t.Errorf("chunks %v, end %v: span lasts %v, want %v", tc.chunks, tc.end.Year(), d, tc.want)
		}
	}
}

// TestStartTimeFarFromNow documents what a StartTime more than MaxDuration from now does to live
// arrivals: long ago, they are dropped and the span ends at the start; in the future, they are
// recorded at the start (the span ends there) or, beyond the bound, dropped.
func TestStartTimeFarFromNow(t *testing.T) {
	tp, exp := newTracing(t)
	for _, cc := range []bool{true, false} {
		in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(otelitl.EncodingCompact), otelitl.WithCycleCounter(cc))
		for _, tc := range []struct {
			start           time.Time
			offsets         string
			dropped, chunks int64
			duration        time.Duration
			ttft            bool
			name            string
		}{
			{time.Now().Add(-48 * time.Hour), "[]", 2, 2, 0, false, "two days ago"},
			{time.Now().Add(time.Hour), "[0 0]", 0, 2, 0, true, "in an hour"},
			{time.Now().Add(48 * time.Hour), "[]", 2, 2, 0, false, "in two days"},
		} {
			exp.Reset()
			r := req
			r.StartTime = tc.start
			_, g := in.Start(context.Background(), r)
			g.Chunk(1)
			g.Chunk(1)
			g.End(nil)
			s, a := oneSpan(t, exp)
			if got := fmt.Sprint(a[itlconv.ChunkOffsetsKey].AsInt64Slice()); got != tc.offsets {
				t.Errorf("cycles %v, start %s: offsets %s, want %s", cc, tc.name, got, tc.offsets)
			}
			if a[itlconv.ChunkDroppedKey].AsInt64() != tc.dropped || a[itlconv.ChunkCountKey].AsInt64() != tc.chunks {
				t.Errorf("cycles %v, start %s: dropped %v count %v", cc, tc.name, a[itlconv.ChunkDroppedKey].String(), a[itlconv.ChunkCountKey].String())
			}
			if d := s.EndTime.Sub(s.StartTime); d != tc.duration {
				t.Errorf("cycles %v, start %s: span lasts %v, want %v", cc, tc.name, d, tc.duration)
			}
			if _, ok := a[semconv.GenAIResponseTimeToFirstChunkKey]; ok != tc.ttft {
				t.Errorf("cycles %v, start %s: time to first chunk written %v, want %v", cc, tc.name, ok, tc.ttft)
			}
		}
	}
}

// TestNilContext: Start takes a nil context as context.Background(), under the global no-op
// provider as under an SDK.
func TestNilContext(t *testing.T) {
	var nilCtx context.Context
	ctx, g := otelitl.New().Start(nilCtx, req) // the global provider: a no-op one in this test binary
	if ctx == nil {
		t.Errorf("Start returned a nil context")
	}
	g.Chunk(1)
	g.End(nil)

	tp, exp := newTracing(t)
	ctx, g = otelitl.New(otelitl.WithTracerProvider(tp)).Start(nilCtx, req)
	if !trace.SpanContextFromContext(ctx).IsValid() {
		t.Errorf("the returned context does not hold the generation's span")
	}
	g.Chunk(1)
	g.End(nil)
	if s, _ := oneSpan(t, exp); s.Parent.IsValid() {
		t.Errorf("a generation started from a nil context has a parent")
	}
}

// TestNilAndZeroInputs: no exported function or method panics on nil or zero inputs.
func TestNilAndZeroInputs(t *testing.T) {
	in := otelitl.New(nil, otelitl.WithTracerProvider(nil), otelitl.WithMeterProvider(nil), otelitl.WithAttributes())
	_, g := in.Start(context.Background(), otelitl.Request{})
	g.End(nil)

	for name, in := range map[string]*otelitl.Instrumentation{"nil": nil, "zero": {}} {
		ctx, g := in.Start(context.Background(), req)
		if ctx == nil || g.IsRecording() {
			t.Errorf("%s Instrumentation: context %v, recording %v; want the context back and an inert generation", name, ctx, g.IsRecording())
		}
		g.Chunk(1)
		g.End(nil)
	}

	var zero otelitl.Generation // not made by Start: inert
	if zero.IsRecording() {
		t.Errorf("a zero Generation says it records")
	}
	zero.Chunk(1)
	zero.ChunkAt(time.Time{}, 0)
	zero.SetUsage(-1, -1)
	zero.SetResponseModel("")
	zero.SetResponseID("")
	zero.SetServer("", 0)
	zero.SetRequestModel("m")
	zero.AddFinishReason("")
	zero.EndAt(time.Time{}, nil)
	zero.End(nil)
	if v := otelitl.ErrorType(nil); v.Key != semconv.ErrorTypeKey || v.Value.AsString() == "" {
		t.Errorf("ErrorType(nil) = %v", v)
	}
}

// TestAbsurdValues: values no request or provider can mean are left out or bounded.
func TestAbsurdValues(t *testing.T) {
	tp, exp := newTracing(t)
	in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(otelitl.EncodingCompact))
	r := req
	r.ServerPort = 70000
	_, g := in.Start(context.Background(), r)
	g.SetServer(strings.Repeat("h", 300), -1)
	g.SetServer("", 1<<20)
	g.SetUsage(-5, -7)
	for range 1000 {
		g.AddFinishReason("stop")
	}
	g.SetResponseModel(strings.Repeat("é", 200)) // 400 bytes
	g.SetResponseID(strings.Repeat("x", 10000))
	g.Chunk(math.MaxInt)
	g.Chunk(math.MinInt)
	g.End(nil)
	_, a := oneSpan(t, exp)
	if v, ok := a[semconv.ServerPortKey]; ok {
		t.Errorf("server.port %v recorded", v.String())
	}
	if got := a[semconv.ServerAddressKey].AsString(); got != "api.openai.com" {
		t.Errorf("server.address %q, want the request's", got)
	}
	for _, k := range []attribute.Key{semconv.GenAIUsageInputTokensKey, semconv.GenAIUsageOutputTokensKey} {
		if v, ok := a[k]; ok {
			t.Errorf("%s = %v from a negative count", k, v.String())
		}
	}
	if n := len(a[semconv.GenAIResponseFinishReasonsKey].AsStringSlice()); n != 128 {
		t.Errorf("%d finish reasons, want 128", n)
	}
	if m := a[semconv.GenAIResponseModelKey].AsString(); len(m) > 256 || !utf8.ValidString(m) || !strings.HasPrefix(strings.Repeat("é", 200), m) || len(m) < 250 {
		t.Errorf("response model of %d bytes (valid UTF-8 %v), want a prefix of at most 256", len(m), utf8.ValidString(m))
	}
	if n := len(a[semconv.GenAIResponseIDKey].AsString()); n != 256 {
		t.Errorf("response id of %d bytes, want 256", n)
	}
	if got := fmt.Sprint(a[itlconv.ChunkTokensKey].AsInt64Slice()); got != fmt.Sprint([]int64{itlconv.MaxTokens, 1}) {
		t.Errorf("tokens %s, want [%d 1]: a chunk counts at most itlconv.MaxTokens", got, itlconv.MaxTokens)
	}

	exp.Reset()
	r.ServerAddress, r.ServerPort = strings.Repeat("h", 300), -1
	_, g = in.Start(context.Background(), r)
	g.End(nil)
	if _, a := oneSpan(t, exp); a[semconv.ServerAddressKey].Type() != attribute.EMPTY || a[semconv.ServerPortKey].Type() != attribute.EMPTY {
		t.Errorf("server %v:%v recorded from an address no host has and a negative port", a[semconv.ServerAddressKey].String(), a[semconv.ServerPortKey].String())
	}
}

type longType struct{ s string }

func (e longType) Error() string     { return "long" }
func (e longType) ErrorType() string { return e.s }

// TestErrorTypeBounded: error.type is cut to MaxErrorTypeLength bytes on a rune boundary, made valid
// UTF-8, and an ErrorType method returning "" gives the type's name.
func TestErrorTypeBounded(t *testing.T) {
	long := strings.Repeat("ü", itlconv.MaxErrorTypeLength) // twice the bound in bytes
	for _, tc := range []struct {
		err  error
		want string
	}{
		{longType{long}, long[:itlconv.MaxErrorTypeLength]},
		{longType{"a" + long}, "a" + long[:itlconv.MaxErrorTypeLength-2]}, // 127 bytes: no half rune
		{longType{"bad\xffbyte"}, "bad\uFFFDbyte"},
		{longType{""}, "github.com/otelitl/itl/otelitl/test.longType"},
		{fmt.Errorf("ctx: %w", longType{""}), "github.com/otelitl/itl/otelitl/test.longType"},
		{longType{"rate_limited"}, "rate_limited"},
	} {
		got := otelitl.ErrorType(tc.err).Value.AsString()
		if got != tc.want {
			t.Errorf("ErrorType(%#v) = %q, want %q", tc.err, got, tc.want)
		}
		if len(got) > itlconv.MaxErrorTypeLength || !utf8.ValidString(got) {
			t.Errorf("ErrorType = %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
		}
	}
}
