package itlmetricsconnector

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/otelitl/itl/internal/benchspans"
)

// BenchmarkConsumeTraces measures ConsumeTraces on batches of 100 generation spans of 200 chunks,
// per encoding; ns/span and ns/gap are reported besides ns/op (one batch).
func BenchmarkConsumeTraces(b *testing.B) {
	const spans, chunks = 100, 200
	for _, enc := range []struct {
		name    string
		compact bool
	}{{"events", false}, {"compact", true}} {
		b.Run("enc="+enc.name, func(b *testing.B) {
			td := benchspans.Traces(spans, chunks, enc.compact)
			cfg := NewFactory().CreateDefaultConfig().(*Config)
			cfg.MetricsFlushInterval = time.Hour
			c, err := newConnector(connectortestSettings(), cfg, consumertest.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = c.ConsumeTraces(context.Background(), td)
			}
			perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(perOp/spans, "ns/span")
			b.ReportMetric(perOp/(spans*(chunks-1)), "ns/gap")
		})
	}
}
