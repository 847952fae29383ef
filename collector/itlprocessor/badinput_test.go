package itlprocessor

import (
	"bytes"
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.uber.org/zap/zapcore"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/internal/allocs"
	"github.com/otelitl/itl/itlconv"
)

// badShape is one malformed timeline: mutate breaks a copy of a valid span.
type badShape struct {
	name   string
	base   string // golden case to start from
	reason genaispan.Reason
	mutate func(s ptrace.Span)
}

func offsetsOf(s ptrace.Span) pcommon.Slice {
	v, _ := s.Attributes().Get(string(itlconv.ChunkOffsetsKey))
	return v.Slice()
}

var badShapes = []badShape{
	{"offsets not an array", "compact-long", genaispan.ReasonNotArray, func(s ptrace.Span) {
		s.Attributes().PutStr(string(itlconv.ChunkOffsetsKey), "1,2,3")
	}},
	{"tokens not an array", "multi-token-compact", genaispan.ReasonNotArray, func(s ptrace.Span) {
		s.Attributes().PutInt(string(itlconv.ChunkTokensKey), 3)
	}},
	{"offset not an integer", "compact-long", genaispan.ReasonNotInteger, func(s ptrace.Span) {
		offsetsOf(s).At(10).SetDouble(1.5)
	}},
	{"offset a string", "compact-long", genaispan.ReasonNotInteger, func(s ptrace.Span) {
		offsetsOf(s).At(0).SetStr("12")
	}},
	{"token not an integer", "multi-token-compact", genaispan.ReasonNotInteger, func(s ptrace.Span) {
		v, _ := s.Attributes().Get(string(itlconv.ChunkTokensKey))
		v.Slice().At(3).SetBool(true)
	}},
	{"event tokens not an integer", "events-basic", genaispan.ReasonNotInteger, func(s ptrace.Span) {
		s.Events().At(5).Attributes().PutStr(string(itlconv.ChunkTokensKey), "two")
	}},
	{"tokens shorter than offsets", "multi-token-compact", genaispan.ReasonLengthMismatch, func(s ptrace.Span) {
		v, _ := s.Attributes().Get(string(itlconv.ChunkTokensKey))
		v.Slice().RemoveIf(func(e pcommon.Value) bool { return e.Int() == 2 })
	}},
	{"negative offset", "compact-long", genaispan.ReasonNegativeOffset, func(s ptrace.Span) {
		offsetsOf(s).At(0).SetInt(-5)
	}},
	{"decreasing offsets", "compact-long", genaispan.ReasonDecreasing, func(s ptrace.Span) {
		o := offsetsOf(s)
		o.At(20).SetInt(o.At(19).Int() - 1)
	}},
	// A span breaking two rules is reported for the one at the earlier element, whichever it is.
	{"decreasing, then not an integer", "compact-long", genaispan.ReasonDecreasing, func(s ptrace.Span) {
		o := offsetsOf(s)
		o.At(20).SetInt(o.At(19).Int() - 1)
		o.At(30).SetStr("x")
	}},
	{"not an integer, then decreasing", "compact-long", genaispan.ReasonNotInteger, func(s ptrace.Span) {
		o := offsetsOf(s)
		o.At(20).SetStr("x")
		o.At(30).SetInt(o.At(29).Int() - 1)
	}},
	{"negative tokens", "multi-token-compact", genaispan.ReasonNegativeTokens, func(s ptrace.Span) {
		v, _ := s.Attributes().Get(string(itlconv.ChunkTokensKey))
		v.Slice().At(0).SetInt(-1)
	}},
	{"negative event tokens", "events-basic", genaispan.ReasonNegativeTokens, func(s ptrace.Span) {
		s.Events().At(1).Attributes().PutInt(string(itlconv.ChunkTokensKey), -3)
	}},
	{"event before the start", "events-basic", genaispan.ReasonBeforeStart, func(s ptrace.Span) {
		s.Events().At(0).SetTimestamp(s.StartTimestamp() - 1)
	}},
	{"event after the end", "openllmetry", genaispan.ReasonAfterEnd, func(s ptrace.Span) {
		s.Events().At(3).SetTimestamp(s.EndTimestamp() + 1)
	}},
	{"offset after the end", "compact-long", genaispan.ReasonAfterEnd, func(s ptrace.Span) {
		o := offsetsOf(s)
		o.At(o.Len() - 1).SetInt(int64(s.EndTimestamp()-s.StartTimestamp())/1000 + 10)
	}},
	{"huge offset", "compact-long", genaispan.ReasonAfterEnd, func(s ptrace.Span) {
		offsetsOf(s).At(599).SetInt(1 << 62)
	}},
	{"end before start", "compact-long", genaispan.ReasonNegativeDuration, func(s ptrace.Span) {
		s.SetEndTimestamp(s.StartTimestamp() - 1)
		offsetsOf(s).RemoveIf(func(pcommon.Value) bool { return true })
	}},
	{"end before start, offsets kept", "compact-long", genaispan.ReasonNegativeDuration, func(s ptrace.Span) {
		s.SetEndTimestamp(s.StartTimestamp() - 1)
	}},
	{"event timeline, end before start", "events-basic", genaispan.ReasonNegativeDuration, func(s ptrace.Span) {
		s.SetEndTimestamp(s.StartTimestamp() - 1)
	}},
	{"start time 0", "compact-long", genaispan.ReasonMissingStart, func(s ptrace.Span) {
		s.SetStartTimestamp(0)
	}},
	{"start time 0, no timeline", "no-chunks", genaispan.ReasonMissingStart, func(s ptrace.Span) {
		s.SetStartTimestamp(0)
	}},
	{"a span of 25 hours", "compact-long", genaispan.ReasonTooLong, func(s ptrace.Span) {
		s.SetEndTimestamp(s.StartTimestamp() + pcommon.Timestamp(25*time.Hour))
	}},
	{"chunk tokens MaxInt64", "multi-token-compact", genaispan.ReasonTooManyTokens, func(s ptrace.Span) {
		v, _ := s.Attributes().Get(string(itlconv.ChunkTokensKey))
		v.Slice().At(0).SetInt(math.MaxInt64)
		v.Slice().At(1).SetInt(math.MaxInt64)
	}},
	{"event tokens above the bound", "events-basic", genaispan.ReasonTooManyTokens, func(s ptrace.Span) {
		s.Events().At(2).Attributes().PutInt(string(itlconv.ChunkTokensKey), itlconv.MaxTokens+1)
	}},
	{"ttft +Inf", "truncated", genaispan.ReasonTTFTNotFinite, func(s ptrace.Span) {
		s.Attributes().PutDouble(string(semconv.GenAIResponseTimeToFirstChunkKey), math.Inf(1))
	}},
	{"ttft NaN", "no-chunks", genaispan.ReasonTTFTNotFinite, func(s ptrace.Span) {
		s.Attributes().PutDouble(itlconv.ClientTimeToFirstChunkKey, math.NaN())
	}},
	{"ttft a string", "truncated", genaispan.ReasonTTFTNotNumber, func(s ptrace.Span) {
		s.Attributes().PutStr(string(semconv.GenAIResponseTimeToFirstChunkKey), "0.5")
	}},
	{"ttft negative", "no-chunks", genaispan.ReasonTTFTNegative, func(s ptrace.Span) {
		s.Attributes().PutDouble(itlconv.VercelMsToFirstChunkKey, -5)
	}},
	{"ttft longer than the span", "no-chunks", genaispan.ReasonTTFTTooLong, func(s ptrace.Span) {
		s.Attributes().PutInt(itlconv.ServerTimeToFirstTokenKey, 3600)
	}},
	{"completion start time before the span", "no-chunks", genaispan.ReasonTTFTNegative, func(s ptrace.Span) {
		s.Attributes().PutStr(itlconv.LangfuseCompletionStartTimeKey, `"1999-01-01T00:00:00Z"`)
	}},
	{"completion start time not a time", "no-chunks", genaispan.ReasonTTFTBadTime, func(s ptrace.Span) {
		s.Attributes().PutStr(itlconv.LangfuseCompletionStartTimeKey, `"soon"`)
	}},
	{"output tokens 1e300", "no-chunks", genaispan.ReasonBadUsage, func(s ptrace.Span) {
		s.Attributes().PutDouble(string(semconv.GenAIUsageOutputTokensKey), 1e300)
	}},
	{"output tokens +Inf", "no-chunks", genaispan.ReasonBadUsage, func(s ptrace.Span) {
		s.Attributes().PutDouble(string(semconv.GenAIUsageOutputTokensKey), math.Inf(1))
	}},
	{"input tokens negative", "no-chunks", genaispan.ReasonBadUsage, func(s ptrace.Span) {
		s.Attributes().PutInt(string(semconv.GenAIUsageInputTokensKey), -1)
	}},
	{"usage details not JSON", "no-chunks", genaispan.ReasonBadUsage, func(s ptrace.Span) {
		s.Attributes().PutStr(itlconv.LangfuseUsageDetailsKey, "{output: 3")
	}},
	{"more chunks than max_chunks", "compact-long", genaispan.ReasonTooManyChunks, func(s ptrace.Span) {
		o := offsetsOf(s)
		last := o.At(o.Len() - 1).Int()
		for o.Len() <= itlconv.DefaultMaxChunks {
			o.AppendEmpty().SetInt(last)
		}
	}},
}

