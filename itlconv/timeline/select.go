package timeline

// The gap percentiles without sorting every gap. A reply of n chunks has n-1 gaps; Percentile over
// all of them sorted reads at most seven ranks (two each for p50, p90 and p99, and the largest).
// Quickselect places exactly those ranks where a sort would, in linear time, and the figures are
// the same to the bit: they are read from the same ranks and interpolated by the same Percentile.

// gapQuantiles are the quantiles Compute reports.
var gapQuantiles = [3]float64{0.50, 0.90, 0.99}

// gapPercentiles returns the largest gap and the p50, p90 and p99 of the timeline's gaps, in
// seconds, as Percentile over the sorted gaps would. The timeline has at least two chunks. buf is a
// reusable buffer for the gaps in nanoseconds; the (possibly grown) buffer is returned.
func (t Timeline) gapPercentiles(buf []int64) (maxGap float64, p [len(gapQuantiles)]float64, out []int64) {
	buf = buf[:0]
	for i := 1; i < len(t.Offsets); i++ {
		buf = append(buf, t.Offsets[i]-t.Offsets[i-1])
	}
	n := len(buf)
	var ranks [2*len(gapQuantiles) + 1]int
	for j, q := range gapQuantiles {
		lo, _ := rank(n, q)
		ranks[2*j], ranks[2*j+1] = lo, min(lo+1, n-1)
	}
	ranks[len(ranks)-1] = n - 1
	selectRanks(buf, ranks[:])
	for j, q := range gapQuantiles {
		lo, frac := rank(n, q)
		p[j] = Seconds(buf[lo])
		if frac != 0 {
			p[j] = lerp(p[j], Seconds(buf[lo+1]), frac)
		}
	}
	return Seconds(buf[n-1]), p, buf
}

// selectRanks reorders a so that a[r] holds the value a sort would put there, for every r in ranks
// (in any order, repeats allowed): quickselect that splits only the parts holding a rank to place.
func selectRanks(a []int64, ranks []int) {
	lo, hi := 0, len(a)-1
	var stack [64][2]int
	sp := 0
	for {
		if lo < hi && hasRank(ranks, lo, hi) {
			if hi-lo < 12 {
				insertionSort(a[lo : hi+1])
			} else if sp < len(stack) {
				p := partition(a, lo, hi) // a[p] is in place
				stack[sp] = [2]int{p + 1, hi}
				sp++
				hi = p - 1
				continue
			} else {
				insertionSort(a[lo : hi+1]) // a pathological depth: finish this part directly
			}
		}
		if sp == 0 {
			return
		}
		sp--
		lo, hi = stack[sp][0], stack[sp][1]
	}
}

func hasRank(ranks []int, lo, hi int) bool {
	for _, r := range ranks {
		if r >= lo && r <= hi {
			return true
		}
	}
	return false
}

// partition splits a[lo..hi] (at least 3 values) around a median-of-three pivot and returns the
// pivot's final index: every value before it is <= it, every value after it is >= it.
func partition(a []int64, lo, hi int) int {
	mid := lo + (hi-lo)/2
	if a[mid] < a[lo] {
		a[mid], a[lo] = a[lo], a[mid]
	}
	if a[hi] < a[lo] {
		a[hi], a[lo] = a[lo], a[hi]
	}
	if a[hi] < a[mid] {
		a[hi], a[mid] = a[mid], a[hi]
	}
	// a[lo] <= a[mid] <= a[hi]: the median goes to hi-1 as the pivot; lo and hi bound the scans.
	a[mid], a[hi-1] = a[hi-1], a[mid]
	pivot := a[hi-1]
	i, j := lo, hi-1
	for {
		for i++; a[i] < pivot; i++ {
		}
		for j--; a[j] > pivot; j-- {
		}
		if i >= j {
			break
		}
		a[i], a[j] = a[j], a[i]
	}
	a[i], a[hi-1] = a[hi-1], a[i]
	return i
}

func insertionSort(a []int64) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
