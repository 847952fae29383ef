package otelitl

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/metric/noop"

	"github.com/otelitl/itl/otelitl/internal/cycles"
)

// TestCycleCounterChoice checks which clock a generation's Chunk reads: the cycle counter by default
// where the kernel uses it, the monotonic clock with WithCycleCounter(false) or where it does not.
func TestCycleCounterChoice(t *testing.T) {
	// A MeterProvider keeps the generation live (not the inert one) without a recording span, so
	// that this test needs the API only.
	mp := noop.NewMeterProvider()
	for _, tc := range []struct {
		opts []Option
		want bool
	}{
		{nil, cycles.Usable()},
		{[]Option{WithCycleCounter(true)}, cycles.Usable()},
		{[]Option{WithCycleCounter(false)}, false},
	} {
		_, g := New(append(tc.opts, WithMeterProvider(mp))...).Start(context.Background(), Request{Model: "m"})
		g.mu.Lock()
		got := g.ticks
		g.mu.Unlock()
		g.End(nil)
		if got != tc.want {
			t.Errorf("options %d: generation reads the cycle counter = %v, want %v", len(tc.opts), got, tc.want)
		}
	}
	t.Logf("cycle counter usable here: %v", cycles.Usable())
}