// TestBadInput runs every malformed shape through the processor: no panic, the span comes out
// byte-identical (a too-long timeline is only marked), counted once by its reason, logged once.
func TestBadInput(t *testing.T) {
	for _, shape := range badShapes {
		t.Run(shape.name, func(t *testing.T) {
			h := newHarness(t, nil, nil)
			in := ptrace.NewTraces()
			goldenCase(t, shape.base).CopyTo(in)
			shape.mutate(in.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0))
			d := genaispan.New(genaispan.Config{})
			if r := d.Read(in.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0), false); !r.ModelCall || !slices.Equal(r.Malformed(), []genaispan.Reason{shape.reason}) {
				t.Fatalf("the reader says %v (model call %v), want %q", r.Malformed(), r.ModelCall, shape.reason)
			}
			before := protoBytes(t, in)
			span := h.run(t, in)
			after := protoBytes(t, h.sink.AllTraces()[0])
			if shape.reason == genaispan.ReasonTooManyChunks {
				if v, ok := span.Attributes().Get(string(itlconv.TimelineSkippedKey)); !ok || v.Str() != string(shape.reason) {
					t.Errorf("a skipped timeline must be marked with %s", string(itlconv.TimelineSkippedKey))
				}
				span.Attributes().Remove(string(itlconv.TimelineSkippedKey))
				after = protoBytes(t, h.sink.AllTraces()[0])
			}
			if !bytes.Equal(before, after) {
				t.Errorf("the span was changed")
			}
			if got := malformedCount(t, h, string(shape.reason)); got != 1 {
				t.Errorf("counted %d times under %s, want once", got, shape.reason)
			}
			logs := h.logs.FilterMessageSnippet("malformed values").All()
			if len(logs) != 1 || logs[0].Level != zapcore.DebugLevel || logs[0].ContextMap()["reason"] != string(shape.reason) {
				t.Errorf("want one debug line with reason %s, got %v", shape.reason, logs)
			}
		})
	}
	covered := map[genaispan.Reason]bool{}
	for _, s := range badShapes {
		covered[s.reason] = true
	}
	for _, r := range genaispan.Reasons {
		if !covered[r] {
			t.Errorf("no bad-input shape for reason %s", r)
		}
	}
}

