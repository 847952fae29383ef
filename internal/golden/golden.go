// Package golden loads the reference generation spans for tests: each case's OTLP/JSON trace and
// the figures expected.json gives for it. The repository keeps them in testdata/golden, a verbatim
// copy of the project's shared reference set (see testdata/golden/README.md for the rules they
// follow).
package golden

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Expected holds one case's figures; a nil pointer means "not defined: record nothing".
type Expected struct {
	Description      string    `json:"description"`
	Model            string    `json:"model"`
	ChunksSeen       int       `json:"chunks_seen"`
	TimelineValid    bool      `json:"timeline_valid"`
	TimelineComplete bool      `json:"timeline_complete"`
	GenAI            bool      `json:"genai"`
	DurationS        float64   `json:"duration_s"`
	ErrorType        string    `json:"error_type"`
	TTFTS            *float64  `json:"ttft_s"`
	TPOTS            *float64  `json:"tpot_s"`
	GapsS            []float64 `json:"gaps_s"`
	GapP50S          *float64  `json:"gap_p50_s"`
	GapP90S          *float64  `json:"gap_p90_s"`
	GapP99S          *float64  `json:"gap_p99_s"`
	MaxGapS          *float64  `json:"max_gap_s"`
	OutputTokens     *int64    `json:"output_tokens"`
	Stalls           int       `json:"stalls"`
}

// Case is one reference span.
type Case struct {
	Name     string
	Traces   ptrace.Traces
	Expected Expected
}

// Span returns the case's only span.
func (c Case) Span() ptrace.Span {
	return c.Traces.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
}

// Set is every case with the stall threshold the expectations were computed with.
type Set struct {
	Cases           []Case
	StallThresholdS float64
}

// Dir returns the golden directory: $OTELITL_GOLDEN_DIR when set (to try a new reference set),
// else the repository's testdata/golden.
func Dir() string {
	if d := os.Getenv("OTELITL_GOLDEN_DIR"); d != "" {
		return d
	}
	return RepoDir()
}

// RepoDir returns the repository's copy of the reference set, testdata/golden.
func RepoDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "golden")
}

// Load reads every case. A missing directory fails the test, never skips it: the golden files are
// the specification, and a run without them proves nothing.
func Load(t testing.TB) Set {
	t.Helper()
	dir := Dir()
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatalf("reading the golden expectations (the repository keeps them in testdata/golden; OTELITL_GOLDEN_DIR overrides it): %v", err)
	}
	var doc struct {
		Cases           map[string]Expected `json:"cases"`
		StallThresholdS float64             `json:"stall_threshold_s"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("expected.json: %v", err)
	}
	set := Set{StallThresholdS: doc.StallThresholdS}
	for name, exp := range doc.Cases {
		td, err := ReadTraces(filepath.Join(dir, "cases", name+".otlp.json"))
		if err != nil {
			t.Fatal(err)
		}
		set.Cases = append(set.Cases, Case{Name: name, Traces: td, Expected: exp})
	}
	sort.Slice(set.Cases, func(i, j int) bool { return set.Cases[i].Name < set.Cases[j].Name })
	if len(set.Cases) == 0 {
		t.Fatalf("no golden cases in %s", dir)
	}
	return set
}

// ReadTraces reads one OTLP/JSON file holding exactly one span.
func ReadTraces(path string) (ptrace.Traces, error) {
	td, err := readOTLP(path)
	if err != nil {
		return ptrace.Traces{}, err
	}
	if td.SpanCount() != 1 {
		return ptrace.Traces{}, fmt.Errorf("%s: want one span, got %d", path, td.SpanCount())
	}
	return td, nil
}

// ForeignExpected holds the figures of one case of foreign/, spans in the shapes other
// instrumentations write (see the "Other instrumentations' timing" section of the README).
type ForeignExpected struct {
	Description  string    `json:"description"`
	Model        string    `json:"model"`
	Provider     string    `json:"provider"`
	ModelCalls   int       `json:"model_calls"`
	DurationS    []float64 `json:"duration_s"`
	TTFTS        []float64 `json:"ttft_s"`
	OutputTokens *int64    `json:"output_tokens"`
	Gaps         int       `json:"gaps"`
	StallSeries  bool      `json:"stall_series"`
	Malformed    bool      `json:"malformed"`
	ToleranceS   float64   `json:"tolerance_s"`
	Source       string    `json:"source"`
}

// Tolerance is the case's tolerance in seconds: its own where the source is coarser, else 1e-9.
func (e ForeignExpected) Tolerance() float64 { return max(e.ToleranceS, 1e-9) }

// ForeignCase is one case of foreign/: a whole trace.
type ForeignCase struct {
	Name     string
	Traces   ptrace.Traces
	Expected ForeignExpected
}

// LoadForeign reads every case of foreign/. A missing directory fails the test.
func LoadForeign(t testing.TB) []ForeignCase {
	t.Helper()
	dir := filepath.Join(Dir(), "foreign")
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatalf("reading the foreign expectations (testdata/golden/foreign): %v", err)
	}
	var doc struct {
		Cases map[string]ForeignExpected `json:"cases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("foreign/expected.json: %v", err)
	}
	var cases []ForeignCase
	for name, exp := range doc.Cases {
		td, err := ReadAllTraces(filepath.Join(dir, "cases", name+".otlp.json"))
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, ForeignCase{Name: name, Traces: td, Expected: exp})
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	if len(cases) == 0 {
		t.Fatalf("no foreign cases in %s", dir)
	}
	return cases
}

