package genaispan_test

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

// langSmithSpan returns a copy of the one span of the captured scenario (tools/capture): the
// traceable's span, on which LangSmith wrote a LangChain run.
func langSmithSpan(t *testing.T, scenario string) ptrace.Span {
	t.Helper()
	spans := capturedSpans(t, scenario)
	if len(spans) != 1 {
		t.Fatalf("%d spans in %s, want 1", len(spans), scenario)
	}
	return spans[0]
}

// TestLangSmithModelCalls: LangSmith writes gen_ai.operation.name from the run type, chat for a
// prompt template and embeddings for a retriever too, and the run type itself (chain, parser, ...)
// for the rest; a span with langsmith.span.kind is a model call only for the kinds llm and
// embedding, whatever excluded_operations says of the others. In a chain the captured span carries
// the prompt template's run (operation chat), in a LangGraph agent the __start__ node's (operation
// chain): each counted as a model call of a few ms before, without a model.
func TestLangSmithModelCalls(t *testing.T) {
	for _, scenario := range []string{"langsmith-chain", "langsmith-agent"} {
		if c := genaispan.New(genaispan.Config{}).Read(langSmithSpan(t, scenario), false); c.ModelCall {
			t.Errorf("the %s span (a prompt template's or a graph node's run) is a model call of model %q", scenario, c.Model)
		}
	}
	llm := langSmithSpan(t, "langsmith-llm")
	for _, tc := range []struct {
		kind, op string
		want     bool
	}{
		{"llm", "chat", true},
		{"embedding", "embeddings", true},
		{"prompt", "chat", false},
		{"retriever", "embeddings", false},
		{"chain", "chain", false},
		{"parser", "parser", false},
		{"tool", "execute_tool", false},
		{"LLM", "chat", false},
	} {
		for _, excluded := range [][]string{nil, {}} {
			s := ptrace.NewSpan()
			llm.CopyTo(s)
			s.Attributes().PutStr(itlconv.LangSmithSpanKindKey, tc.kind)
			s.Attributes().PutStr("gen_ai.operation.name", tc.op)
			if got := genaispan.New(genaispan.Config{ExcludedOperations: excluded}).Read(s, false).ModelCall; got != tc.want {
				t.Errorf("kind %s, operation %s, excluded_operations %v: model call %v, want %v", tc.kind, tc.op, excluded, got, tc.want)
			}
		}
	}
	// An excluded operation stays excluded on an llm run.
	if genaispan.New(genaispan.Config{ExcludedOperations: []string{"chat"}}).Read(llm, false).ModelCall {
		t.Error("an llm run of operation chat counts although excluded_operations names chat")
	}
	// Without langsmith.span.kind the general rule holds: an operation chain counts.
	s := ptrace.NewSpan()
	s.SetStartTimestamp(1_000_000_000)
	s.SetEndTimestamp(2_000_000_000)
	s.Attributes().PutStr("gen_ai.operation.name", "chain")
	if !genaispan.New(genaispan.Config{}).Read(s, false).ModelCall {
		t.Error("a span of operation chain without langsmith.span.kind is no model call")
	}
}

