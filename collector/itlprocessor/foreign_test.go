package itlprocessor

import (
	"bytes"
	"math"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

// TestForeign runs every foreign reference trace through the processor. Where a model call's time
// to first chunk came from another instrumentation's attribute or event, the span gains
// gen_ai.response.time_to_first_chunk and otelitl.ttft.source naming where it came from, so that a
// trace backend shows one name whatever the instrumentation; a span that already has the
// attribute keeps its value; a malformed source leaves the span untouched; spans that are not
// model calls (agents, steps, wrappers) pass through byte-identical.
func TestForeign(t *testing.T) {
	for _, fc := range golden.LoadForeign(t) {
		t.Run(fc.Name, func(t *testing.T) {
			h := newHarness(t, nil, nil)
			in := ptrace.NewTraces()
			fc.Traces.CopyTo(in)
			h.run(t, in)
			out := h.sink.AllTraces()[0]
			d := genaispan.New(genaispan.Config{})
			var before []ptrace.Span
			pwalk.Spans(fc.Traces, func(_ pcommon.Map, s ptrace.Span) { before = append(before, s) })
			i, annotated := 0, 0
			pwalk.Spans(out, func(_ pcommon.Map, s ptrace.Span) {
				orig := before[i]
				i++
				c := d.Read(orig, false)
				_, hadTTFT := orig.Attributes().Get(string(semconv.GenAIResponseTimeToFirstChunkKey))
				if !c.ModelCall || fc.Expected.Malformed || hadTTFT || len(fc.Expected.TTFTS) == 0 {
					if !c.HasTimeline() && !bytes.Equal(spanBytes(t, orig), spanBytes(t, s)) {
						t.Errorf("span %q was changed", s.Name())
					}
					return
				}
				annotated++
				ttft, ok := double(t, s.Attributes(), string(semconv.GenAIResponseTimeToFirstChunkKey))
				if !ok || math.Abs(ttft-fc.Expected.TTFTS[0]) > fc.Expected.Tolerance() {
					t.Errorf("span %q: time to first chunk %v (present %v), want %v", s.Name(), ttft, ok, fc.Expected.TTFTS[0])
				}
				if src, _ := s.Attributes().Get(string(itlconv.TTFTSourceKey)); src.Str() != fc.Expected.Source {
					t.Errorf("span %q: %s = %q, want %q", s.Name(), itlconv.TTFTSourceKey, src.Str(), fc.Expected.Source)
				}
			})
			if !fc.Expected.Malformed && len(fc.Expected.TTFTS) > 0 && annotated == 0 {
				t.Errorf("no span annotated")
			}
		})
	}
}

// spanBytes is a span's protobuf encoding, to tell an untouched span from a changed one.
func spanBytes(t *testing.T, s ptrace.Span) []byte {
	td := ptrace.NewTraces()
	s.CopyTo(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty())
	return protoBytes(t, td)
}

// TestTTFTNeverOverwritten: a span that carries gen_ai.response.time_to_first_chunk keeps it, even
// where a complete timeline says otherwise (the figures follow the timeline).
func TestTTFTNeverOverwritten(t *testing.T) {
	h := newHarness(t, nil, nil)
	td := goldenCase(t, "stalls")
	span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	span.Attributes().PutDouble(string(semconv.GenAIResponseTimeToFirstChunkKey), 0.123)
	out := h.run(t, td)
	if v, _ := double(t, out.Attributes(), string(semconv.GenAIResponseTimeToFirstChunkKey)); v != 0.123 {
		t.Errorf("time to first chunk %v, want the span's own 0.123", v)
	}
	if _, ok := out.Attributes().Get(string(itlconv.TTFTSourceKey)); ok {
		t.Errorf("%s written on a span whose time to first chunk the processor did not write", itlconv.TTFTSourceKey)
	}
}

// TestFiguresFollowTheTimeline: the figures the processor computes from a timeline replace any the
// span already holds (a client's with another stall threshold, an earlier collector's, a forged
// otelitl.stalls), while the time to first chunk and the chunk count, which the client measured,
// stay (TestTTFTNeverOverwritten; a chunk count that differs from the timeline's makes it
// incomplete, and the figures that need a complete one are then not written).
func TestFiguresFollowTheTimeline(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.StallThreshold = 250 * time.Millisecond }, nil)
	want := h.run(t, goldenCase(t, "stalls")).Attributes()

	td := goldenCase(t, "stalls")
	a := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
	a.PutInt(string(itlconv.StallsKey), 99)
	a.PutDouble(string(itlconv.GapP50Key), 123)
	a.PutDouble(string(itlconv.TPOTKey), 7)
	got := h.run(t, td).Attributes()
	for _, k := range []attribute.Key{itlconv.StallsKey, itlconv.GapP50Key, itlconv.GapP90Key, itlconv.GapP99Key, itlconv.GapMaxKey, itlconv.TPOTKey} {
		w, _ := want.Get(string(k))
		g, ok := got.Get(string(k))
		if !ok || g.AsString() != w.AsString() {
			t.Errorf("%s = %s, want the timeline's %s", k, describe(g, ok), w.AsString())
		}
	}
	if want.Len() != got.Len() {
		t.Errorf("%d attributes, want %d: a figure written twice", got.Len(), want.Len())
	}
}

