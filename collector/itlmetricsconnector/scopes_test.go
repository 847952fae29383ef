package itlmetricsconnector

import (
	"context"
	"maps"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

// The instrumentation scopes of the stacked request below: the one the Node application's
// OpenLLMetry writes (as captured), and the one otelitl-proxy's spans carry (otelitl.ScopeName).
const (
	openLLMetryScope = "@traceloop/instrumentation-openai"
	otelitlScope     = "github.com/otelitl/itl/otelitl"
)

// stackedRequest is one request that two instrumentations describe: the span OpenLLMetry JS
// exported for a streamed chat call (tools/capture's openllmetry-openai), and, in the same trace
// and within its time, the span otelitl-proxy writes for the same request on its way to the model,
// with a timeline of five chunks. Each is a model call on its own.
func stackedRequest(t *testing.T) (td ptrace.Traces, model string) {
	t.Helper()
	cc := golden.LoadCaptured(t)["openllmetry-openai"]
	td = ptrace.NewTraces()
	cc.Traces.CopyTo(td)
	if n := td.SpanCount(); n != 1 {
		t.Fatalf("openllmetry-openai holds %d spans, want its one chat span", n)
	}
	app := td.ResourceSpans().At(0).ScopeSpans().At(0)
	if app.Scope().Name() != openLLMetryScope {
		t.Fatalf("openllmetry-openai's scope is %q, want %q", app.Scope().Name(), openLLMetryScope)
	}
	call := app.Spans().At(0)
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "otelitl-proxy")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(otelitlScope)
	s := ss.Spans().AppendEmpty()
	s.SetTraceID(call.TraceID())
	s.SetParentSpanID(call.SpanID()) // through the application's HTTP client span, in life
	s.SetSpanID(pcommon.SpanID{0xb0, 1})
	s.SetKind(ptrace.SpanKindClient)
	start := call.StartTimestamp().AsTime().Add(time.Millisecond)
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(200 * time.Millisecond)))
	model = cc.Truth.Model
	a := s.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.provider.name", "openai")
	a.PutStr("gen_ai.request.model", model)
	offs := a.PutEmptySlice(string(itlconv.ChunkOffsetsKey))
	for _, us := range []int64{50_000, 80_000, 110_000, 140_000, 170_000} {
		offs.AppendEmpty().SetInt(us)
	}
	return td, model
}

// TestExcludedScopes: two instrumentations on one request (an application's LLM instrumentation
// and otelitl-proxy, or a framework's and its SDK's) write two model calls, and the connector
// counts the request twice: two generations, two durations. Naming one instrumentation's scope
// in excluded_scopes counts it once, with the figures of the other; the spans of other scopes
// are read as before.
func TestExcludedScopes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		excluded []string
		calls    uint64 // duration observations, one per model call
		gaps     uint64 // the proxy's timeline: 4 gaps
		timing   map[string]int64
	}{
		{"none excluded: the request counts twice", nil, 2, 4, map[string]int64{"timeline": 1, "none": 1}},
		{"the application's instrumentation excluded", []string{openLLMetryScope}, 1, 4, map[string]int64{"timeline": 1}},
		{"the proxy's excluded", []string{"some.other.scope", otelitlScope}, 1, 0, map[string]int64{"none": 1}},
		{"another scope excluded", []string{"some.other.scope"}, 2, 4, map[string]int64{"timeline": 1, "none": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			td, model := stackedRequest(t)
			sink := new(consumertest.MetricsSink)
			c := newTestConnector(t, func(cfg *Config) { cfg.ExcludedScopes = tc.excluded }, sink)
			if err := c.ConsumeTraces(context.Background(), td); err != nil {
				t.Fatal(err)
			}
			if err := c.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			md := sink.AllMetrics()[0]
			var calls, gaps uint64
			for name, n := range map[string]*uint64{itlconv.Duration.Name: &calls, itlconv.TimePerOutputChunk.Name: &gaps} {
				forMetric(md, name, func(m pmetric.Metric) {
					for i := range m.Histogram().DataPoints().Len() {
						dp := m.Histogram().DataPoints().At(i)
						if str(dp.Attributes(), "gen_ai.request.model") != model {
							t.Errorf("%s: a point of model %q, want %q", name, str(dp.Attributes(), "gen_ai.request.model"), model)
						}
						*n += dp.Count()
					}
				})
			}
			if calls != tc.calls || gaps != tc.gaps {
				t.Errorf("%d model calls and %d gaps, want %d and %d", calls, gaps, tc.calls, tc.gaps)
			}
			checkTiming(t, md, tc.timing)
		})
	}
}

