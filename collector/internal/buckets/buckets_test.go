package buckets

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/itlconv/timeline"
)

// bucket is the plain binary search the tables stand for: the index of the bucket (b[i-1], b[i]]
// that holds v, the first boundary at or above it, or len(b).
func bucket(b []float64, v float64) int {
	i, _ := slices.BinarySearch(b, v)
	return i
}

// boundarySets are every default boundary set, and sets at the edges of the tables: thresholds
// far apart, negative and huge, 1 ns apart, and too many for the linear table (256) or just few
// enough (254).
var boundarySets = [][]float64{itlconv.GapBuckets, itlconv.DurationBuckets, itlconv.TokenBuckets, itlconv.ServerTPOTBuckets,
	itlconv.ServerTTFTBuckets, {0.0000001, 3.3333}, {-1, 1e-9, 1.5e-9, 0.1 + 0.2, 1e300}, {0.0100, 0.0101, 0.0102},
	{1e-9, 2e-9, 3e-9, 4e-9}, manyBounds(256), manyBounds(254)}

// gapsToCheck returns gaps at and around each boundary, at the ends of the int64 range, and random
// gaps of every bit length up to 40.
func gapsToCheck(b []float64, rng *rand.Rand) []int64 {
	gaps := []int64{0, 1, 1<<63 - 1}
	for _, x := range b {
		ns := int64(x * 1e9)
		for d := int64(-2); d <= 2; d++ {
			if ns+d >= 0 {
				gaps = append(gaps, ns+d)
			}
		}
	}
	for range 100000 {
		gaps = append(gaps, rng.Int64N(1<<rng.IntN(40)))
	}
	return gaps
}

// TestTablesMatchBinarySearch checks the key table (Search) and the linear table (Lin) against the
// plain binary search over the float boundaries.
func TestTablesMatchBinarySearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, b := range boundarySets {
		tab := New(b)
		for _, ns := range gapsToCheck(b, rng) {
			want := bucket(b, timeline.Seconds(ns))
			if got := tab.Search(ns); got != want {
				t.Fatalf("bounds %v: %d ns in bucket %d by the key table, want %d", b, ns, got, want)
			}
			if uint64(ns) < tab.LinLimit() {
				if got := tab.Lin(ns); got != want {
					t.Fatalf("bounds %v: %d ns in bucket %d by the linear table, want %d", b, ns, got, want)
				}
			}
		}
	}
}

// TestCounterMatchesBinarySearch checks a Counter's counts, each gap taken by Add (or AddFlag) below
// Cut and by AddAny above it as a reader does, against the binary search; and that Reset forgets them.
func TestCounterMatchesBinarySearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, b := range boundarySets {
		tab := New(b)
		c := NewCounter(tab)
		if tab.LinLimit() == 0 {
			if c != nil {
				t.Fatalf("bounds %v: a Counter without a linear table", b)
			}
			continue
		}
		for _, th := range []int64{0, 1, 250e6, 1<<63 - 1} {
			for _, add := range []struct {
				name string
				f    func(int64, uint)
			}{{"Add", c.Add}, {"AddFlag", c.AddFlag}} {
				want := make([]uint64, len(b)+1)
				c.Reset()
				cut, shift := c.Cut(th), c.Shift()
				for _, ns := range gapsToCheck(b, rng) {
					want[bucket(b, timeline.Seconds(ns))]++
					if uint64(ns) < cut {
						add.f(ns, shift)
					} else {
						c.AddAny(ns)
					}
				}
				if got := c.Counts(); !slices.Equal(got, want) {
					t.Fatalf("bounds %v, stall threshold %d ns, %s: counted %v, want %v", b, th, add.name, got, want)
				}
			}
		}
		c.Reset()
		if got := c.Counts(); slices.ContainsFunc(got, func(n uint64) bool { return n != 0 }) {
			t.Fatalf("bounds %v: counts %v after Reset", b, got)
		}
	}
}

// TestCutStopsAtStallsAndTheTable checks Cut: a stall (over the threshold) and a gap beyond the
// linear table are not for Add, nor is a negative gap, compared as unsigned.
func TestCutStopsAtStallsAndTheTable(t *testing.T) {
	c := NewCounter(New(itlconv.GapBuckets))
	if got, want := c.Cut(250e6), uint64(250e6+1); got != want {
		t.Errorf("Cut(250 ms) = %d, want %d: the first stall", got, want)
	}
	if got, want := c.Cut(10e9), uint64(1<<32); got != want {
		t.Errorf("Cut(10 s) = %d, want %d: the end of the linear table", got, want)
	}
	if neg := int64(-1); uint64(neg) < c.Cut(1<<63-1) {
		t.Error("a negative gap passes Cut")
	}
}

// TestLinearTableCoversTheGaps checks the reach of the linear table (Lin): with the default gap
// boundaries, every gap up to 4.3 s takes it (cells of 2^20 ns, 1.05 ms: none holds two of the
// thresholds 1, 2, 5, 7.5 and 10 ms); thresholds 1 ns apart leave cells of 2 ns, the narrowest a
// search ever needs; more than 254 boundaries leave the search alone.
// TestTablesMatchBinarySearch checks the buckets themselves on every path.
func TestLinearTableCoversTheGaps(t *testing.T) {
	if tab := New(itlconv.GapBuckets); tab.linShift != 20 || tab.linLimit != 1<<32 {
		t.Errorf("gap boundaries: cells of 2^%d ns up to %d ns, want 2^20 up to 2^32", tab.linShift, tab.linLimit)
	}
	if tab := New([]float64{1e-9, 2e-9, 3e-9, 4e-9}); tab.linShift != 1 {
		t.Errorf("boundaries 1 ns apart: cells of 2^%d ns, want 2^1", tab.linShift)
	}
	if tab := New(manyBounds(256)); tab.linLimit != 0 {
		t.Errorf("256 boundaries: linear table up to %d ns, want none", tab.linLimit)
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