// TestMillionChunkSpan: a span with a million chunks is skipped without the decoder allocating for
// it, however long its timeline.
func TestMillionChunkSpan(t *testing.T) {
	span := ptrace.NewSpan()
	span.SetStartTimestamp(1_800_000_000_000_000_000)
	span.SetEndTimestamp(1_800_000_000_000_000_000 + pcommon.Timestamp(time.Hour))
	offs := span.Attributes().PutEmptySlice(string(itlconv.ChunkOffsetsKey))
	offs.EnsureCapacity(1_000_000)
	for i := range 1_000_000 {
		offs.AppendEmpty().SetInt(int64(i))
	}
	d := genaispan.New(genaispan.Config{})
	allocs := testing.AllocsPerRun(5, func() {
		if r := d.Decode(span); r.Reason != genaispan.ReasonTooManyChunks {
			t.Fatalf("reason %q", r.Reason)
		}
	})
	if allocs != 0 {
		t.Errorf("decoding a million-chunk span allocated %v times", allocs)
	}
	p, err := newITLProcessor(processortestSettings(), NewFactory().CreateDefaultConfig().(*Config))
	if err != nil {
		t.Fatal(err)
	}
	if p.processSpan(context.Background(), d, span) != outcomeMalformed {
		t.Error("a million-chunk span must be skipped")
	}
}

// TestDecoderTrimmedInPool: a decoder goes back to the pool without the buffers a long timeline
// grew, so that reading that timeline again allocates them anew; kept out of the pool, it reads it
// again without allocating.
func TestDecoderTrimmedInPool(t *testing.T) {
	const chunks = 4 * genaispan.KeepChunks
	span := ptrace.NewSpan()
	span.SetStartTimestamp(1_800_000_000_000_000_000)
	span.SetEndTimestamp(1_800_000_000_000_000_000 + pcommon.Timestamp(time.Hour))
	span.Attributes().PutStr("gen_ai.operation.name", "chat")
	offs := span.Attributes().PutEmptySlice(string(itlconv.ChunkOffsetsKey))
	for i := range chunks {
		offs.AppendEmpty().SetInt(int64(i * 1000))
	}
	p, err := newITLProcessor(processortestSettings(), NewFactory().CreateDefaultConfig().(*Config))
	if err != nil {
		t.Fatal(err)
	}
	d := genaispan.New(genaispan.Config{})
	read := func() {
		if c := d.Read(span, true); !c.Valid || c.Timeline.Len() != chunks {
			t.Fatalf("read %d chunks (valid %v, %q)", c.Timeline.Len(), c.Valid, c.Reason)
		}
	}
	read()
	if n := testing.AllocsPerRun(1, read); n != 0 {
		t.Fatalf("a second read of the same span allocated %v times: the test cannot tell a trimmed decoder", n)
	}
	// Taking a decoder out of the pool again keeps the pool from growing. Only the read is
	// measured: under the race detector the pool drops a quarter of what it is given, and the Get
	// then allocates a new decoder, which would pass this test with untrimmed buffers.
	p.putDecoder(d)
	p.decoders.Get()
	if allocs.Of(read) == 0 {
		t.Errorf("a decoder put back in the pool kept the buffers of a %d-chunk timeline", chunks)
	}
}