// TestNestedModelCalls: a client model call whose parent span is another client model call of the
// same request is counted in otelcol_connector_itl_metrics_spans_nested and logged, at most once a
// minute, with both scopes and the fix: two instrumentations describe one request, which the
// connector counts twice. Siblings, a SERVER span above its own CLIENT span, and a pair one of
// whose scopes is excluded are no such pair; more than 16 model calls in a request take the index.
func TestNestedModelCalls(t *testing.T) {
	sibling := func(td ptrace.Traces, parent pcommon.SpanID, id byte, kind ptrace.SpanKind) ptrace.Span {
		s := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
		s.Scope().SetName("sdk.instrumentation")
		span := s.Spans().AppendEmpty()
		span.SetTraceID(pcommon.TraceID{0xc0})
		span.SetSpanID(pcommon.SpanID{0xc0, id})
		span.SetParentSpanID(parent)
		span.SetKind(kind)
		span.SetStartTimestamp(1_800_000_000_000_000_000)
		span.SetEndTimestamp(1_800_000_000_500_000_000)
		span.Attributes().PutStr("gen_ai.operation.name", "chat")
		span.Attributes().PutStr("gen_ai.request.model", "m")
		return span
	}
	for _, tc := range []struct {
		name     string
		excluded []string
		traces   func(t *testing.T) ptrace.Traces
		want     int64
		scopes   [2]string // outer, inner
	}{
		{"OpenLLMetry's span above the proxy's", nil, func(t *testing.T) ptrace.Traces { td, _ := stackedRequest(t); return td }, 1, [2]string{openLLMetryScope, otelitlScope}},
		{"the same, OpenLLMetry's scope excluded", []string{openLLMetryScope}, func(t *testing.T) ptrace.Traces { td, _ := stackedRequest(t); return td }, 0, [2]string{}},
		{"two siblings under a span that is no model call", nil, func(t *testing.T) ptrace.Traces {
			td := ptrace.NewTraces()
			sibling(td, pcommon.SpanID{0xaa}, 1, ptrace.SpanKindClient)
			sibling(td, pcommon.SpanID{0xaa}, 2, ptrace.SpanKindClient)
			return td
		}, 0, [2]string{}},
		{"a gateway's SERVER span above its CLIENT span", nil, func(t *testing.T) ptrace.Traces {
			td := ptrace.NewTraces()
			server := sibling(td, pcommon.SpanID{}, 1, ptrace.SpanKindServer)
			sibling(td, server.SpanID(), 2, ptrace.SpanKindClient)
			return td
		}, 0, [2]string{}},
		{"one pair among 40 model calls", nil, func(t *testing.T) ptrace.Traces {
			td := ptrace.NewTraces()
			for i := range 39 {
				sibling(td, pcommon.SpanID{0xaa}, byte(i+1), ptrace.SpanKindClient)
			}
			sibling(td, pcommon.SpanID{0xc0, 7}, 100, ptrace.SpanKindClient)
			return td
		}, 1, [2]string{"sdk.instrumentation", "sdk.instrumentation"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestConnector(t, func(cfg *Config) { cfg.ExcludedScopes = tc.excluded }, new(consumertest.MetricsSink))
			core, logs := observer.New(zap.WarnLevel)
			c.logger = zap.New(core)
			for range 2 {
				if err := c.ConsumeTraces(context.Background(), tc.traces(t)); err != nil {
					t.Fatal(err)
				}
			}
			if n := ownTotal(t, c, "otelcol_connector_itl_metrics_spans_nested"); n != 2*tc.want {
				t.Errorf("%d nested model calls counted over two requests, want %d", n, 2*tc.want)
			}
			entries := logs.FilterMessageSnippet("excluded_scopes").All()
			if tc.want == 0 {
				if len(entries) != 0 {
					t.Errorf("logged %q, want nothing", entries[0].Message)
				}
				return
			}
			if len(entries) != 1 {
				t.Fatalf("%d log lines over two requests within a minute, want 1", len(entries))
			}
			f := entries[0].ContextMap()
			if f["outer_scope"] != tc.scopes[0] || f["inner_scope"] != tc.scopes[1] {
				t.Errorf("logged scopes %v and %v, want %v", f["outer_scope"], f["inner_scope"], tc.scopes)
			}
		})
	}
}