// ReadAllTraces reads one OTLP/JSON file with any number of spans.
func ReadAllTraces(path string) (ptrace.Traces, error) {
	td, err := readOTLP(path)
	if err != nil {
		return ptrace.Traces{}, err
	}
	if td.SpanCount() == 0 {
		return ptrace.Traces{}, fmt.Errorf("%s: no spans", path)
	}
	return td, nil
}

// readOTLP reads an OTLP/JSON traces file.
func readOTLP(path string) (ptrace.Traces, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return ptrace.Traces{}, err
	}
	var u ptrace.JSONUnmarshaler
	td, err := u.UnmarshalTraces(b)
	if err != nil {
		return ptrace.Traces{}, fmt.Errorf("%s: %w", path, err)
	}
	return td, nil
}

// testdata returns the repository's testdata directory.
func testdata() string { return filepath.Join(RepoDir(), "..") }

// WrittenExpected holds what the reader must find in a fixture written from an instrumentation's
// source code (testdata/written), for sources whose packages cannot run here.
type WrittenExpected struct {
	Source       string    `json:"source_url_or_path"`
	Versions     string    `json:"version_range"`
	Model        *string   `json:"model"`
	ModelCalls   int       `json:"model_calls"`
	DurationS    []float64 `json:"duration_s"`
	TTFTS        []float64 `json:"ttft_s"`
	TTFTSource   *string   `json:"ttft_source"`
	OutputTokens *int64    `json:"output_tokens"`
	Gaps         int       `json:"gaps"`
	StallSeries  bool      `json:"stall_series"`
	SpanKind     string    `json:"span_kind"`
	// Provider, when given, is the gen_ai.provider.name every model call is read under.
	Provider *string `json:"provider"`
}

// WrittenCase is one fixture of testdata/written.
type WrittenCase struct {
	Name     string
	Traces   ptrace.Traces
	Expected WrittenExpected
}

// LoadWritten reads every fixture of testdata/written.
func LoadWritten(t testing.TB) []WrittenCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testdata(), "written", "*.expected.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in testdata/written: %v", err)
	}
	var out []WrittenCase
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".expected.json")
		var exp WrittenExpected
		readJSON(t, f, &exp)
		td, err := ReadAllTraces(filepath.Join(filepath.Dir(f), name+".otlp.json"))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, WrittenCase{Name: name, Traces: td, Expected: exp})
	}
	return out
}

// Truth is what the capture program (tools/capture) measured around the stream its application
// consumed, on the clock the JavaScript SDK stamps spans with (integer Unix nanoseconds).
type Truth struct {
	Scenario        string            `json:"scenario"`
	Instrumentation string            `json:"instrumentation"`
	Packages        map[string]string `json:"packages"`
	Model           string            `json:"model"`
	Requests        []struct {
		Start           int64   `json:"start_unix_nano"`
		FirstChunk      int64   `json:"first_chunk_unix_nano"`
		Chunks          []int64 `json:"chunk_unix_nano"`
		End             int64   `json:"end_unix_nano"`
		FetchStart      int64   `json:"fetch_start_unix_nano"`
		ResponseHeaders int64   `json:"response_headers_unix_nano"`
		OutputTokens    int64   `json:"output_tokens"`
	} `json:"requests"`
}

