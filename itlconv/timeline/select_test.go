package timeline

import (
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

// BenchmarkGapPercentiles compares the selection with the full sort it replaces, on typical replies
// of 200 chunks. It cycles through 256 different replies: on one reply timed again and again, the
// CPU's branch predictor learns the comparisons' outcomes by heart, which no collector sees (there
// each span's gaps are new), and a selection that branches on its data would look several times
// cheaper than it is in place.
func BenchmarkGapPercentiles(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	tls := make([]Timeline, 256)
	for k := range tls {
		offs := make([]int64, 200)
		offs[0] = 300_000_000
		for i := 1; i < len(offs); i++ {
			offs[i] = offs[i-1] + 12_000_000 + rng.Int64N(20_000_000)
		}
		tls[k] = Timeline{Offsets: offs}
	}
	b.Run("impl=select", func(b *testing.B) {
		var buf []int64
		k := 0
		for b.Loop() {
			_, _, buf = tls[k&255].gapPercentiles(buf)
			k++
		}
	})
	b.Run("impl=sort", func(b *testing.B) {
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
