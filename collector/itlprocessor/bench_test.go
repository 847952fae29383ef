package itlprocessor

import (
	"context"
	"runtime"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/internal/benchspans"
	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

// BenchmarkProcessSpan measures the processor per span: the annotate path on a 200-chunk
// generation span (per encoding), and the fast path on an ordinary span, which must not allocate.
func BenchmarkProcessSpan(b *testing.B) {
	p, err := newITLProcessor(processortest.NewNopSettings(Type), NewFactory().CreateDefaultConfig().(*Config))
	if err != nil {
		b.Fatal(err)
	}
	d := genaispan.New(genaispan.Config{})
	for _, enc := range []struct {
		name    string
		compact bool
	}{{"events", false}, {"compact", true}} {
		b.Run("path=annotate/enc="+enc.name, func(b *testing.B) {
			// 256 different replies, copied in turn: on one reply processed again and again, the
			// CPU's branch predictor would learn the selection's comparisons by heart.
			srcs, next := benchspans.Traces(256, 200, enc.compact).ResourceSpans().At(0).ScopeSpans().At(0).Spans(), 0
			// Annotating writes attributes, so every round starts from a fresh copy of the original.
			// Copies are made spanSlots at a time: stopping the timer reads the runtime's memory
			// statistics, which stops the world, and once per span that would dominate the run.
			// A copy of a compact span allocates a pdata value per chunk; with the timer stopped,
			// the garbage of the previous copies is collected too, so that the background GC they
			// would start is not charged to the processor (in a pipeline that cost is the
			// receiver's, which decodes the span). 32 spans stay warm in the caches, as a request
			// of 100 spans just decoded by the receiver is.
			const spanSlots = 32
			spans := make([]ptrace.Span, spanSlots)
			for k := range spans {
				spans[k] = ptrace.NewSpan()
			}
			k := spanSlots
			b.ReportAllocs()
			for b.Loop() {
				if k == spanSlots {
					b.StopTimer()
					for _, s := range spans {
						srcs.At(next % srcs.Len()).CopyTo(s)
						next++
					}
					runtime.GC()
					k = 0
					b.StartTimer()
				}
				p.processSpan(context.Background(), d, spans[k])
				k++
			}
		})
	}
	// A span of otelitl's client carrying its figures: the processor checks them and keeps them,
	// reading no arrival (keep_client_figures).
	for _, enc := range []struct {
		name    string
		compact bool
	}{{"events", false}, {"compact", true}} {
		b.Run("path=keep/enc="+enc.name, func(b *testing.B) {
			td := benchspans.Traces(1, 200, enc.compact)
			ss := td.ResourceSpans().At(0).ScopeSpans().At(0)
			ss.Scope().SetName(itlconv.ClientScope)
			span := ss.Spans().At(0)
			p.processSpan(context.Background(), d, span) // writes the figures, as the client does
			if !p.keeps(ss.Scope(), span) {
				b.Fatal("the span's figures are not kept")
			}
			b.ReportAllocs()
			for b.Loop() {
				p.keeps(ss.Scope(), span)
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
	// An ordinary HTTP server span, as most of a collector's traffic is: every attribute is looked
	// at once, since any of several conventions' keys can mark a model call.
	b.Run("path=fast-http", func(b *testing.B) {
		span := ptrace.NewSpan()
		span.SetKind(ptrace.SpanKindServer)
		attrs := span.Attributes()
		for _, k := range []string{"http.request.method", "http.route", "url.scheme", "url.path", "server.address",
			"network.protocol.version", "client.address", "user_agent.original", "http.response.body.size"} {
			attrs.PutStr(k, "value")
		}
		attrs.PutInt("server.port", 8080)
		attrs.PutInt("http.response.status_code", 200)
		attrs.PutInt("http.request.body.size", 512)
		b.ReportAllocs()
		for b.Loop() {
			p.processSpan(context.Background(), d, span)
		}
	})
}
