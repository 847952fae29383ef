package itlmetricsconnector

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/internal/buckets"
	"github.com/otelitl/itl/internal/benchspans"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/itlconv/timeline"
)

// TestObserveGapsMatchesBinarySearch checks observeGaps, which chooses between the linear table and
// the search itself, for the gaps in pairs and for the odd one left, against the plain binary
// search over the float boundaries: on an even and an odd number of gaps, also when observed twice
// into one histogram. buckets' tests check each table on its own.
func TestObserveGapsMatchesBinarySearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, b := range [][]float64{itlconv.GapBuckets, itlconv.DurationBuckets, itlconv.TokenBuckets, itlconv.ServerTPOTBuckets,
		itlconv.ServerTTFTBuckets, {0.0000001, 3.3333}, {-1, 1e-9, 1.5e-9, 0.1 + 0.2, 1e300}, {0.0100, 0.0101, 0.0102}, manyBounds(256), manyBounds(254)} {
		gaps := []int64{0}
		for _, x := range b {
			ns := int64(x * 1e9)
			for d := int64(-2); d <= 2; d++ {
				if g := ns + d; g >= 0 && g < 1<<40 {
					gaps = append(gaps, g)
				}
			}
		}
		for range 20000 {
			gaps = append(gaps, rng.Int64N(1<<rng.IntN(40)))
		}
		offsets := []int64{0}
		for _, g := range gaps {
			offsets = append(offsets, offsets[len(offsets)-1]+g)
		}
		bs := buckets.New(b)
		for _, n := range []int{len(offsets), len(offsets) - 1, 2, 3} {
			want := make([]uint64, len(b)+1)
			for i := 1; i < n; i++ {
				want[bucket(b, timeline.Seconds(offsets[i]-offsets[i-1]))] += 2
			}
			h := newExplicit(bs, 0)
			o := offsets[:n]
			h.observeGaps(o, timeline.Timeline{Offsets: o}.Stats(0))
			h.observeGaps(o, timeline.Timeline{Offsets: o}.Stats(0))
			h.merge()
			if !slices.Equal(h.counts, want) {
				t.Fatalf("bounds %v, %d offsets: observeGaps counted %v, want %v", b, n, h.counts, want)
			}
		}
	}
}

// manyBounds returns n boundaries 1 ms apart.
func manyBounds(n int) []float64 {
	b := make([]float64, n)
	for i := range b {
		b[i] = float64(i+1) / 1000
	}
	return b
}

// TestObserveGapsWrittenTwice checks that the counts observeGaps splits over two arrays are written
// once each: a histogram written, observed again and written again (cumulative temporality) holds
// every gap exactly once, and a reset forgets both arrays.
func TestObserveGapsWrittenTwice(t *testing.T) {
	offsets := []int64{0, 3e6, 6e6, 9e6, 12e6, 15e6} // five gaps of 3 ms
	stats := timeline.Timeline{Offsets: offsets}.Stats(0)
	h := newExplicit(buckets.New(itlconv.GapBuckets), 0)
	written := func() []uint64 {
		m := pmetric.NewMetric()
		m.SetEmptyHistogram()
		h.write(m, pcommon.NewMap(), 0, 0)
		return m.Histogram().DataPoints().At(0).BucketCounts().AsRaw()
	}
	want := make([]uint64, len(itlconv.GapBuckets)+1)
	for _, n := range []uint64{5, 10, 15} {
		h.observeGaps(offsets, stats)
		want[bucket(itlconv.GapBuckets, 0.003)] = n
		if got := written(); !slices.Equal(got, want) {
			t.Fatalf("after %d gaps: written %v, want %v", n, got, want)
		}
	}
	h.observeGaps(offsets, stats) // not written: the reset below must forget these
	h.reset()
	h.observeGaps(offsets, stats)
	want[bucket(itlconv.GapBuckets, 0.003)] = 5
	if got := written(); !slices.Equal(got, want) {
		t.Fatalf("after a reset and 5 gaps: written %v, want %v", got, want)
	}
}

// TestReservoirKeepsTheLargest checks the exemplar reservoir against a sort: after any sequence of
// offers, ties and emptying between intervals included, it holds the largest values offered since
// it was last emptied.
func TestReservoirKeepsTheLargest(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for size := range 6 {
		r := reservoir{ex: make([]exemplar, 0, size)}
		for interval := range 50 {
			var offered []float64
			for range rng.IntN(40) {
				v := float64(rng.IntN(20)) // small integers: many ties
				offered = append(offered, v)
				r.offer(v, &exemplar{})
			}
			slices.Sort(offered)
			slices.Reverse(offered)
			want := offered[:min(size, len(offered))]
			var got []float64
			for _, e := range r.ex {
				got = append(got, e.value)
			}
			slices.Sort(got)
			slices.Reverse(got)
			if !slices.Equal(got, want) {
				t.Fatalf("size %d, interval %d: kept %v of %v, want %v", size, interval, got, offered, want)
			}
			r.ex = r.ex[:0] // as build does after each flush
		}
	}
}

// TestReaderCountsTheGaps checks that the connector's decoders count the gaps of plain chunk events
// and of compact timelines as they read them, in the gap histogram's buckets, when its histograms are explicit: that saves
// its per-gap loop a pass over the offsets (BENCHMARKS.md), and a change that loses it would
// leave every figure the same. Exponential histograms take the gaps themselves.
func TestReaderCountsTheGaps(t *testing.T) {
	for _, enc := range encodings {
		td := benchspans.Traces(1, 50, enc.compact)
		checkReaderCounts(t, enc.name, td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0))
	}
}

func checkReaderCounts(t *testing.T, enc string, span ptrace.Span) {
	for _, c := range []struct {
		name    string
		mutate  func(*Config)
		counted bool
	}{
		{"explicit", nil, true},
		{"explicit, other gap boundaries", func(c *Config) { c.Histogram.Explicit.Buckets.TimePerOutputChunk = []float64{0.01, 0.02} }, true},
		{"exponential", func(c *Config) { c.Histogram.Exponential.MaxSize = 160 }, false},
	} {
		conn := newTestConnector(t, c.mutate, new(consumertest.MetricsSink))
		b := conn.batches.Get().(*batch)
		if !conn.read(context.Background(), b, span, pcommon.NewMap(), pcommon.NewInstrumentationScope()) {
			t.Fatalf("%s, %s: not a model call", enc, c.name)
		}
		counts := b.spans[0].d.GapCounts()
		if (counts != nil) != c.counted {
			t.Fatalf("%s, %s: gap counts %v, want counted: %v", enc, c.name, counts, c.counted)
		}
		if counts != nil && len(counts) != len(conn.bounds[hGap].Bounds())+1 {
			t.Fatalf("%s, %s: %d counts for %d boundaries", enc, c.name, len(counts), len(conn.bounds[hGap].Bounds()))
		}
	}
}
