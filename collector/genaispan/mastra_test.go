package genaispan_test

import (
	"math"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/itlconv"
)

func mastraType(s ptrace.Span) string {
	v, _ := s.Attributes().Get(itlconv.MastraSpanTypeKey)
	return v.Str()
}

// TestMastraModelCalls: Mastra writes gen_ai.operation.name on every span, its span type where no
// convention's name fits; only the provider requests (chat, embeddings) are model calls, whatever
// excluded_operations says of the others: not the generation above the steps, not the chunk
// spans (one per text or tool-call part), which before counted as model calls of their own.
func TestMastraModelCalls(t *testing.T) {
	spans := capturedSpans(t, "mastra-agent")
	for _, excluded := range [][]string{nil, {}} {
		var types []string
		d := genaispan.New(genaispan.Config{ExcludedOperations: excluded})
		for _, s := range spans {
			if d.Read(s, false).ModelCall {
				types = append(types, mastraType(s))
			}
		}
		if !slices.Equal(types, []string{"model_inference", "model_inference"}) {
			t.Errorf("excluded_operations %v: model calls of span types %v, want the two model_inference spans", excluded, types)
		}
	}

	// A RAG_EMBEDDING span (operation embeddings) is a request to a model too, unless
	// excluded_operations names embeddings.
	var emb ptrace.Span
	for _, s := range spans {
		if mastraType(s) == "model_chunk" {
			emb = s
			break
		}
	}
	emb.Attributes().PutStr("gen_ai.operation.name", "embeddings")
	emb.Attributes().PutStr(itlconv.MastraSpanTypeKey, "rag_embedding")
	if !genaispan.New(genaispan.Config{}).Read(emb, false).ModelCall {
		t.Error("a Mastra embeddings span is no model call")
	}
	if genaispan.New(genaispan.Config{ExcludedOperations: []string{"embeddings"}}).Read(emb, false).ModelCall {
		t.Error("a Mastra embeddings span counts although excluded_operations names embeddings")
	}

	// The same operations without mastra.span.type keep the general rule: model_chunk counts.
	chunk := ptrace.NewSpan()
	chunk.SetStartTimestamp(1_000_000_000)
	chunk.SetEndTimestamp(2_000_000_000)
	chunk.Attributes().PutStr("gen_ai.operation.name", "model_chunk")
	if !genaispan.New(genaispan.Config{}).Read(chunk, false).ModelCall {
		t.Error("a span of operation model_chunk without mastra.span.type is no model call")
	}
}

// TestMastraCompletionStart: mastra.completion_start_time (an unquoted ISO 8601 time, ms) less the
// span's start is the time to first chunk, after Langfuse's completion start time in the order of
// sources. Mastra takes it once per generation, so a later step's model call carries the first
// step's, before its own start: no time to first chunk, and nothing malformed. After the end, not a
// time or not a string, it is malformed.
func TestMastraCompletionStart(t *testing.T) {
	spans := capturedSpans(t, "mastra-agent")
	var steps []ptrace.Span
	for _, s := range spans {
		if mastraType(s) == "model_inference" {
			steps = append(steps, s)
		}
	}
	if len(steps) != 2 {
		t.Fatalf("%d model_inference spans in mastra-agent, want 2", len(steps))
	}
	step2 := steps[1]
	start := step2.StartTimestamp().AsTime()
	iso := func(d time.Duration) string { return start.Add(d).UTC().Format("2006-01-02T15:04:05.000Z") }
	for _, tc := range []struct {
		name   string
		set    func(a pcommon.Map)
		ttft   float64 // -1: none
		source string
		bad    genaispan.Reason
	}{
		{"as captured: the first step's time", func(pcommon.Map) {}, -1, "", ""},
		{"a millisecond before the start", func(a pcommon.Map) { a.PutStr(itlconv.MastraCompletionStartTimeKey, iso(-time.Millisecond)) }, -1, "", ""},
		{"at the start", func(a pcommon.Map) { a.PutStr(itlconv.MastraCompletionStartTimeKey, iso(0)) }, 0, itlconv.MastraCompletionStartTimeKey, ""},
		{"this step's", func(a pcommon.Map) { a.PutStr(itlconv.MastraCompletionStartTimeKey, iso(25*time.Millisecond)) }, 0.025, itlconv.MastraCompletionStartTimeKey, ""},
		{"after the end", func(a pcommon.Map) { a.PutStr(itlconv.MastraCompletionStartTimeKey, iso(time.Hour)) }, -1, "", genaispan.ReasonTTFTTooLong},
		{"not a time", func(a pcommon.Map) { a.PutStr(itlconv.MastraCompletionStartTimeKey, "soon") }, -1, "", genaispan.ReasonTTFTBadTime},
		{"not a string", func(a pcommon.Map) { a.PutInt(itlconv.MastraCompletionStartTimeKey, 25) }, -1, "", genaispan.ReasonTTFTNotNumber},
		{"Langfuse's comes first", func(a pcommon.Map) {
			a.PutStr(itlconv.MastraCompletionStartTimeKey, iso(25*time.Millisecond))
			a.PutStr(itlconv.LangfuseCompletionStartTimeKey, `"`+iso(40*time.Millisecond)+`"`)
		}, 0.040, itlconv.LangfuseCompletionStartTimeKey, ""},
		{"a number of seconds comes first", func(a pcommon.Map) { a.PutDouble(itlconv.ClientTimeToFirstChunkKey, 0.03) }, 0.03, itlconv.ClientTimeToFirstChunkKey, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ptrace.NewSpan()
			step2.CopyTo(s)
			tc.set(s.Attributes())
			c := genaispan.New(genaispan.Config{}).Read(s, false)
			if !c.ModelCall {
				t.Fatal("no model call")
			}
			if got := c.Malformed(); tc.bad == "" && len(got) > 0 || tc.bad != "" && !slices.Equal(got, []genaispan.Reason{tc.bad}) {
				t.Errorf("malformed %v, want %q", got, tc.bad)
			}
			if tc.ttft < 0 {
				if c.Figures.HasTTFT || c.TTFTSource != "" {
					t.Errorf("time to first chunk %v from %q, want none", c.Figures.TTFT, c.TTFTSource)
				}
				return
			}
			if !c.Figures.HasTTFT || math.Abs(c.Figures.TTFT-tc.ttft) > 1e-9 || c.TTFTSource != tc.source {
				t.Errorf("time to first chunk %v (present %v) from %q, want %v from %q", c.Figures.TTFT, c.Figures.HasTTFT, c.TTFTSource, tc.ttft, tc.source)
			}
		})
	}
}
