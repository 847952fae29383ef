package e2e

import (
	"fmt"
	"os"
	"testing"
)

// TestCardinalityFlood sends generations with 100,000 distinct model names (FLOOD_MODELS) through
// the built collector with a cardinality limit of 1,000: every flush stays within the limit plus
// the overflow series, no observation is lost to the overflow, and memory stays bounded.
func TestCardinalityFlood(t *testing.T) {
	requireE2E(t)
	const limit = 1000
	models := envInt("FLOOD_MODELS", 100000)
	rate := envInt("FLOOD_RATE", 4000)
	seconds := (models + rate - 1) / rate
	sk, r := runLoad(t, rate, 20, seconds, limit, func(i int64) string { return fmt.Sprintf("flood-model-%06d", i) })
	spans, gaps, _ := sk.snapshot()
	sk.mu.Lock()
	ttfts := sk.counts["gen_ai.client.operation.time_to_first_chunk"]
	maxPts := sk.maxPoints["gen_ai.client.operation.time_to_first_chunk"]
	overflow := sk.overflow
	distinct := len(sk.series["gen_ai.client.operation.time_to_first_chunk"])
	sk.mu.Unlock()
	if spans != r.spans || int64(ttfts) != r.spans || int64(gaps) != r.gaps {
		t.Errorf("lost data: spans %d/%d, TTFT observations %d, gaps %d/%d", spans, r.spans, ttfts, gaps, r.gaps)
	}
	if maxPts > limit+1 {
		t.Errorf("a flush carried %d series, above the limit %d plus the overflow series", maxPts, limit)
	}
	if overflow == 0 {
		t.Errorf("100,000 models under a limit of %d must have used the overflow series", limit)
	}
	var peakRSS int64
	for _, v := range r.rss {
		peakRSS = max(peakRSS, v)
	}
	report := fmt.Sprintf("cardinality flood: %d distinct models at %d/s, limit %d: at most %d series per flush (limit + overflow), "+
		"%d overflow points, %d distinct series over the run (delta temporality frees idle series each flush); "+
		"every observation kept (%d TTFTs for %d spans); collector peak RSS %.0f MiB, CPU %.1f s\n",
		r.spans, rate, limit, maxPts, overflow, distinct, ttfts, r.spans, float64(r.peak)/(1<<20), r.cpu)
	t.Log("\n" + report)
	if p := os.Getenv("FLOOD_REPORT"); p != "" {
		_ = os.WriteFile(p, []byte(report), 0o644)
	}
	if r.peak > 512<<20 {
		t.Errorf("peak RSS %d MiB: the cardinality limit must bound memory", r.peak>>20)
	}
}
