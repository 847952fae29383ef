package itlmetricsconnector

import (
	"context"
	"math"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

// langSmithPython returns a copy of the written fixture langsmith-python-chain (LangSmith Python's
// spans of a streamed ChatOpenAI call in a LangChain chain), its trace ID's last byte set to id.
func langSmithPython(t *testing.T, id byte) ptrace.Traces {
	t.Helper()
	for _, wc := range golden.LoadWritten(t) {
		if wc.Name == "langsmith-python-chain" {
			td := ptrace.NewTraces()
			wc.Traces.CopyTo(td)
			pwalk.Spans(td, func(_ pcommon.Map, s ptrace.Span) {
				tid := s.TraceID()
				tid[15] = id
				s.SetTraceID(tid)
			})
			return td
		}
	}
	t.Fatal("no written fixture langsmith-python-chain")
	return ptrace.Traces{}
}

// providerCase is a LangSmith llm span with ls_provider ls, or with no LangSmith attribute and
// gen_ai.system system, and the provider its points must carry.
type providerCase struct{ ls, system, want string }

// model names the case as the span's gen_ai.request.model.
func (c providerCase) model() string {
	if c.system != "" {
		return "system:" + c.system
	}
	return "ls:" + c.ls
}

// TestLangSmithProviders: the connector's points carry the provider of LangSmith's llm span as
// the conventions name it, from LangChain's ls_provider (google_vertexai is gcp.vertex_ai,
// amazon_bedrock aws.bedrock, ...), one duration per request of the chain (its chain, prompt and
// parser spans add none); gen_ai.system of LangChain's spelling on a span LangSmith did not write
// (no langsmith.span.kind) stays as written. Before, the points read google_vertexai and
// amazon_bedrock.
func TestLangSmithProviders(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, nil, sink)
	cases := []providerCase{
		{ls: "openai", want: "openai"},
		{ls: "google_vertexai", want: "gcp.vertex_ai"},
		{ls: "google_genai", want: "gcp.gemini"},
		{ls: "amazon_bedrock", want: "aws.bedrock"},
		{ls: "mistral", want: "mistral_ai"},
		{ls: "ollama", want: "ollama"},
		{system: "google_vertexai", want: "google_vertexai"},
		{system: "amazon_bedrock", want: "amazon_bedrock"},
	}
	for i, tc := range cases {
		td := langSmithPython(t, byte(i))
		pwalk.Spans(td, func(_ pcommon.Map, s ptrace.Span) {
			a := s.Attributes()
			if s.Name() != "ChatOpenAI" {
				return
			}
			a.PutStr("gen_ai.request.model", tc.model())
			if tc.system != "" {
				// Another instrumentation's span: no run type, no ls_provider.
				a.Remove(itlconv.LangSmithSpanKindKey)
				a.Remove(itlconv.LangSmithProviderKey)
				a.PutStr("gen_ai.system", tc.system)
			} else {
				a.PutStr(itlconv.LangSmithProviderKey, tc.ls)
			}
		})
		if err := c.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	dur := histPoints(sink.AllMetrics()[0], itlconv.Duration.Name)
	if len(dur) != len(cases) {
		t.Errorf("%d duration points, want one per fixture (%d): %v", len(dur), len(cases), dur)
	}
	for _, tc := range cases {
		dp, ok := dur[dpKey{model: tc.model()}]
		if !ok || dp.Count() != 1 {
			t.Errorf("ls_provider %q, gen_ai.system %q: %d durations (present %v), want 1", tc.ls, tc.system, dp.Count(), ok)
			continue
		}
		if p := str(dp.Attributes(), "gen_ai.provider.name"); p != tc.want {
			t.Errorf("ls_provider %q, gen_ai.system %q: provider %q, want %q", tc.ls, tc.system, p, tc.want)
		}
	}
}

// TestLangSmithPythonADK: LangSmith Python's spans of a streamed Google ADK call (written fixture
// langsmith-python-adk) give one duration, one time to first chunk from
// langsmith.metadata.time_to_first_token and the output tokens of langsmith.metadata.usage_metadata,
// under gcp.gemini (ls_provider google_ai); the session's and the agent's chain spans add none.
// Before, the call had no TTFT point and no token point.
func TestLangSmithPythonADK(t *testing.T) {
	var want golden.WrittenCase
	for _, wc := range golden.LoadWritten(t) {
		if wc.Name == "langsmith-python-adk" {
			want = wc
		}
	}
	if want.Name == "" {
		t.Fatal("no written fixture langsmith-python-adk")
	}
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, nil, sink)
	if err := c.ConsumeTraces(context.Background(), want.Traces); err != nil {
		t.Fatal(err)
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	md := sink.AllMetrics()[0]
	m := *want.Expected.Model
	for _, w := range []struct {
		metric string
		sum    float64
	}{
		{itlconv.Duration.Name, want.Expected.DurationS[0]},
		{itlconv.TimeToFirstChunk.Name, want.Expected.TTFTS[0]},
	} {
		points := histPoints(md, w.metric)
		dp, ok := points[dpKey{model: m}]
		if len(points) != 1 || !ok {
			t.Errorf("%s: %d points, one of %s %v; want that one only", w.metric, len(points), m, ok)
			continue
		}
		if dp.Count() != 1 || math.Abs(dp.Sum()-w.sum) > 1e-9 {
			t.Errorf("%s: count %d, sum %v; want one of %v", w.metric, dp.Count(), dp.Sum(), w.sum)
		}
		if p := str(dp.Attributes(), "gen_ai.provider.name"); p != "gcp.gemini" {
			t.Errorf("%s: provider %q, want gcp.gemini", w.metric, p)
		}
	}
	if dp, ok := histPoints(md, itlconv.TokenUsage.Name)[dpKey{m, "gen_ai.token.type", "output"}]; !ok {
		t.Errorf("no output token point; want %d", *want.Expected.OutputTokens)
	} else if dp.Sum() != float64(*want.Expected.OutputTokens) {
		t.Errorf("output tokens %v, want %d", dp.Sum(), *want.Expected.OutputTokens)
	}
}
