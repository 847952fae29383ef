// Package benchspans builds the generation spans the benchmarks share, so that every component is
// measured on the same input: 200-chunk replies with a realistic cadence, as events or compact.
package benchspans

import (
	"fmt"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/otelitl"
)

// Traces returns spans generation spans of chunks chunks each, in one ResourceSpans, written as
// events or as the compact attribute. Models vary over 4 names so that several series exist.
func Traces(spans, chunks int, compact bool) ptrace.Traces {
	rng := rand.New(rand.NewPCG(1, 2))
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "bench")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(otelitl.ScopeName)
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
		a.PutStr("gen_ai.operation.name", "chat")
		a.PutStr("gen_ai.provider.name", "openai")
		a.PutStr("gen_ai.request.model", model)
		a.PutStr("gen_ai.response.model", model+"-2026")
		a.PutStr("server.address", "api.openai.com")
		a.PutInt("server.port", 443)
		a.PutBool("gen_ai.request.stream", true)
		a.PutInt("gen_ai.usage.input_tokens", 900)
		a.PutInt("gen_ai.usage.output_tokens", int64(chunks))
		a.PutInt(string(otelitl.ChunkCountKey), int64(chunks))
		off := time.Duration(200+rng.IntN(300)) * time.Millisecond
		var offs pcommon.Slice
		if compact {
			offs = a.PutEmptySlice(string(otelitl.ChunkOffsetsKey))
			offs.EnsureCapacity(chunks)
		} else {
			s.Events().EnsureCapacity(chunks)
		}
		for range chunks {
			if compact {
				offs.AppendEmpty().SetInt(off.Microseconds())
			} else {
				ev := s.Events().AppendEmpty()
				ev.SetName(otelitl.ChunkEventName)
				ev.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(off)))
			}
			gap := time.Duration(12+rng.IntN(20)) * time.Millisecond
			if rng.IntN(100) == 0 {
				gap += 400 * time.Millisecond
			}
			off += gap
		}
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(off)))
	}
	return td
}