// CapturedCase is one fixture of testdata/captured: the spans a real package exported, and the
// truth.
type CapturedCase struct {
	Name   string
	Traces ptrace.Traces
	Truth  Truth
}

// LoadCaptured reads every fixture of testdata/captured.
func LoadCaptured(t testing.TB) map[string]CapturedCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testdata(), "captured", "*.truth.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in testdata/captured: %v", err)
	}
	out := map[string]CapturedCase{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".truth.json")
		var truth Truth
		readJSON(t, f, &truth)
		td, err := ReadAllTraces(filepath.Join(filepath.Dir(f), name+".otlp.json"))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = CapturedCase{Name: name, Traces: td, Truth: truth}
	}
	return out
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// CapturedRead is what otelitl must read from a captured scenario: its model calls, the source of
// their time to first chunk ("" for none) and which truth instant it measures, and their output
// tokens in total (-1 for none).
type CapturedRead struct {
	Provider     string // gen_ai.provider.name as normalised; "" where the instrumentation names none
	ModelCalls   int
	TTFTSource   string
	TTFTTo       string // "first_chunk", or "headers": the first event of any kind, sent with the headers
	OutputTokens int64
	// CannotGive says what the instrumentation does not write, for the support matrix.
	CannotGive string
	// NoTTFT is how many of the model calls have no time to first chunk although TTFTSource is
	// written on them: Mastra's later steps, whose completion start time is the first step's.
	NoTTFT int
}

