package itlprocessor

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelitl/itl/internal/benchspans"
	"github.com/otelitl/itl/internal/decode"
	"github.com/otelitl/itl/internal/golden"
)

// BenchmarkProcessSpan measures the processor per span: the annotate path on a 200-chunk
// generation span (per encoding), and the fast path on an ordinary span, which must not allocate.
func BenchmarkProcessSpan(b *testing.B) {
	p, err := newITLProcessor(processortest.NewNopSettings(Type), NewFactory().CreateDefaultConfig().(*Config))
	if err != nil {
		b.Fatal(err)
	}
	d := decode.New(decode.Config{})
	for _, enc := range []struct {
		name    string
		compact bool
	}{{"events", false}, {"compact", true}} {
		b.Run("path=annotate/enc="+enc.name, func(b *testing.B) {
			src := benchspans.Traces(1, 200, enc.compact).ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
			span := ptrace.NewSpan()
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				src.CopyTo(span) // annotating writes attributes: start each round from the original
				b.StartTimer()
				p.processSpan(context.Background(), d, span)
			}
		})
	}
	b.Run("path=fast", func(b *testing.B) {
		td, err := golden.ReadTraces(golden.Dir() + "/cases/not-genai.otlp.json")
		if err != nil {
			b.Fatal(err)
		}
		span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
		b.ReportAllocs()
		for b.Loop() {
			p.processSpan(context.Background(), d, span)
		}
	})
}
