package timeline

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// sortedGaps is the reference: every gap in seconds, sorted.
func sortedGaps(t Timeline) []float64 {
	var g []float64
	for i := 1; i < len(t.Offsets); i++ {
		g = append(g, Seconds(t.Offsets[i]-t.Offsets[i-1]))
	}
	slices.Sort(g)
	return g
}

// streamGap is a gap of a real stream's shape: any nanosecond around 20 ms (±2 ms), 3% of chunks
// arriving together (tens of microseconds apart), and a stall of 200 to 800 ms in one gap of a
// hundred, so that most gaps fall in a few narrow parts of a wide range.
func streamGap(rng *rand.Rand) int64 {
	switch k := rng.IntN(100); {
	case k == 0:
		return 200_000_000 + rng.Int64N(600_000_000)
	case k < 4:
		return 10_000 + rng.Int64N(90_000)
	}
	return int64(20_000_000 + 2_000_000*rng.NormFloat64())
}

// TestGapPercentilesMatchASort checks the selection against Percentile over the fully sorted gaps,
// to the bit, on timelines of every length up to 600 and of several shapes: random gaps, many equal
// gaps, sorted and reverse-sorted gaps (the cases that break naive quickselects), a few huge ones.
func TestGapPercentilesMatchASort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	shapes := map[string]func(i, n int) int64{
		"random":   func(int, int) int64 { return rng.Int64N(50_000_000) },
		"few":      func(int, int) int64 { return int64(rng.IntN(3)) * 1_000_000 },
		"equal":    func(int, int) int64 { return 20_000_000 },
		"rising":   func(i, _ int) int64 { return int64(i) * 1000 },
		"falling":  func(i, n int) int64 { return int64(n-i) * 1000 },
		"stalls":   func(int, int) int64 { return 15_000_000 + int64(rng.IntN(100)/99)*800_000_000 },
		"sawtooth": func(i, _ int) int64 { return int64(i%7) * 3_000_000 },
		// A real stream's shape (BenchmarkGapPercentiles): any nanosecond around 20 ms, a few
		// chunks together, a stall now and then; the wanted ranks' buckets hold dozens of gaps,
		// which the levels below the first count in fewer buckets.
		"jitter-stalls": func(int, int) int64 { return streamGap(rng) },
		// Gaps within a microsecond of each other beside one long one: the selection's buckets
		// must narrow several times before they tell the close gaps apart.
		"clustered": func(i, _ int) int64 {
			if i == 5 {
				return 3_000_000_000
			}
			return 20_000_000 + rng.Int64N(1000)
		},
	}
	var buf []int64
	for name, gap := range shapes {
		for n := 2; n <= 600; n++ {
			offs := make([]int64, n)
			offs[0] = 300_000_000
			for i := 1; i < n; i++ {
				offs[i] = offs[i-1] + gap(i, n)
			}
			tl := Timeline{Offsets: offs}
			ref := sortedGaps(tl)
			var maxGap float64
			var p [3]float64
			want := [3]float64{Percentile(ref, 0.5), Percentile(ref, 0.9), Percentile(ref, 0.99)}
			// The reader's own stats, and stats that do not bound the gaps, which it must notice.
			gs := tl.Stats(0)
			for _, stats := range []GapStats{gs, NoGaps(), {}, {MinNs: gs.MinNs + 1, MaxNs: gs.MaxNs}, {MinNs: gs.MinNs, MaxNs: gs.MaxNs - 1}, {MinNs: gs.MaxNs, MaxNs: gs.MaxNs}} {
				maxGap, p, buf = tl.gapPercentiles(stats, buf)
				if maxGap != ref[len(ref)-1] || p != want {
					t.Fatalf("%s, %d chunks, stats %+v: max %v p %v, a sort gives max %v p %v", name, n, stats, maxGap, p, ref[len(ref)-1], want)
				}
			}
		}
	}
}

// TestGapPercentilesCheckTheirStats hands the selection stats whose largest gap is one short, on
// gaps whose true largest is exactly where the counting pass's buckets would wrap around to the
// first (2^20 ns above the smallest, with buckets 2^11 ns wide): unless it notices the gap outside
// its range, the largest gap is counted as one of the smallest.
func TestGapPercentilesCheckTheirStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	offs := []int64{0}
	for i := range 100 {
		g := 1000 + rng.Int64N(1<<20)
		switch i {
		case 3:
			g = 1000
		case 50:
			g = 1000 + 1<<20
		}
		offs = append(offs, offs[len(offs)-1]+g)
	}
	tl := Timeline{Offsets: offs}
	ref := sortedGaps(tl)
	gs := tl.Stats(0)
	gs.MaxNs--
	maxGap, p, _ := tl.gapPercentiles(gs, nil)
	want := [3]float64{Percentile(ref, 0.5), Percentile(ref, 0.9), Percentile(ref, 0.99)}
	if maxGap != ref[len(ref)-1] || p != want {
		t.Fatalf("stats one short: max %v p %v, a sort gives max %v p %v", maxGap, p, ref[len(ref)-1], want)
	}
}

