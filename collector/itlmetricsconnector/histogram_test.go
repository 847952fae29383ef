package itlmetricsconnector

import (
	"math/rand/v2"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/itlconv/timeline"
)

// TestGapBucketMatchesBinarySearch checks the table-driven bucket lookup against the plain binary
// search over every default boundary set, at the boundaries and around them.
func TestGapBucketMatchesBinarySearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, b := range [][]float64{itlconv.GapBuckets, itlconv.DurationBuckets, itlconv.TokenBuckets, itlconv.ServerTPOTBuckets,
		itlconv.ServerTTFTBuckets, {0.0000001, 3.3333}, {-1, 1e-9, 1.5e-9, 0.1 + 0.2, 1e300}, {0.0100, 0.0101, 0.0102}, manyBounds(256), manyBounds(254)} {
		bs := newBounds(b)
		var gaps []int64 // every gap checked below that sums without overflow, for observeGaps
		check := func(ns int64) {
			want := bucket(b, timeline.Seconds(ns))
			if got := bs.searchBucket(ns); got != want {
				t.Fatalf("bounds %v: %d ns in bucket %d by the key table, want %d", b, ns, got, want)
			}
			if uint64(ns) < bs.linLimit {
				if got := bs.linBucket(ns); got != want {
					t.Fatalf("bounds %v: %d ns in bucket %d by the linear table, want %d", b, ns, got, want)
				}
			}
			if ns < 1<<40 {
				gaps = append(gaps, ns)
			}
		}
		for _, x := range b {
			ns := int64(x * 1e9)
			for d := int64(-2); d <= 2; d++ {
				if ns+d >= 0 {
					check(ns + d)
				}
			}
		}
		for range 100000 {
			check(rng.Int64N(1 << rng.IntN(40)))
		}
		check(0)
		check(1<<63 - 1)
		// The per-gap loop chooses between the two tables itself, for the gaps in pairs and for
		// the odd one left: its counts must be the same, on an even and an odd number of gaps,
		// also when observed twice into one histogram.
		offsets := []int64{0}
		for _, g := range gaps {
			offsets = append(offsets, offsets[len(offsets)-1]+g)
		}
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

// TestLinearTableCoversTheGaps checks the reach of the linear table (linBucket): with the default gap
// boundaries, every gap up to 4.3 s takes it (cells of 2^20 ns, 1.05 ms: none holds two of the
// thresholds 1, 2, 5, 7.5 and 10 ms); thresholds 1 ns apart leave cells of 2 ns, the narrowest a
// search ever needs; more than 254 boundaries leave the search alone.
// TestGapBucketMatchesBinarySearch checks the buckets themselves on every path.
func TestLinearTableCoversTheGaps(t *testing.T) {
	if bs := newBounds(itlconv.GapBuckets); bs.linShift != 20 || bs.linLimit != 1<<32 {
		t.Errorf("gap boundaries: cells of 2^%d ns up to %d ns, want 2^20 up to 2^32", bs.linShift, bs.linLimit)
	}
	if bs := newBounds([]float64{1e-9, 2e-9, 3e-9, 4e-9}); bs.linShift != 1 {
		t.Errorf("boundaries 1 ns apart: cells of 2^%d ns, want 2^1", bs.linShift)
	}
	if bs := newBounds(manyBounds(256)); bs.linLimit != 0 {
		t.Errorf("256 boundaries: linear table up to %d ns, want none", bs.linLimit)
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
	h := newExplicit(newBounds(itlconv.GapBuckets), 0)
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