// TestExcludedScopesCaptured: two instrumentations on one request, as the real packages wrote
// them (tools/capture). With OpenLLMetry's Anthropic instrumentation registered, the Anthropic SDK
// (0.134.0 and later) still traces its own calls on the global tracer provider
// (openllmetry-anthropic): OpenLLMetry's "chat {model}", with no timing, and its child, the SDK's
// "anthropic.messages.create", with a time to first chunk. With OpenLLMetry's LangChain and OpenAI
// instrumentations registered and a ChatOpenAI on openai 6 (openllmetry-langchain-openai), each
// writes a "chat {model}" for the request, the OpenAI one without usage. The connector counts
// each request twice; excluding the scope the README's table names counts it once, with the
// other's figures.
func TestExcludedScopesCaptured(t *testing.T) {
	const (
		anthropicSDK = "com.anthropic.sdk.typescript"
		langChain    = "@traceloop/instrumentation-langchain"
	)
	cases := golden.LoadCaptured(t)
	for _, tc := range []struct {
		scenario, name string
		excluded       []string
		calls          uint64
		tokens         float64 // output tokens in all; -1: none recorded
		timing         map[string]int64
	}{
		{"openllmetry-anthropic", "none excluded: the request counts twice", nil, 2, 40, map[string]int64{"ttft": 1, "none": 1}},
		{"openllmetry-anthropic", "OpenLLMetry's excluded", []string{"@traceloop/instrumentation-anthropic"}, 1, 20, map[string]int64{"ttft": 1}},
		{"openllmetry-anthropic", "the SDK's excluded", []string{anthropicSDK}, 1, 20, map[string]int64{"none": 1}},
		{"openllmetry-langchain-openai", "none excluded: the request counts twice", nil, 2, 20, map[string]int64{"none": 2}},
		{"openllmetry-langchain-openai", "the OpenAI instrumentation's excluded", []string{openLLMetryScope}, 1, 20, map[string]int64{"none": 1}},
		{"openllmetry-langchain-openai", "LangChain's excluded", []string{langChain}, 1, -1, map[string]int64{"none": 1}},
	} {
		t.Run(tc.scenario+"/"+tc.name, func(t *testing.T) {
			cc, ok := cases[tc.scenario]
			if !ok {
				t.Fatalf("no captured fixture %s", tc.scenario)
			}
			sink := new(consumertest.MetricsSink)
			c := newTestConnector(t, func(cfg *Config) { cfg.ExcludedScopes = tc.excluded }, sink)
			if err := c.ConsumeTraces(context.Background(), cc.Traces); err != nil {
				t.Fatal(err)
			}
			if err := c.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			md := sink.AllMetrics()[0]
			// Summed over every point: the two spans may differ in attributes beyond the model
			// (the Anthropic SDK's names the server), and then each has points of its own.
			var calls uint64
			tokens, hasTokens := 0.0, false
			forMetric(md, itlconv.Duration.Name, func(m pmetric.Metric) {
				for i := range m.Histogram().DataPoints().Len() {
					dp := m.Histogram().DataPoints().At(i)
					if str(dp.Attributes(), "gen_ai.request.model") != cc.Truth.Model {
						t.Errorf("a duration point of model %q, want %q", str(dp.Attributes(), "gen_ai.request.model"), cc.Truth.Model)
					}
					calls += dp.Count()
				}
			})
			forMetric(md, itlconv.TokenUsage.Name, func(m pmetric.Metric) {
				for i := range m.Histogram().DataPoints().Len() {
					if dp := m.Histogram().DataPoints().At(i); str(dp.Attributes(), "gen_ai.token.type") == "output" {
						tokens, hasTokens = tokens+dp.Sum(), true
					}
				}
			})
			if !hasTokens {
				tokens = -1
			}
			if calls != tc.calls || tokens != tc.tokens {
				t.Errorf("%d model calls and %v output tokens, want %d and %v", calls, tokens, tc.calls, tc.tokens)
			}
			checkTiming(t, md, tc.timing)
		})
	}
}

// TestNestedCheckHostile: a request of many model calls that all carry one trace and span ID (a
// client's bug, or an attack) takes one slot of the nested check's index, where each copy took a
// slot of its own, all in one chain of probes: a check quadratic in the calls (1.25 billion probes
// for these 50,000). Each copy still finds its parent, the span's ID.
func TestNestedCheckHostile(t *testing.T) {
	c := newTestConnector(t, nil, new(consumertest.MetricsSink))
	b := c.newBatch()
	for range 50_000 {
		b.calls = append(b.calls, callRef{trace: pcommon.TraceID{1}, span: pcommon.SpanID{2}, parent: pcommon.SpanID{2}})
	}
	b.index.fill(b.calls)
	used := 0
	for _, s := range b.index.slots {
		if s != 0 {
			used++
		}
	}
	if used != 1 {
		t.Errorf("50,000 copies of one span take %d slots of the index, want 1", used)
	}
	c.checkNested(context.Background(), b)
	if n := ownTotal(t, c, "otelcol_connector_itl_metrics_spans_nested"); n != 50_000 {
		t.Errorf("%d nested model calls, want 50000 (each copy's parent is the span's ID)", n)
	}
}

// checkTiming fails unless md's generations, by otelitl.timing over every series, are want.
func checkTiming(t *testing.T, md pmetric.Metrics, want map[string]int64) {
	t.Helper()
	got := map[string]int64{}
	for k, v := range sumPoints(md, itlconv.Generations.Name, itlconv.TimingKey) {
		got[k.extraVal] += v
	}
	if !maps.Equal(got, want) {
		t.Errorf("generations by timing %v, want %v", got, want)
	}
}
