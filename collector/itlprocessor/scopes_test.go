package itlprocessor

import (
	"bytes"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

// TestExcludedScopes: the spans of a scope named in excluded_scopes are no model calls, so they
// pass through byte-identical, even with drop_timeline (their timeline is not the request's
// record the processor keeps figures of); the spans of every other scope are annotated as before.
// In: a golden otelitl span with a timeline (scope "golden") and OpenLIT Python's span
// (testdata/written's openlit-python), whose time to first token the processor writes under the
// conventions' name.
func TestExcludedScopes(t *testing.T) {
	const openLIT = "openlit.otel.tracing"
	in := func(t *testing.T) ptrace.Traces {
		td := ptrace.NewTraces()
		goldenCase(t, "events-basic").ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
		var lit ptrace.Traces
		for _, wc := range golden.LoadWritten(t) {
			if wc.Name == "openlit-python" {
				lit = wc.Traces
			}
		}
		if n := lit.SpanCount(); n != 1 || lit.ResourceSpans().At(0).ScopeSpans().At(0).Scope().Name() != openLIT {
			t.Fatalf("openlit-python: %d spans, want one of scope %s", n, openLIT)
		}
		lit.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
		return td
	}
	for _, tc := range []struct {
		excluded []string
		changed  map[string]bool // by scope: annotated (and, for golden, its timeline dropped)
	}{
		{nil, map[string]bool{"golden": true, openLIT: true}},
		{[]string{openLIT}, map[string]bool{"golden": true, openLIT: false}},
		{[]string{"golden"}, map[string]bool{"golden": false, openLIT: true}},
		{[]string{openLIT, "golden"}, map[string]bool{"golden": false, openLIT: false}},
	} {
		h := newHarness(t, func(c *Config) { c.ExcludedScopes, c.DropTimeline = tc.excluded, true }, nil)
		before := in(t)
		td := ptrace.NewTraces()
		before.CopyTo(td)
		h.run(t, td)
		var orig []ptrace.Span
		pwalk.Spans(before, func(_ pcommon.Map, s ptrace.Span) { orig = append(orig, s) })
		out := h.sink.AllTraces()[0]
		for i := range out.ResourceSpans().Len() {
			ss := out.ResourceSpans().At(i).ScopeSpans().At(0)
			s, scope := ss.Spans().At(0), ss.Scope().Name()
			same := bytes.Equal(spanBytes(t, orig[i]), spanBytes(t, s))
			_, ttft := s.Attributes().Get(string(semconv.GenAIResponseTimeToFirstChunkKey))
			_, p99 := s.Attributes().Get(string(itlconv.GapP99Key))
			if tc.changed[scope] == same {
				t.Errorf("excluded_scopes %v: the span of scope %s changed %v, want %v", tc.excluded, scope, !same, tc.changed[scope])
			}
			if tc.changed[scope] && scope == "golden" && (!p99 || s.Events().Len() != 0) {
				t.Errorf("excluded_scopes %v: the golden span has p99 %v and %d events, want its figures and no timeline", tc.excluded, p99, s.Events().Len())
			}
			if tc.changed[scope] && scope == openLIT && !ttft {
				t.Errorf("excluded_scopes %v: OpenLIT's span has no %s", tc.excluded, semconv.GenAIResponseTimeToFirstChunkKey)
			}
		}
	}
}
