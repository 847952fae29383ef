package itlmetricsconnector

import (
	"math/rand/v2"
	"testing"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/itlconv/timeline"
)

// TestGapBucketMatchesBinarySearch checks the table-driven bucket lookup against the plain binary
// search over every default boundary set, at the boundaries and around them.
func TestGapBucketMatchesBinarySearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, b := range [][]float64{itlconv.GapBuckets, itlconv.DurationBuckets, itlconv.TokenBuckets, itlconv.ServerTPOTBuckets,
		itlconv.ServerTTFTBuckets, {0.0000001, 3.3333}, {-1, 1e-9, 1.5e-9, 0.1 + 0.2, 1e300}} {
		bs := newBounds(b)
		check := func(ns int64) {
			v := timeline.Seconds(ns)
			if got, want := bs.gapBucket(ns), bucket(b, v); got != want {
				t.Fatalf("bounds %v: %d ns in bucket %d, want %d", b, ns, got, want)
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
	}
}
