package itlprocessor

import (
	"bytes"
	"math"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

// TestCaptured replays the spans the real npm packages of other instrumentations exported
// (tools/capture) through the processor: every model call whose instrumentation wrote a time to
// first chunk under another name gains gen_ai.response.time_to_first_chunk (in seconds, whatever
// the source's unit) and otelitl.ttft.source; every other span passes through byte-identical.
func TestCaptured(t *testing.T) {
	for name, cc := range golden.LoadCaptured(t) {
		want := golden.Captured[name]
		t.Run(name, func(t *testing.T) {
			// A scenario two instrumentations describe is read with excluded_scopes
			// (golden.CapturedExcludedScopes): the spans of those scopes pass through untouched.
			excluded := golden.CapturedExcludedScopes[name]
			h := newHarness(t, func(cfg *Config) { cfg.ExcludedScopes = excluded }, nil)
			in := ptrace.NewTraces()
			cc.Traces.CopyTo(in)
			h.run(t, in)
			d := genaispan.New(genaispan.Config{})
			var before []ptrace.Span
			pwalk.Spans(cc.Traces, func(_ pcommon.Map, s ptrace.Span) { before = append(before, s) })
			read := map[pcommon.SpanID]bool{}
			pwalk.SpansOutside(cc.Traces, excluded, func(_ pcommon.Map, _ pcommon.InstrumentationScope, s ptrace.Span) { read[s.SpanID()] = true })
			i, annotated := 0, 0
			pwalk.Spans(h.sink.AllTraces()[0], func(_ pcommon.Map, s ptrace.Span) {
				orig := before[i]
				i++
				c := d.Read(orig, false)
				// A time to first chunk under otelitl's own name (the Anthropic SDK's) is left as
				// it is: the span passes through unchanged too.
				own := c.TTFTSource == string(semconv.GenAIResponseTimeToFirstChunkKey)
				if !read[orig.SpanID()] || !c.ModelCall || !c.Figures.HasTTFT || own {
					if !bytes.Equal(spanBytes(t, orig), spanBytes(t, s)) {
						t.Errorf("span %q was changed", s.Name())
					}
					return
				}
				annotated++
				got, ok := double(t, s.Attributes(), string(semconv.GenAIResponseTimeToFirstChunkKey))
				if !ok || math.Abs(got-c.Figures.TTFT) > 1e-12 {
					t.Errorf("span %q: time to first chunk %v (present %v), want %v", s.Name(), got, ok, c.Figures.TTFT)
				}
				if src, _ := s.Attributes().Get(string(itlconv.TTFTSourceKey)); src.Str() != want.TTFTSource {
					t.Errorf("span %q: %s %q, want %q", s.Name(), itlconv.TTFTSourceKey, src.Str(), want.TTFTSource)
				}
			})
			annotates := want.TTFTSource != "" && want.TTFTSource != string(semconv.GenAIResponseTimeToFirstChunkKey)
			if wantN := map[bool]int{true: want.ModelCalls - want.NoTTFT}[annotates]; annotated != wantN {
				t.Errorf("%d spans annotated, want %d", annotated, wantN)
			}
		})
	}
}