// TestSelectRanksMatchesSort checks the radix selection against a sort on its own, with any wanted
// ranks, on values that spread over the whole int64 range (where a bucket's bounds would overflow a
// careless sum), that cluster, or that repeat, and on sizes on both sides of where it stops
// counting and sorts.
func TestSelectRanksMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	shapes := map[string]func() int64{
		"full range": func() int64 { return int64(rng.Uint64()) },
		"extremes": func() int64 {
			return []int64{math.MinInt64, math.MaxInt64, 0, -1, 1}[rng.IntN(5)]
		},
		"clustered": func() int64 {
			if rng.IntN(50) == 0 {
				return rng.Int64N(1 << 40)
			}
			return 1<<35 + rng.Int64N(300)
		},
		"few":   func() int64 { return int64(rng.IntN(4)) << 20 },
		"small": func() int64 { return rng.Int64N(256) },
	}
	for name, gen := range shapes {
		for iter := range 3000 {
			n := 1 + rng.IntN(400)
			if iter%3 == 0 {
				n = 1 + rng.IntN(2*smallSelect)
			}
			a := make([]int64, n)
			for i := range a {
				a[i] = gen()
			}
			sorted := slices.Clone(a)
			slices.Sort(sorted)
			ranks := make([]int, 1+rng.IntN(numRanks))
			for i := range ranks {
				ranks[i] = rng.IntN(n)
			}
			slices.Sort(ranks)
			vals := make([]int64, len(ranks))
			in := slices.Clone(a)
			selectRanks(a, sorted[0], sorted[n-1], ranks, 0, vals, make([]int64, n+1))
			for i, r := range ranks {
				if vals[i] != sorted[r] {
					t.Fatalf("%s: %v, ranks %v: rank %d is %d, a sort gives %d", name, in, ranks, r, vals[i], sorted[r])
				}
			}
		}
	}
}

// BenchmarkGapPercentiles compares the selection with the full sort it replaces, on typical replies
// of 200 chunks. It cycles through 256 different replies: on one reply timed again and again, the
// CPU's branch predictor learns the comparisons' outcomes by heart, which no collector sees (there
// each span's gaps are new), and a selection that branches on its data would look several times
// cheaper than it is in place.
func BenchmarkGapPercentiles(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Three cadences: gaps of any nanosecond value from 12 to 32 ms; whole milliseconds from 12
	// to 31 with a 400 ms stall in one gap of a hundred, as internal/benchspans writes the
	// collector benchmarks' replies (many equal gaps, and a range ten times the usual one); and
	// the shape of a real stream: gaps of any nanosecond value around 20 ms (±2 ms), with a few
	// chunks that arrive together (gaps of tens of microseconds) and a stall of 200 to 800 ms in one
	// gap of a hundred, so that most gaps fall in a few narrow parts of a wide range.
	shapes := []struct {
		name string
		gap  func() int64
	}{
		{"ns", func() int64 { return 12_000_000 + rng.Int64N(20_000_000) }},
		{"ms-stalls", func() int64 {
			g := int64(12+rng.IntN(20)) * 1_000_000
			if rng.IntN(100) == 0 {
				g += 400_000_000
			}
			return g
		}},
		{"jitter-stalls", func() int64 { return streamGap(rng) }},
	}
	for _, sh := range shapes {
		tls := make([]Timeline, 256)
		stats := make([]GapStats, 256)
		for k := range tls {
			offs := make([]int64, 200)
			offs[0] = 300_000_000
			for i := 1; i < len(offs); i++ {
				offs[i] = offs[i-1] + sh.gap()
			}
			tls[k] = Timeline{Offsets: offs}
			stats[k] = tls[k].Stats(0) // as the collector's reader counts them on its way
		}
		b.Run("gaps="+sh.name+"/impl=select", func(b *testing.B) {
			var buf []int64
			k := 0
			for b.Loop() {
				_, _, buf = tls[k&255].gapPercentiles(stats[k&255], buf)
				k++
			}
		})
		b.Run("gaps="+sh.name+"/impl=sort", func(b *testing.B) {
			buf := make([]float64, 0, 200)
			k := 0
			for b.Loop() {
				offs := tls[k&255].Offsets
				k++
				buf = buf[:0]
				for i := 1; i < len(offs); i++ {
					buf = append(buf, Seconds(offs[i]-offs[i-1]))
				}
				slices.Sort(buf)
				_, _, _ = Percentile(buf, 0.5), Percentile(buf, 0.9), Percentile(buf, 0.99)
			}
		})
	}
}