// TestLangSmithProviderAndUsage: the provider is the run's ls_provider (gen_ai.system is a guess
// from the model's name, "langchain" for cap-langsmith-llm), the usage langsmith.usage_metadata's
// input_tokens and output_tokens; gen_ai.usage.* come first when written, and usage metadata that
// is no JSON object of counts is malformed.
func TestLangSmithProviderAndUsage(t *testing.T) {
	c := genaispan.New(genaispan.Config{}).Read(langSmithSpan(t, "langsmith-llm"), false)
	if !c.ModelCall || c.Model != "cap-langsmith-llm" || c.Provider != "openai" {
		t.Fatalf("model call %v, model %q, provider %q: want cap-langsmith-llm of openai", c.ModelCall, c.Model, c.Provider)
	}
	if !c.Figures.HasOutputTokens || c.Figures.OutputTokens != 20 || !c.HasInputTokens || c.InputTokens != 10 {
		t.Errorf("tokens out %d (%v), in %d (%v): want 20 and 10 from %s", c.Figures.OutputTokens, c.Figures.HasOutputTokens, c.InputTokens, c.HasInputTokens, itlconv.LangSmithUsageKey)
	}
	if c.Figures.HasTTFT || len(c.Malformed()) > 0 {
		t.Errorf("time to first chunk %v (%v), malformed %v: LangSmith writes no timing", c.Figures.TTFT, c.Figures.HasTTFT, c.Malformed())
	}
	for _, tc := range []struct {
		name string
		set  func(a pcommon.Map)
		out  int64 // -1: none
		bad  bool
	}{
		{"gen_ai.usage comes first", func(a pcommon.Map) { a.PutInt("gen_ai.usage.output_tokens", 7) }, 7, false},
		{"no output count", func(a pcommon.Map) { a.PutStr(itlconv.LangSmithUsageKey, `{"input_tokens":10}`) }, -1, false},
		{"not JSON", func(a pcommon.Map) { a.PutStr(itlconv.LangSmithUsageKey, `20`) }, -1, true},
		{"negative", func(a pcommon.Map) { a.PutStr(itlconv.LangSmithUsageKey, `{"output_tokens":-1}`) }, -1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := langSmithSpan(t, "langsmith-llm")
			tc.set(s.Attributes())
			c := genaispan.New(genaispan.Config{}).Read(s, false)
			if tc.out < 0 && c.Figures.HasOutputTokens || tc.out >= 0 && (!c.Figures.HasOutputTokens || c.Figures.OutputTokens != tc.out) {
				t.Errorf("output tokens %d (%v), want %d", c.Figures.OutputTokens, c.Figures.HasOutputTokens, tc.out)
			}
			if bad := len(c.Malformed()) > 0; bad != tc.bad {
				t.Errorf("malformed %v, want malformed %v", c.Malformed(), tc.bad)
			}
		})
	}
	// ls_provider comes after gen_ai.provider.name and before gen_ai.system.
	s := langSmithSpan(t, "langsmith-llm")
	s.Attributes().PutStr("gen_ai.provider.name", "anthropic")
	if p := genaispan.New(genaispan.Config{}).Read(s, false).Provider; p != "anthropic" {
		t.Errorf("provider %q with gen_ai.provider.name anthropic, want anthropic", p)
	}
}

// writtenSpans returns a copy of the spans of a fixture of testdata/written.
func writtenSpans(t *testing.T, name string) []ptrace.Span {
	t.Helper()
	for _, wc := range golden.LoadWritten(t) {
		if wc.Name == name {
			var spans []ptrace.Span
			pwalk.Spans(wc.Traces, func(_ pcommon.Map, s ptrace.Span) {
				c := ptrace.NewSpan()
				s.CopyTo(c)
				spans = append(spans, c)
			})
			return spans
		}
	}
	t.Fatalf("no written fixture %s", name)
	return nil
}

// langChainProviders are the ls_provider values LangChain's chat models write (getLsParams in the
// JS packages' dist files, see itlconv.LangSmithProviderKey) and LangSmith Python's own
// integrations, with the conventions' gen_ai.provider.name each stands for; a value of no
// convention's name stays as written.
var langChainProviders = []struct{ ls, want string }{
	{"openai", "openai"},
	{"anthropic", "anthropic"},
	{"azure", "azure.ai.openai"},
	{"google_vertexai", "gcp.vertex_ai"},
	{"google_genai", "gcp.gemini"},
	{"google_ai", "gcp.gemini"},
	{"amazon_bedrock", "aws.bedrock"},
	{"bedrock", "aws.bedrock"},
	{"mistral", "mistral_ai"},
	{"groq", "groq"},
	{"cohere", "cohere"},
	{"deepseek", "deepseek"},
	{"xai", "x_ai"},
	{"watsonx", "ibm.watsonx.ai"},
	{"Perplexity", "perplexity"},
	{"ollama", "ollama"},
	{"fireworks", "fireworks"},
	{"together", "together"},
	{"cerebras", "cerebras"},
	{"novita", "novita"},
}

// TestLangSmithProviderNames: the provider LangSmith writes as langsmith.metadata.ls_provider is
// LangChain's id of the chat model class (google_vertexai, amazon_bedrock, ...); it is read as the
// conventions' name where there is one, on the JS span (langsmith-llm) and on LangSmith Python's
// llm span alike. Before, every id but openai, anthropic, groq, cohere and deepseek (the
// conventions' own) and azure, mistral and xai (which other instrumentations write too) was
// reported as written: google_vertexai for gcp.vertex_ai, amazon_bedrock for aws.bedrock.
func TestLangSmithProviderNames(t *testing.T) {
	var python ptrace.Span
	for _, s := range writtenSpans(t, "langsmith-python-chain") {
		if s.Name() == "ChatOpenAI" {
			python = s
		}
	}
	for name, span := range map[string]ptrace.Span{"js": langSmithSpan(t, "langsmith-llm"), "python": python} {
		for _, tc := range langChainProviders {
			s := ptrace.NewSpan()
			span.CopyTo(s)
			s.Attributes().PutStr(itlconv.LangSmithProviderKey, tc.ls)
			if c := genaispan.New(genaispan.Config{}).Read(s, false); !c.ModelCall || c.Provider != tc.want {
				t.Errorf("%s: ls_provider %q: model call %v, provider %q, want %q", name, tc.ls, c.ModelCall, c.Provider, tc.want)
			}
		}
	}
}

