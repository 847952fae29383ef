package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCardinalityFlood sends generations with 100,000 distinct model names (FLOOD_MODELS) through
// the built collector at the connector's DEFAULT cardinality limit (10,000 series; FLOOD_LIMIT sets
// another), flushing every 5 s so that each interval sees more models than the limit: every flush
// stays within the limit plus the overflow series, no observation is lost to the overflow, and
// memory stays bounded. It measures the collector's resident memory once a second and reports the
// steady RSS (the median over the last third of the run, when the series table is full) and the
// peak (VmHWM), to FLOOD_REPORT when set: the harness for cutting the connector's memory per
// series.
func TestCardinalityFlood(t *testing.T) {
	requireE2E(t)
	limit := envInt("FLOOD_LIMIT", 0)
	effective := limit
	if limit == 0 {
		effective = 10000 // itlmetricsconnector's default aggregation_cardinality_limit
	}
	models := envInt("FLOOD_MODELS", 100000)
	rate := envInt("FLOOD_RATE", 4000)
	flush := 5 * time.Second
	seconds := (models + rate - 1) / rate
	if per := rate * int(flush.Seconds()); per <= effective {
		t.Logf("note: %d models per flush interval do not exceed the limit %d; the overflow series will not be used", per, effective)
	}
	sk, r := runLoad(t, loadOptions{rate: rate, chunks: 20, seconds: seconds, cardinality: limit, flush: flush,
		model: func(i int64) string { return fmt.Sprintf("flood-model-%06d", i) }})
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
	// One flush may reach the sink as several requests (the exporter cuts them to 3 MiB); a
	// request's points are at most a whole flush's.
	if maxPts > effective+1 {
		t.Errorf("a flush carried %d series, above the limit %d plus the overflow series", maxPts, effective)
	}
	if overflow == 0 && rate*int(flush.Seconds()) > effective {
		t.Errorf("%d models per flush interval under a limit of %d must have used the overflow series", rate*int(flush.Seconds()), effective)
	}
	steady, peak := rssFigures(r)
	report := fmt.Sprintf("cardinality flood: %d distinct models at %d/s, limit %d (default=%v), flush every %v: at most %d series per request (limit + overflow), "+
		"%d overflow points, %d distinct series over the run; every observation kept (%d TTFTs for %d spans); ",
		r.spans, rate, effective, limit == 0, flush, maxPts, overflow, distinct, ttfts, r.spans)
	if r.statsErr != nil {
		report += fmt.Sprintf("collector CPU and RSS unavailable, and the bound on its memory not checked: %v\n", r.statsErr)
	} else {
		report += fmt.Sprintf("collector RSS steady %.0f MiB (median of the last third of %d samples), peak %.0f MiB (VmHWM); CPU %.1f s\n",
			float64(steady)/(1<<20), len(r.rss), float64(peak)/(1<<20), r.cpu)
	}
	var samples []string
	for _, v := range r.rss {
		samples = append(samples, fmt.Sprintf("%.0f", float64(v)/(1<<20)))
	}
	report += "RSS once a second (MiB): " + strings.Join(samples, " ") + "\n"
	t.Log("\n" + report)
	writeReport(t, "FLOOD_REPORT", report)
	// The bound is generous: the figures above are what to watch and cut.
	if peak > 1<<30 {
		t.Errorf("peak RSS %d MiB: the cardinality limit must bound memory", peak>>20)
	}
}

// rssFigures returns the steady RSS (the median of the samples in the last third of the run) and
// the peak (VmHWM, which sees between samples too).
func rssFigures(r loadResult) (steady, peak int64) {
	peak = r.peak
	n := len(r.rss)
	if n == 0 {
		return 0, peak
	}
	last := slices.Clone(r.rss[n-max(1, n/3):])
	slices.Sort(last)
	return last[len(last)/2], max(peak, slices.Max(r.rss))
}
