// Package benchspans builds the generation spans the benchmarks share, so that every component is
// measured on the same input: 200-chunk replies with a realistic cadence, as events or compact.
package benchspans

import (
	"fmt"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/itlconv"
)

// Traces returns spans generation spans of chunks chunks each, in one ResourceSpans, written as
// events or as the compact attribute. Models vary over 4 names so that several series exist. The
// arrivals fall on whole milliseconds.
func Traces(spans, chunks int, compact bool) ptrace.Traces {
	return traces(spans, chunks, compact, false)
}

// ClockTraces returns the replies of Traces with each gap up to a millisecond longer, a random
// number of nanoseconds: arrivals as a clock reads them, which fall anywhere in a histogram's
// buckets, where those of Traces fall on whole milliseconds, always on the same side of a
// boundary. Code that branches on a gap's bucket is measured on both. (Compact offsets keep
// microseconds.)
func ClockTraces(spans, chunks int, compact bool) ptrace.Traces {
	return traces(spans, chunks, compact, true)
}

func traces(spans, chunks int, compact, clock bool) ptrace.Traces {
	rng := rand.New(rand.NewPCG(1, 2))
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(string(semconv.ServiceNameKey), "bench")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("github.com/otelitl/itl/otelitl")
	base := time.Unix(1_800_000_000, 0)
	for i := range spans {
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(pcommon.TraceID{byte(i), byte(i >> 8), 1})
		s.SetSpanID(pcommon.SpanID{byte(i), byte(i >> 8), 2})
		model := fmt.Sprintf("model-%d", i%4)
		s.SetName("chat " + model)
		s.SetKind(ptrace.SpanKindClient)
		start := base.Add(time.Duration(i) * time.Second)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		a := s.Attributes()
		a.PutStr(string(semconv.GenAIOperationNameKey), "chat")
		a.PutStr(string(semconv.GenAIProviderNameKey), "openai")
		a.PutStr(string(semconv.GenAIRequestModelKey), model)
		a.PutStr(string(semconv.GenAIResponseModelKey), model+"-2026")
		a.PutStr(string(semconv.ServerAddressKey), "api.openai.com")
		a.PutInt(string(semconv.ServerPortKey), 443)
		a.PutBool(string(semconv.GenAIRequestStreamKey), true)
		a.PutInt(string(semconv.GenAIUsageInputTokensKey), 900)
		a.PutInt(string(semconv.GenAIUsageOutputTokensKey), int64(chunks))
		a.PutInt(string(itlconv.ChunkCountKey), int64(chunks))
		off := time.Duration(200+rng.IntN(300)) * time.Millisecond
		var offs pcommon.Slice
		if compact {
			offs = a.PutEmptySlice(string(itlconv.ChunkOffsetsKey))
			offs.EnsureCapacity(chunks)
		} else {
			s.Events().EnsureCapacity(chunks)
		}
		for range chunks {
			if compact {
				offs.AppendEmpty().SetInt(off.Microseconds())
			} else {
				ev := s.Events().AppendEmpty()
				ev.SetName(itlconv.ChunkEventName)
				ev.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(off)))
			}
			gap := time.Duration(12+rng.IntN(20)) * time.Millisecond
			if clock {
				gap += time.Duration(rng.IntN(int(time.Millisecond)))
			}
			if rng.IntN(100) == 0 {
				gap += 400 * time.Millisecond
			}
			off += gap
		}
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(off)))
	}
	return td
}
