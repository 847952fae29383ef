package itlmetricsconnector

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/internal/benchspans"
)

// maxBytesPerSeries is the most heap one series may hold at the default settings.
const maxBytesPerSeries = 8 << 10

// heapPerSeries fills a connector at the default settings with n series, each fed the same
// realistic generation span (200 chunks: every client histogram, tokens, stalls and timing in use)
// under its own model, and returns the live heap it holds per series.
func heapPerSeries(tb testing.TB, n int) float64 {
	tb.Helper()
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	c, err := newConnector(connectortestSettings(), cfg, consumertest.NewNop())
	if err != nil {
		tb.Fatal(err)
	}
	td := benchspans.Traces(1, 200, true)
	// Exemplars fill each histogram's reservoir as spans come: feed each series several.
	batches := make([]ptrace.Traces, 8)
	for i := range batches {
		batches[i] = ptrace.NewTraces()
		td.CopyTo(batches[i])
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		model := fmt.Sprintf("model-%06d", i)
		for _, b := range batches {
			b.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutStr("gen_ai.request.model", model)
			if err := c.ConsumeTraces(context.Background(), b); err != nil {
				tb.Fatal(err)
			}
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if len(c.series) != n {
		tb.Fatalf("%d series, want %d", len(c.series), n)
	}
	runtime.KeepAlive(c)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

// TestMemoryPerSeries keeps the connector's memory per series within maxBytesPerSeries at the
// default settings: the cardinality limit (10,000 series) then bounds it at about 80 MB.
func TestMemoryPerSeries(t *testing.T) {
	got := heapPerSeries(t, 2000)
	t.Logf("%.0f bytes of heap per series at the default settings", got)
	if got > maxBytesPerSeries {
		t.Errorf("%.0f bytes per series, more than %d", got, maxBytesPerSeries)
	}
}

// BenchmarkSeriesMemory reports the heap one series holds at the default settings (B/series),
// with the default cardinality limit's worth of series.
func BenchmarkSeriesMemory(b *testing.B) {
	for b.Loop() {
		b.ReportMetric(heapPerSeries(b, defaultCardinalityLimit), "B/series")
	}
}
