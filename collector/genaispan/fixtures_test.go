package genaispan_test

import (
	"math"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

// captureSlack is how far a time to first chunk read from a captured span may sit from the
// capture's truth: the JavaScript SDK starts spans on a whole millisecond of Date.now() and times
// the rest with performance.now(), a few milliseconds off the truth's clock at most.
const captureSlack = 0.006

// TestCaptured reads the spans the real npm packages of other instrumentations exported against
// fakellm (tools/capture), and compares what otelitl reads with what the capture program measured
// around the stream its application consumed.
func TestCaptured(t *testing.T) {
	cases := golden.LoadCaptured(t)
	for name := range golden.Captured {
		if _, ok := cases[name]; !ok {
			t.Errorf("no captured fixture %s", name)
		}
	}
	for name, cc := range cases {
		t.Run(name, func(t *testing.T) {
			want, ok := golden.Captured[name]
			if !ok {
				t.Fatalf("no expectation for captured scenario %s: add it to golden.Captured", name)
			}
			d := genaispan.New(genaispan.Config{})
			calls, out, ttfts := 0, int64(0), 0
			// A scenario two instrumentations describe is read with excluded_scopes, as the
			// components are configured for it: the spans of those scopes are no model calls.
			pwalk.SpansOutside(cc.Traces, golden.CapturedExcludedScopes[name], func(_ pcommon.Map, _ pcommon.InstrumentationScope, span ptrace.Span) {
				c := d.Read(span, false)
				if !c.ModelCall {
					return
				}
				if calls >= len(cc.Truth.Requests) {
					t.Fatalf("more model calls than requests the application made")
				}
				req := cc.Truth.Requests[calls]
				calls++
				if c.Model != cc.Truth.Model {
					t.Errorf("model %q, want %q", c.Model, cc.Truth.Model)
				}
				if c.Provider != want.Provider {
					t.Errorf("provider %q, want %q", c.Provider, want.Provider)
				}
				if bad := c.Malformed(); len(bad) > 0 {
					t.Errorf("malformed: %v", bad)
				}
				if c.Figures.HasOutputTokens {
					out += c.Figures.OutputTokens
				}
				if c.HasTimeline() || c.Figures.HasGaps {
					t.Errorf("a timeline from a source that writes none")
				}
				if !c.Figures.HasTTFT {
					return
				}
				ttfts++
				if c.TTFTSource != want.TTFTSource {
					t.Errorf("time to first chunk from %q, want %q", c.TTFTSource, want.TTFTSource)
				}
				to := req.FirstChunk
				if want.TTFTTo == "headers" {
					to = req.ResponseHeaders
				}
				truth := float64(to-int64(span.StartTimestamp())) / 1e9
				if math.Abs(c.Figures.TTFT-truth) > captureSlack {
					t.Errorf("time to first chunk %.4f s, the capture measured %.4f s from the span's start to the %s", c.Figures.TTFT, truth, want.TTFTTo)
				}
			})
			if calls != want.ModelCalls {
				t.Errorf("%d model calls, want %d", calls, want.ModelCalls)
			}
			if wantTTFTs := map[bool]int{true: calls - want.NoTTFT, false: 0}[want.TTFTSource != ""]; ttfts != wantTTFTs {
				t.Errorf("%d times to first chunk, want %d", ttfts, wantTTFTs)
			}
			if want.OutputTokens < 0 && out != 0 || want.OutputTokens >= 0 && out != want.OutputTokens {
				t.Errorf("output tokens %d in all, want %d", out, want.OutputTokens)
			}
		})
	}
}

// TestWritten reads the fixtures written from the source code of instrumentations whose packages
// cannot run here (testdata/written: Pydantic AI, vLLM, OpenLIT and OpenLLMetry Python, Langfuse
// Python, LiteLLM, LangSmith Python, opentelemetry-python-contrib's GenAI instrumentations), and
// the provider where the fixture names one.
func TestWritten(t *testing.T) {
	for _, wc := range golden.LoadWritten(t) {
		t.Run(wc.Name, func(t *testing.T) {
			if _, ok := wc.Traces.ResourceSpans().At(0).Resource().Attributes().Get("otelitl.fixture.written_from"); !ok {
				t.Errorf("a written fixture must say what it was written from (otelitl.fixture.written_from)")
			}
			want := wc.Expected
			got := read(wc.Traces)
			if got.calls != want.ModelCalls {
				t.Fatalf("%d model calls, want %d", got.calls, want.ModelCalls)
			}
			wantModel := ""
			if want.Model != nil {
				wantModel = *want.Model
			}
			for _, m := range got.models {
				if m != wantModel {
					t.Errorf("model %q, want %q", m, wantModel)
				}
			}
			for _, p := range got.providers {
				if want.Provider != nil && p != *want.Provider {
					t.Errorf("provider %q, want %q", p, *want.Provider)
				}
			}
			if !nearAll(got.durations, want.DurationS, 1e-6) {
				t.Errorf("durations %v, want %v", got.durations, want.DurationS)
			}
			if !nearAll(got.ttfts, want.TTFTS, 1e-6) {
				t.Errorf("time to first chunk %v, want %v", got.ttfts, want.TTFTS)
			}
			if want.TTFTSource != nil && (len(got.sources) == 0 || got.sources[0] != *want.TTFTSource) {
				t.Errorf("time to first chunk from %v, want %q", got.sources, *want.TTFTSource)
			}
			if (got.output == nil) != (want.OutputTokens == nil) || got.output != nil && *got.output != *want.OutputTokens {
				t.Errorf("output tokens %v, want %v", deref(got.output), deref(want.OutputTokens))
			}
			if got.gaps != want.Gaps || got.stalls != want.StallSeries {
				t.Errorf("gaps %d, stall series %v; want %d, %v", got.gaps, got.stalls, want.Gaps, want.StallSeries)
			}
			if len(got.malformed) > 0 {
				t.Errorf("malformed: %v", got.malformed)
			}
		})
	}
}

// TestNotStreamed: a call that says it was not streamed has no time to first chunk but from a
// timeline. OpenLIT Python writes a non-streamed call's whole duration as
// gen_ai.server.time_to_first_token (docs/sources.md); read as a TTFT, every such call inflated the
// TTFT histogram by its duration. The call still counts, with its duration.
func TestNotStreamed(t *testing.T) {
	var openlit ptrace.Traces
	for _, wc := range golden.LoadWritten(t) {
		if wc.Name == "openlit-python" {
			openlit = wc.Traces
		}
	}
	if openlit.ResourceSpans().Len() == 0 {
		t.Fatal("no openlit-python fixture in testdata/written")
	}
	for _, key := range []string{itlconv.RequestStreamKey, itlconv.RequestIsStreamKey, itlconv.IsStreamingKey, itlconv.LLMIsStreamingKey} {
		for _, streamed := range []bool{false, true} {
			td := ptrace.NewTraces()
			openlit.CopyTo(td)
			pwalk.Spans(td, func(_ pcommon.Map, span ptrace.Span) {
				a := span.Attributes()
				if _, ok := a.Get(itlconv.ServerTimeToFirstTokenKey); ok {
					a.Remove(itlconv.RequestStreamKey)
					a.PutBool(key, streamed)
					// What OpenLIT writes on a call that returned whole: its duration.
					a.PutDouble(itlconv.ServerTimeToFirstTokenKey, float64(span.EndTimestamp()-span.StartTimestamp())/1e9)
				}
			})
			got := read(td)
			if got.calls != 1 || len(got.durations) != 1 || len(got.malformed) > 0 {
				t.Errorf("%s=%v: %d model calls, %d durations, malformed %v; want 1, 1, none", key, streamed, got.calls, len(got.durations), got.malformed)
			}
			if streamed != (len(got.ttfts) == 1) {
				t.Errorf("%s=%v: time to first chunk %v", key, streamed, got.ttfts)
			}
		}
	}

	// gen_ai.request.stream, the conventions' flag, decides over the older ones; and otelitl's own
	// gen_ai.response.time_to_first_chunk (an earlier collector's, from a timeline it dropped)
	// stands whatever a flag says.
	for _, c := range []struct {
		name  string
		set   func(a pcommon.Map)
		ttfts int
	}{
		{"stream true over llm.is_streaming false", func(a pcommon.Map) {
			a.PutBool(itlconv.RequestStreamKey, true)
			a.PutBool(itlconv.LLMIsStreamingKey, false)
		}, 1},
		{"our own time to first chunk on a call not streamed", func(a pcommon.Map) {
			a.PutBool(itlconv.RequestStreamKey, false)
			a.PutDouble("gen_ai.response.time_to_first_chunk", 0.25)
		}, 1},
		{"a string false is no flag", func(a pcommon.Map) { a.PutStr(itlconv.RequestStreamKey, "false") }, 1},
	} {
		td := ptrace.NewTraces()
		openlit.CopyTo(td)
		pwalk.Spans(td, func(_ pcommon.Map, span ptrace.Span) {
			if _, ok := span.Attributes().Get(itlconv.ServerTimeToFirstTokenKey); ok {
				span.Attributes().Remove(itlconv.RequestStreamKey)
				c.set(span.Attributes())
			}
		})
		if got := read(td); len(got.ttfts) != c.ttfts {
			t.Errorf("%s: time to first chunk %v, want %d", c.name, got.ttfts, c.ttfts)
		}
	}

	// A timeline shows a stream whatever a flag says: its first arrival is the time to first chunk.
	td, err := golden.ReadTraces(golden.Dir() + "/cases/events-basic.otlp.json")
	if err != nil {
		t.Fatal(err)
	}
	pwalk.Spans(td, func(_ pcommon.Map, span ptrace.Span) { span.Attributes().PutBool(itlconv.RequestStreamKey, false) })
	if got := read(td); len(got.ttfts) != 1 {
		t.Errorf("a timeline flagged not streamed: time to first chunk %v, want its first arrival", got.ttfts)
	}
}