// TestLangChainProviderNamesOnlyOnLangSmith: LangChain's ids are mapped only where LangSmith wrote
// them (langsmith.span.kind beside ls_provider): another instrumentation's gen_ai.system or
// gen_ai.provider.name of the same spelling stays as written, and so does ls_provider on a span
// without langsmith.span.kind; gen_ai.provider.name still comes before ls_provider.
func TestLangChainProviderNamesOnlyOnLangSmith(t *testing.T) {
	for _, key := range []string{"gen_ai.system", "gen_ai.provider.name", itlconv.LangSmithProviderKey} {
		for _, ls := range []string{"google_vertexai", "google_genai", "amazon_bedrock", "watsonx", "Perplexity"} {
			s := ptrace.NewSpan()
			s.SetStartTimestamp(1_000_000_000)
			s.SetEndTimestamp(2_000_000_000)
			s.Attributes().PutStr("gen_ai.operation.name", "chat")
			s.Attributes().PutStr(key, ls)
			if p := genaispan.New(genaispan.Config{}).Read(s, false).Provider; p != ls {
				t.Errorf("%s %q on a span without %s: provider %q, want it as written", key, ls, itlconv.LangSmithSpanKindKey, p)
			}
		}
	}
	s := langSmithSpan(t, "langsmith-llm")
	s.Attributes().PutStr(itlconv.LangSmithProviderKey, "google_vertexai")
	s.Attributes().PutStr("gen_ai.provider.name", "google_genai")
	if p := genaispan.New(genaispan.Config{}).Read(s, false).Provider; p != "google_genai" {
		t.Errorf("gen_ai.provider.name google_genai beside ls_provider google_vertexai: provider %q, want google_genai as written", p)
	}
}

// adkLLMSpan returns a copy of the llm span of the written fixture langsmith-python-adk (LangSmith
// Python's Google ADK integration).
func adkLLMSpan(t *testing.T) ptrace.Span {
	t.Helper()
	for _, s := range writtenSpans(t, "langsmith-python-adk") {
		if v, _ := s.Attributes().Get(itlconv.LangSmithSpanKindKey); v.Str() == "llm" {
			return s
		}
	}
	t.Fatal("no llm span in langsmith-python-adk")
	return ptrace.Span{}
}

