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
			maxGap, p, buf = tl.gapPercentiles(buf)
			want := [3]float64{Percentile(ref, 0.5), Percentile(ref, 0.9), Percentile(ref, 0.99)}
			if maxGap != ref[len(ref)-1] || p != want {
				t.Fatalf("%s, %d chunks: max %v p %v, a sort gives max %v p %v", name, n, maxGap, p, ref[len(ref)-1], want)
			}
		}
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
			selectRanks(a, sorted[0], sorted[n-1], ranks, 0, vals, make([]int64, n))
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
	// Two cadences: gaps of any nanosecond value from 12 to 32 ms; and whole milliseconds from 12
	// to 31 with a 400 ms stall in one gap of a hundred, as internal/benchspans writes the
	// collector benchmarks' replies (many equal gaps, and a range ten times the usual one).
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
	}
	for _, sh := range shapes {
		tls := make([]Timeline, 256)
		for k := range tls {
			offs := make([]int64, 200)
			offs[0] = 300_000_000
			for i := 1; i < len(offs); i++ {
				offs[i] = offs[i-1] + sh.gap()
			}
			tls[k] = Timeline{Offsets: offs}
		}
		b.Run("gaps="+sh.name+"/impl=select", func(b *testing.B) {
			var buf []int64
			k := 0
			for b.Loop() {
				_, _, buf = tls[k&255].gapPercentiles(buf)
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