// Captured lists what each scenario of testdata/captured must read as; a scenario missing here
// fails the tests that walk the fixtures.
var Captured = map[string]CapturedRead{
	"vercel7-chat":        {"openai", 1, "gen_ai.client.operation.time_to_first_chunk", "first_chunk", 20, "per-gap ITL: time_per_output_chunk is the mean gap", 0},
	"vercel7-agent":       {"openai", 2, "gen_ai.client.operation.time_to_first_chunk", "first_chunk", 24, "per-gap ITL (a mean only); invoke_agent repeats its chat spans' usage", 0},
	"vercel7-legacy-text": {"openai", 1, "ai.response.msToFirstChunk", "first_chunk", 20, "per-gap ITL: avgOutputTokensPerSecond is a rate over the whole call", 0},
	"vercel6-text":        {"openai", 1, "ai.response.msToFirstChunk", "first_chunk", 20, "per-gap ITL: avgOutputTokensPerSecond is a rate over the whole call", 0},
	"vercel6-object":      {"openai", 1, "ai.stream.msToFirstChunk", "first_chunk", 20, "per-gap ITL", 0},
	"openllmetry-openai":  {"openai", 1, "", "", -1, "any timing and, for streams, any usage (JS; the Python package writes chunk events)", 0},
	// Two spans for the one request: OpenLLMetry's "chat {model}" and, its child, the span the
	// Anthropic SDK writes itself (0.134.0 and later, on by default), read with OpenLLMetry's scope
	// excluded (CapturedExcludedScopes): the SDK's, with its time to first chunk.
	"openllmetry-anthropic": {"anthropic", 1, "gen_ai.response.time_to_first_chunk", "first_chunk", 20,
		"per-gap ITL; on OpenLLMetry's own span, any timing: the TTFT is the Anthropic SDK's span's, a second model call for the request unless excluded_scopes names one of the two", 0},
	// One span per chain run (workflow, no model call) and one per model run: the chat span.
	"openllmetry-langchain": {"openai", 1, "", "", 20,
		"any timing: the model run's span has the run's model, provider and usage only", 0},
	// LangChain's chat span and the OpenAI instrumentation's for the one request (ChatOpenAI 1.5.8 on
	// openai 6), read with the OpenAI instrumentation's scope excluded: LangChain's, with the usage.
	"openllmetry-langchain-openai": {"openai", 1, "", "", 20,
		"any timing; with @traceloop/instrumentation-openai registered too, a second model call for the request (without usage) unless excluded_scopes names it", 0},
	"edot-openai": {"openai", 1, "", "", 20,
		"any timing: it writes the conventions' model, provider (gen_ai.system) and usage only", 0},
	"edot-openai-nousage": {"openai", 1, "", "", -1,
		"any timing, and usage when the request asks for no usage chunk (stream_options.include_usage)", 0},
	"openinference-openai": {"openai", 1, "", "", -1,
		"any timing (the First Token Stream Event is Python-only) and, for streams, any usage", 0},
	// OpenInference's LangChain tracer (JS) makes one span per LangChain run: the chain's
	// RunnableSequence and its StrOutputParser are CHAIN, the prompt template PROMPT, only
	// ChatOpenAI's run is LLM. It writes no First Token Stream Event (the JS tracer exports none of
	// a run's new_token events) and no llm.provider or llm.system (LangChain's ls_provider is only
	// inside its metadata JSON); the usage is the provider's (usage_metadata, from the
	// stream_options.include_usage chunk ChatOpenAI asks for).
	"openinference-langchain": {"", 1, "", "", 20,
		"any timing (no First Token Stream Event in JS), and the provider: ls_provider only inside the metadata JSON", 0},
	// OpenInference's span processor for the Vercel AI SDK marks AI SDK 6's outer ai.streamText
	// AGENT and only ai.streamText.doStream LLM (constants.ts VercelSDKFunctionNameToSpanKindMap),
	// and keeps the SDK's ai.* attributes: one model call, its time to first chunk AI SDK 6's.
	"openinference-vercel": {"openai", 1, "ai.response.msToFirstChunk", "first_chunk", 20,
		"per-gap ITL: the SDK's avgOutputTokensPerSecond, copied as metadata.ai.response.*, is a rate over the whole call", 0},
	// OpenInference's Anthropic instrumentation: one LLM span per messages.create, llm.provider and
	// llm.system anthropic, the stream's usage (message_start and message_delta), no timing. The
	// scenario turns off @anthropic-ai/sdk's own span (openTelemetry: false; on by default since
	// 0.134.0), which would be a second model call for the same request.
	"openinference-anthropic": {"anthropic", 1, "", "", 20,
		"any timing: no First Token Stream Event in JS (with @anthropic-ai/sdk >= 0.134 the SDK's own span, its child, has the time to first chunk)", 0},
	"langfuse-openai": {"", 1, "langfuse.observation.completion_start_time", "headers", 20,
		"a true TTFT: the OpenAI integration stamps the first streamed event of any kind, often a role-only event sent with the headers", 0},
	"openlit-openai": {"openai", 1, "", "", 20,
		"per-gap ITL (time_per_output_token is a mean); its TTFT is written only when above 0 ms and is timed from when iteration starts", 0},
	"otel-openai": {"openai", 1, "", "", 20,
		"any timing: it writes the conventions' model, provider (gen_ai.system) and usage only", 0},
	"otel-openai-nousage": {"openai", 1, "", "", -1,
		"any timing, and usage when the request asks for no usage chunk (stream_options.include_usage)", 0},
	"mastra-chat": {"openai", 1, "mastra.completion_start_time", "first_chunk", 20,
		"per-gap ITL; with core and observability that predate MODEL_INFERENCE, one model call per generation, not per request", 0},
	// Step 2's completion start time is step 1's first chunk, before its span starts: no TTFT,
	// and not malformed.
	"mastra-agent": {"openai", 2, "mastra.completion_start_time", "first_chunk", 24,
		"per-gap ITL; a TTFT for any step but the first (its completion start time is the first step's)", 1},
	// Strands writes its service name as gen_ai.system (no provider), and no TTFT on any span:
	// only as a metric, from Bedrock's timeToFirstByteMs.
	"strands-chat": {"", 1, "", "", 20,
		"any timing on a span (a TTFT only as a metric, from Bedrock), and the provider: gen_ai.system is its service name", 0},
	"strands-agent": {"", 2, "", "", 24,
		"any timing on a span (a TTFT only as a metric, from Bedrock), and the provider: gen_ai.system is its service name", 0},
	// invoke_graph and the node span repeat the call's usage: one model call, 20 tokens.
	"strands-graph": {"", 1, "", "", 20,
		"any timing on a span (a TTFT only as a metric, from Bedrock), and the provider: gen_ai.system is its service name", 0},
	// LangSmith JS writes a LangChain run's attributes on the span active when the run was created
	// (here the traceable's) and ends it at that run's end. Inside a chain that run is the prompt
	// template (langsmith.span.kind prompt, operation chat): no span stands for the model request.
	"langsmith-chain": {"", 0, "", "", -1,
		"a span per LangChain run: every run of a chain lands on the one enclosing span, which carries the first run to end (the prompt template's) and ends with it; no timing", 0},
	// A LangGraph agent's runs land on the one span too; the first to end is the graph's
	// __start__ node (kind chain, operation chain).
	"langsmith-agent": {"", 0, "", "", -1,
		"a span per LangGraph node or model request: every run lands on the one enclosing span, which carries the first run to end (__start__) and ends with it; no timing", 0},
	"langsmith-llm": {"openai", 1, "", "", 20,
		"any timing (no TTFT, no token events); inside a chain, the model call's span itself", 0},
	// Google ADK writes no timing on any span, and ADK's own name (gcp.vertex.agent) as
	// gen_ai.system on its call_llm spans: no provider.
	"adk-chat": {"", 1, "", "", 20,
		"any timing on a span, and the provider: gen_ai.system is ADK's tracer name, gcp.vertex.agent; a call's duration runs until the application has taken its reply, and the tools it asked for", 0},
	"adk-agent": {"", 2, "", "", 24,
		"any timing on a span, and the provider: gen_ai.system is ADK's tracer name, gcp.vertex.agent; a call's duration runs until the application has taken its reply, and the tools it asked for", 0},
	// The workflow's and the agent's execute_node spans carry gen_ai.operation.name execute_node:
	// one model call, the call_llm span.
	"adk-workflow": {"", 1, "", "", 20,
		"any timing on a span, and the provider: gen_ai.system is ADK's tracer name, gcp.vertex.agent; a call's duration runs until the application has taken its reply, and the tools it asked for", 0},
	// The OpenTelemetry JS AWS SDK instrumentation writes no timing, and a span for every AWS call:
	// bedrock-converse's ListAsyncInvokes span (rpc.service BedrockRuntime, no gen_ai.*) is no
	// model call. Its ConverseStream span (chat {model}) carries the conventions' provider
	// (gen_ai.system aws.bedrock) and the metadata event's usage.
	"bedrock-converse": {"aws.bedrock", 1, "", "", 20,
		"any timing: it writes the conventions' model, provider (gen_ai.system) and usage only, on a span that lasts until the application has drained the stream", 0},
	// InvokeModelWithResponseStream has no gen_ai.operation.name (it counts under the legacy
	// conventions' rule, gen_ai.system) and, for a Claude model, the output tokens of the stream's
	// message_start event (1), not message_delta's final count: the span's 1 is what it wrote, the
	// truth's 20 what the stream said.
	"bedrock-invoke": {"aws.bedrock", 1, "", "", 1,
		"any timing, the operation (InvokeModel spans have no gen_ai.operation.name) and, for a Claude stream, the output tokens: it writes message_start's count (1), not message_delta's", 0},
}

// CapturedExcludedScopes are the excluded_scopes a captured scenario is read with (Captured):
// where two instrumentations each wrote a model call for one request, the scope whose spans do
// not count, as the README's "Two instrumentations on one request" says to configure. Every other
// scenario is read with none. A scope named here may be another scenario's own (OpenLLMetry's
// OpenAI instrumentation is openllmetry-openai's): read each scenario with its own setting.
var CapturedExcludedScopes = map[string][]string{
	// @anthropic-ai/sdk 0.134.0 and later trace their own calls on the global tracer provider
	// (scope com.anthropic.sdk.typescript), with a time to first chunk OpenLLMetry's span lacks.
	"openllmetry-anthropic": {"@traceloop/instrumentation-anthropic"},
	// The OpenAI instrumentation's span for the request LangChain's chat span stands for: no usage.
	"openllmetry-langchain-openai": {"@traceloop/instrumentation-openai"},
}