// TestLangSmithTimeToFirstToken: LangSmith Python's Google ADK integration writes the seconds from
// its llm run's start (the span's) to the first partial event as the metadata time_to_first_token,
// exported as langsmith.metadata.time_to_first_token, and the usage as the JSON metadata
// usage_metadata (langsmith.metadata.usage_metadata): both were ignored, so a streamed ADK call
// through LangSmith had no TTFT and no tokens. A value that is no number, negative or past the
// span's end is malformed, as every seconds source's; on a span without langsmith.span.kind the
// key is not read.
func TestLangSmithTimeToFirstToken(t *testing.T) {
	c := genaispan.New(genaispan.Config{}).Read(adkLLMSpan(t), false)
	if !c.ModelCall || c.Model != "gemini-2.5-flash" || c.Provider != "gcp.gemini" {
		t.Fatalf("model call %v, model %q, provider %q: want gemini-2.5-flash of gcp.gemini", c.ModelCall, c.Model, c.Provider)
	}
	if !c.Figures.HasTTFT || c.Figures.TTFT != 0.4168253421783447 || c.TTFTSource != itlconv.LangSmithTimeToFirstTokenKey {
		t.Errorf("time to first chunk %v (%v) from %q, want 0.4168253421783447 from %s", c.Figures.TTFT, c.Figures.HasTTFT, c.TTFTSource, itlconv.LangSmithTimeToFirstTokenKey)
	}
	if !c.Figures.HasOutputTokens || c.Figures.OutputTokens != 8 || !c.HasInputTokens || c.InputTokens != 21 {
		t.Errorf("tokens out %d (%v), in %d (%v): want 8 and 21 from %s", c.Figures.OutputTokens, c.Figures.HasOutputTokens, c.InputTokens, c.HasInputTokens, itlconv.LangSmithMetadataUsageKey)
	}
	if len(c.Malformed()) > 0 {
		t.Errorf("malformed %v", c.Malformed())
	}
	for _, tc := range []struct {
		name string
		set  func(s ptrace.Span)
		ttft bool
		bad  bool
	}{
		{"an integer", func(s ptrace.Span) { s.Attributes().PutInt(itlconv.LangSmithTimeToFirstTokenKey, 1) }, true, false},
		{"a string", func(s ptrace.Span) { s.Attributes().PutStr(itlconv.LangSmithTimeToFirstTokenKey, "0.41") }, false, true},
		{"negative", func(s ptrace.Span) { s.Attributes().PutDouble(itlconv.LangSmithTimeToFirstTokenKey, -0.1) }, false, true},
		{"past the end", func(s ptrace.Span) { s.Attributes().PutDouble(itlconv.LangSmithTimeToFirstTokenKey, 2) }, false, true},
		{"gen_ai.response.time_to_first_chunk first", func(s ptrace.Span) { s.Attributes().PutDouble("gen_ai.response.time_to_first_chunk", 0.5) }, true, false},
		{"not LangSmith's", func(s ptrace.Span) { s.Attributes().Remove(itlconv.LangSmithSpanKindKey) }, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := adkLLMSpan(t)
			tc.set(s)
			c := genaispan.New(genaispan.Config{}).Read(s, false)
			if !c.ModelCall {
				t.Fatal("no model call")
			}
			if c.Figures.HasTTFT != tc.ttft {
				t.Errorf("time to first chunk %v (%v) from %q, want one: %v", c.Figures.TTFT, c.Figures.HasTTFT, c.TTFTSource, tc.ttft)
			}
			if bad := len(c.Malformed()) > 0; bad != tc.bad {
				t.Errorf("malformed %v, want malformed %v", c.Malformed(), tc.bad)
			}
		})
	}
	// gen_ai.usage.* and langsmith.usage_metadata (LangSmith JS's) come before the metadata's.
	s := adkLLMSpan(t)
	s.Attributes().PutStr(itlconv.LangSmithUsageKey, `{"output_tokens":5}`)
	if c := genaispan.New(genaispan.Config{}).Read(s, false); c.Figures.OutputTokens != 5 {
		t.Errorf("output tokens %d with %s 5 beside the metadata's 8, want 5", c.Figures.OutputTokens, itlconv.LangSmithUsageKey)
	}
}

// TestLangSmithGuessedProvider: without ls_provider, LangSmith JS writes as gen_ai.system a guess
// from the model's name (setGenAiSystem in lib/experimental/otel/translator.js of langsmith 0.12),
// "langchain" when the name says nothing. "langchain" names no provider, so the span has none;
// the other guesses are the conventions' names of 1.34 and earlier, read as today's. "langchain"
// on a span LangSmith did not write stays as written.
func TestLangSmithGuessedProvider(t *testing.T) {
	for guess, want := range map[string]string{
		"langchain": "", "az.ai.openai": "azure.ai.openai", "az.ai.inference": "azure.ai.inference",
		"gemini": "gcp.gemini", "vertex_ai": "gcp.vertex_ai", "xai": "x_ai", "anthropic": "anthropic", "aws.bedrock": "aws.bedrock",
	} {
		s := langSmithSpan(t, "langsmith-llm")
		s.Attributes().Remove(itlconv.LangSmithProviderKey)
		s.Attributes().PutStr("gen_ai.system", guess)
		if p := genaispan.New(genaispan.Config{}).Read(s, false).Provider; p != want {
			t.Errorf("LangSmith's guess %q without ls_provider: provider %q, want %q", guess, p, want)
		}
		o := ptrace.NewSpan()
		o.SetStartTimestamp(1_000_000_000)
		o.SetEndTimestamp(2_000_000_000)
		o.Attributes().PutStr("gen_ai.operation.name", "chat")
		o.Attributes().PutStr("gen_ai.system", guess)
		elsewhere := want // the old conventions' names are read so on every span
		if guess == "langchain" {
			elsewhere = guess
		}
		if p := genaispan.New(genaispan.Config{}).Read(o, false).Provider; p != elsewhere {
			t.Errorf("gen_ai.system %q on a span without %s: provider %q, want %q", guess, itlconv.LangSmithSpanKindKey, p, elsewhere)
		}
	}
}