// TestWritten runs the spans written from the source of instrumentations that cannot run here
// (testdata/written) through the processor: a model call whose time to first chunk came from the
// instrumentation's own attribute or event gains gen_ai.response.time_to_first_chunk, the
// fixture's figure, and otelitl.ttft.source; every other span without a timeline passes through
// byte-identical: LiteLLM's, which carry no timing (litellm_request, the proxy's SERVER span,
// raw_gen_ai_request), among them.
func TestWritten(t *testing.T) {
	for _, wc := range golden.LoadWritten(t) {
		t.Run(wc.Name, func(t *testing.T) {
			h := newHarness(t, nil, nil)
			in := ptrace.NewTraces()
			wc.Traces.CopyTo(in)
			h.run(t, in)
			d := genaispan.New(genaispan.Config{})
			var before []ptrace.Span
			pwalk.Spans(wc.Traces, func(_ pcommon.Map, s ptrace.Span) { before = append(before, s) })
			i, annotated, timelines := 0, 0, 0
			pwalk.Spans(h.sink.AllTraces()[0], func(_ pcommon.Map, s ptrace.Span) {
				orig := before[i]
				i++
				c := d.Read(orig, false)
				if c.HasTimeline() {
					timelines++
					return // the timeline's figures: TestGolden's
				}
				if !c.ModelCall || !c.Figures.HasTTFT {
					if !bytes.Equal(spanBytes(t, orig), spanBytes(t, s)) {
						t.Errorf("span %q was changed", s.Name())
					}
					return
				}
				if annotated >= len(wc.Expected.TTFTS) {
					t.Fatalf("span %q annotated: more times to first chunk than the fixture's %v", s.Name(), wc.Expected.TTFTS)
				}
				ttft, ok := double(t, s.Attributes(), string(semconv.GenAIResponseTimeToFirstChunkKey))
				if !ok || math.Abs(ttft-wc.Expected.TTFTS[annotated]) > 1e-6 {
					t.Errorf("span %q: time to first chunk %v (present %v), want %v", s.Name(), ttft, ok, wc.Expected.TTFTS[annotated])
				}
				if src, _ := s.Attributes().Get(string(itlconv.TTFTSourceKey)); wc.Expected.TTFTSource == nil || src.Str() != *wc.Expected.TTFTSource {
					t.Errorf("span %q: %s = %q, want %v", s.Name(), itlconv.TTFTSourceKey, src.Str(), wc.Expected.TTFTSource)
				}
				annotated++
			})
			if timelines == 0 && annotated != len(wc.Expected.TTFTS) {
				t.Errorf("%d spans annotated, want one per time to first chunk of the fixture, %v", annotated, wc.Expected.TTFTS)
			}
		})
	}
}
