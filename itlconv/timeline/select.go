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

// selectRanks rearranges a so that each index in ranks holds the value a sort would put there.
// Each step splits a part that holds a wanted rank three ways around a pivot (the median of its
// first, middle and last values): below, equal, above. The equal run is in place, and only the
// parts that still hold a wanted rank are split again; short parts are sorted directly.
func selectRanks(a []int64, ranks []int) {
	lo, hi := 0, len(a)-1
	var stack [64][2]int
	sp := 0
	for {
		if lo < hi && hasRank(ranks, lo, hi) {
			if hi-lo < 12 {
				insertionSort(a[lo : hi+1])
			} else if sp < len(stack) {
				i, j := partition3(a, lo, hi) // a[i:j] equal the pivot, in place
				stack[sp] = [2]int{j, hi}
				sp++
				hi = i - 1
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

// hasRank reports whether a wanted rank lies in [lo, hi].
func hasRank(ranks []int, lo, hi int) bool {
	for _, r := range ranks {
		if r >= lo && r <= hi {
			return true
		}
	}
	return false
}

// partition3 rearranges a[lo:hi+1] into a[lo:i] below the pivot, a[i:j] equal to it and a[j:hi+1]
// above it, and returns i and j; the pivot is one of the values, so j > i and both other parts are
// shorter than the whole. Gaps in random order make a comparison's branch unpredictable, and a
// mispredicted branch costs more than the comparison: both passes therefore swap every element and
// advance the boundary by the comparison's result as a number (the sign of a difference: the gaps
// of a timeline lie within MaxDuration of each other, far from overflowing).
func partition3(a []int64, lo, hi int) (i, j int) {
	x, y, z := a[lo], a[lo+(hi-lo)/2], a[hi]
	pivot := max(min(x, y), min(max(x, y), z))
	part := a[lo : hi+1]
	n := 0
	for k, v := range part { // below the pivot to the front
		part[k] = part[n]
		part[n] = v
		n += int(uint64(v-pivot) >> 63)
	}
	m := n
	for k := n; k < len(part); k++ { // then the values equal to it (at most the pivot, of those left)
		v := part[k]
		part[k] = part[m]
		part[m] = v
		m += int(uint64(pivot-v)>>63) ^ 1
	}
	return lo + n, lo + m
}

func insertionSort(a []int64) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
