package genaispan

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/otelitl/itl/itlconv/timeline"
)

// inSpanByEach is inSpan's rule written out plainly: every offset, taken as unsigned, at most the
// span's length.
func inSpanByEach(offs []int64, length uint64) bool {
	for _, off := range offs {
		if uint64(off) > length {
			return false
		}
	}
	return true
}

// TestInSpan checks inSpan, which tells from the gap statistics whether arrivals in time order lie
// within the span, against a check of each offset: on offsets whose gaps are each at least 0 but
// whose sums wrap around int64 (first and last within the span, those between far outside), on
// the edges of the span, and on random chains of small and huge gaps.
func TestInSpan(t *testing.T) {
	const h = 1 << 62
	for _, c := range []struct {
		name   string
		offs   []int64
		length uint64
		want   bool
	}{
		{"one at the start", []int64{0}, 0, true},
		{"in order", []int64{0, 5, 5, 10}, 10, true},
		{"one past the end", []int64{0, 5, 11}, 10, false},
		{"one before the start", []int64{-1, 5}, 10, false},
		{"out of order, within", []int64{7, 2, 9}, 10, true},
		{"out of order, one outside", []int64{7, 12, 9}, 10, false},
		{"gaps that wrap around to the start", []int64{0, h, math.MinInt64, math.MinInt64 + h, 5}, 10, false},
		{"one gap of almost 2^64", []int64{0, math.MaxInt64, math.MinInt64, 3}, 10, false},
		{"a span of 2^63", []int64{0, h, math.MaxInt64}, math.MaxInt64, true},
		{"a span longer than 2^63", []int64{0, math.MaxInt64, math.MinInt64}, math.MaxUint64, true},
		{"a span longer than 2^63, out of order", []int64{math.MinInt64, 0, -2}, math.MaxUint64 - 1, true},
		{"a span longer than 2^63, one past it", []int64{0, -1}, math.MaxUint64 - 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := inSpan(c.offs, timeline.Timeline{Offsets: c.offs}.Stats(0), c.length); got != c.want {
				t.Errorf("inSpan(%v, %d) = %v, want %v", c.offs, c.length, got, c.want)
			}
			if want := inSpanByEach(c.offs, c.length); want != c.want {
				t.Fatalf("the case is wrong: each offset checked gives %v", want)
			}
		})
	}
	rng := rand.New(rand.NewPCG(3, 4))
	lengths := []uint64{0, 1, 1e9, 1 << 40, math.MaxInt64, math.MaxInt64 + 1, math.MaxUint64}
	wrapped, inside := 0, 0
	for range 200_000 {
		length := lengths[rng.IntN(len(lengths))]
		offs := make([]int64, 1+rng.IntN(8))
		offs[0] = int64(rng.Uint64N(min(length, math.MaxInt64-1) + 2)) // within, or one past the end
		for i := 1; i < len(offs); i++ {
			var g int64
			switch rng.IntN(4) {
			case 0:
				g = int64(rng.Uint64N(1 << 63)) // any gap at least 0: sums of a few wrap around
			case 1:
				g = -int64(rng.IntN(3)) // out of order
			default:
				g = int64(rng.Uint64N(min(length, math.MaxInt64)/4 + 1))
			}
			offs[i] = offs[i-1] + g
		}
		want := inSpanByEach(offs, length)
		gs := timeline.Timeline{Offsets: offs}.Stats(0)
		if got := inSpan(offs, gs, length); got != want {
			t.Fatalf("inSpan(%v, %d) = %v, each offset checked: %v", offs, length, got, want)
		}
		if want {
			inside++
		}
		if gs.MinNs >= 0 && uint64(offs[0]) <= length && uint64(offs[len(offs)-1]) <= length && !want {
			wrapped++ // in order by its gaps, first and last within, and yet outside
		}
	}
	if wrapped < 100 || inside < 20_000 {
		t.Fatalf("%d wrapped chains, %d within the span: both must be reached", wrapped, inside)
	}
}
