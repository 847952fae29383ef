package genaispan_test

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/internal/golden"
)

// capturedSpans returns the spans of a captured scenario (testdata/captured, made by tools/capture),
// a copy.
func capturedSpans(t *testing.T, scenario string) []ptrace.Span {
	t.Helper()
	cc, ok := golden.LoadCaptured(t)[scenario]
	if !ok {
		t.Fatalf("no captured fixture %s", scenario)
	}
	td := ptrace.NewTraces()
	cc.Traces.CopyTo(td)
	var spans []ptrace.Span
	pwalk.Spans(td, func(_ pcommon.Map, s ptrace.Span) { spans = append(spans, s) })
	return spans
}
