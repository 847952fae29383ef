package timeline

import (
	"math"
	"testing"
	"time"
)

func TestPercentileMatchesNumpyLinear(t *testing.T) {
	// numpy.percentile(x, q) with the default method, computed by hand for these inputs.
	x := []float64{1, 2, 3, 4, 10}
	for _, c := range []struct{ q, want float64 }{{0, 1}, {0.5, 3}, {0.9, 7.6}, {0.99, 9.76}, {1, 10}, {0.25, 2}} {
		if got := Percentile(x, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Percentile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := Percentile([]float64{7}, 0.99); got != 7 {
		t.Errorf("one value: %v", got)
	}
	if !math.IsNaN(Percentile(nil, 0.5)) {
		t.Error("no values must give NaN")
	}
}

func TestComputeRules(t *testing.T) {
	tl := Timeline{Offsets: []int64{100e6, 120e6, 500e6, 530e6}, Tokens: []int64{2, 1, 1, 3}}
	f, _ := Compute(tl, Input{Complete: true, StallThreshold: 250 * time.Millisecond, Percentiles: true}, nil)
	if !f.HasTTFT || f.TTFT != 0.1 || f.OutputTokens != 7 || f.Stalls != 1 || f.MaxGap != 0.38 {
		t.Errorf("%+v", f)
	}
	if want := 0.43 / 5; !f.HasTPOT || math.Abs(f.TPOT-want) > 1e-12 {
		t.Errorf("tpot %v, want %v", f.TPOT, want)
	}
	// Incomplete: TTFT only from the attribute, no token sum, no TPOT; gaps still count.
	f, _ = Compute(tl, Input{AttrTTFT: 0.05, HasAttrTTFT: true, StallThreshold: time.Second}, nil)
	if f.TTFT != 0.05 || f.HasOutputTokens || f.HasTPOT || !f.HasGaps || f.Stalls != 0 {
		t.Errorf("incomplete: %+v", f)
	}
	// Usage wins over the sum; N <= c_1 gives no TPOT.
	f, _ = Compute(Timeline{Offsets: []int64{1e6, 2e6}, Tokens: []int64{5, 1}}, Input{Complete: true, UsageOutputTokens: 5, HasUsage: true}, nil)
	if f.OutputTokens != 5 || f.HasTPOT {
		t.Errorf("usage: %+v", f)
	}
}

// TestComputeTakesTheCallersGapStats: Stats counts the smallest and the largest gap and the stalls
// (gaps strictly longer than the threshold), and Compute uses the caller's GapStats when it has
// them instead of walking the gaps; it walks them otherwise.
func TestComputeTakesTheCallersGapStats(t *testing.T) {
	tl := Timeline{Offsets: []int64{100, 150, 250, 270, 600}} // gaps 50, 100, 20, 330
	if got, want := tl.Stats(100), (GapStats{MinNs: 20, MaxNs: 330, Stalls: 1}); got != want {
		t.Fatalf("Stats(100) = %+v, want %+v", got, want)
	}
	if got := (Timeline{Offsets: []int64{7}}).Stats(0); got != NoGaps() {
		t.Fatalf("one chunk: Stats = %+v, want none", got)
	}
	in := Input{StallThreshold: 100}
	f, _ := Compute(tl, in, nil)
	if f.Stalls != 1 || f.MaxGap != Seconds(330) {
		t.Fatalf("walked: stalls %d, largest gap %v; want 1, %v", f.Stalls, f.MaxGap, Seconds(330))
	}
	in.GapStats, in.HasGapStats = GapStats{MinNs: 1, MaxNs: 42, Stalls: 9}, true // not tl's: shows they are taken
	f, _ = Compute(tl, in, nil)
	if f.Stalls != 9 || f.MaxGap != Seconds(42) {
		t.Fatalf("given: stalls %d, largest gap %v; want 9, %v", f.Stalls, f.MaxGap, Seconds(42))
	}
}
