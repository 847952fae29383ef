package timeline

import "math/bits"

// The gap percentiles without sorting every gap. A reply of n chunks has n-1 gaps; Percentile over
// all of them sorted reads at most seven ranks (two each for p50, p90 and p99, and the largest).
// A radix selection finds exactly the values a sort would put at those ranks, in linear time, and
// the figures are the same to the bit: they are read from the same ranks and interpolated by the
// same Percentile.
//
// Why a radix selection: gaps are integers (nanoseconds) in a known range, so one counting pass
// tells which of 512 buckets of that range each wanted rank falls in, and only the few gaps in
// those buckets need any further work. A quickselect moves every gap at least twice, with
// comparisons whose outcome the CPU cannot predict (every gap of a span is new to it), or pays for
// that with branch-free partitions: BenchmarkGapPercentiles gives 1.5 µs for 199 gaps against
// 2.8 µs for the branch-free quickselect this replaced, and 1.9 against 2.2 µs on gaps of whole
// milliseconds with a stall, where many gaps are equal (BENCHMARKS.md). And whatever the gaps, it
// takes at most eight counting passes: no input makes it quadratic.

// gapQuantiles are the quantiles Compute reports.
var gapQuantiles = [3]float64{0.50, 0.90, 0.99}

// numRanks is the number of ranks gapPercentiles reads.
const numRanks = 2*len(gapQuantiles) + 1

// gapPercentiles returns the largest gap and the p50, p90 and p99 of the timeline's gaps, in
// seconds, as Percentile over the sorted gaps would. The timeline has at least two chunks. buf is a
// reusable buffer (for twice the gaps, in nanoseconds); the (possibly grown) buffer is returned.
func (t Timeline) gapPercentiles(buf []int64) (maxGap float64, p [len(gapQuantiles)]float64, out []int64) {
	n := len(t.Offsets) - 1
	if cap(buf) < 2*n {
		buf = make([]int64, 2*n)
	}
	buf = buf[:2*n]
	gaps, scratch := buf[:n], buf[n:]
	prev := t.Offsets[0]
	lo, hi := t.Offsets[1]-prev, t.Offsets[1]-prev
	for i, o := range t.Offsets[1:] {
		g := o - prev
		prev = o
		gaps[i] = g
		lo, hi = min(lo, g), max(hi, g)
	}
	// The ranks, ascending, as selectRanks needs them: on short timelines the pairs overlap (with
	// two gaps, p50 reads ranks 0 and 1, and so does p90).
	var ranks [numRanks]int
	for j, q := range gapQuantiles {
		r, _ := rank(n, q)
		ranks[2*j], ranks[2*j+1] = r, min(r+1, n-1)
	}
	ranks[numRanks-1] = n - 1
	sorted := ranks
	insertionSort(sorted[:])
	var vals [numRanks]int64
	selectRanks(gaps, lo, hi, sorted[:], 0, vals[:], scratch)
	at := func(r int) int64 { // the value at rank r
		i := 0
		for sorted[i] != r {
			i++
		}
		return vals[i]
	}
	for j, q := range gapQuantiles {
		r, frac := rank(n, q)
		p[j] = Seconds(at(r))
		if frac != 0 {
			p[j] = lerp(p[j], Seconds(at(r+1)), frac)
		}
	}
	return Seconds(hi), p, buf
}

// numBuckets is how many buckets each counting pass divides its range into: about twice the gaps
// of a usual reply, so that a wanted rank's bucket holds few values even when one long stall
// stretches the range tenfold.
const (
	bucketBits = 9
	numBuckets = 1 << bucketBits
)

// smallSelect is the size below which selectRanks sorts instead of counting: counting clears and
// walks 512 buckets, which costs more than sorting a few values.
const smallSelect = 24

// selectRanks sets vals[k] to the value a sort of a would put at index ranks[k]-base. ranks ascend
// (repeats allowed) and lie in [base, base+len(a)); every value of a lies in [lo, hi]. a is
// reordered, and scratch, of at least len(a) values, is overwritten.
//
// One counting pass puts each value in one of 512 equal buckets of [lo, hi] and finds the bucket
// of each wanted rank; a second pass copies the values of only those buckets to scratch, grouped by
// bucket, and each group is selected from in turn, with a the scratch of the next level. A bucket
// is 512 times narrower than its range, so after at most eight levels a group's values are equal.
func selectRanks(a []int64, lo, hi int64, ranks []int, base int, vals []int64, scratch []int64) {
	for {
		if lo == hi {
			for k := range ranks {
				vals[k] = lo
			}
			return
		}
		if len(a) <= smallSelect {
			insertionSort(a)
			for k, r := range ranks {
				vals[k] = a[r-base]
			}
			return
		}
		// The values' distance from lo as unsigned numbers: hi-lo fits even where it would overflow
		// an int64.
		shift := uint(bits.Len64((uint64(hi) - uint64(lo)) >> bucketBits))
		// count, and per block of 16 buckets, so that finding a rank's bucket skips the empty and
		// the lower ones 16 at a time.
		var count [numBuckets]int32
		var blocks [numBuckets / 16]int32
		for _, v := range a {
			b := ((uint64(v) - uint64(lo)) >> shift) & (numBuckets - 1)
			count[b]++
			blocks[b/16]++
		}

		// The group of each bucket a wanted rank falls in: the bucket, where its values start in
		// the sorted order, and where they go in scratch.
		type group struct {
			bucket      int
			first, size int // the bucket's values are first..first+size-1 in the sorted order
			at          int // their place in scratch
		}
		var groups [numRanks + 1]group // groups[0] is unused
		ng, k, placed := 0, 0, 0
		b, before := 0, base // before: the values in the buckets below b, after base
		for k < len(ranks) {
			for r := ranks[k]; ; { // to the bucket of rank r
				if b%16 == 0 && before+int(blocks[b/16]) <= r {
					before += int(blocks[b/16])
					b += 16
				} else if before+int(count[b]) <= r {
					before += int(count[b])
					b++
				} else {
					break
				}
			}
			c := int(count[b])
			ng++
			groups[ng] = group{bucket: b, first: before, size: c, at: placed}
			count[b] = -int32(ng) // the bucket's group, from now on
			placed += c
			for k < len(ranks) && ranks[k] < before+c {
				k++
			}
			before += c
			b++
		}
		bucketRange := func(b int) (int64, int64) {
			blo := uint64(lo) + uint64(b)<<shift
			return int64(blo), int64(blo + min(uint64(1)<<shift-1, uint64(hi)-blo))
		}
		if ng == 1 && groups[1].size == len(a) {
			// Every value is in one bucket: count again within it, with nothing to move.
			lo, hi = bucketRange(groups[1].bucket)
			continue
		}

		// The values of the wanted buckets, grouped: a wanted bucket's count is now minus its group.
		// Most values are in no wanted bucket, so the branch is mostly not taken, and predicted.
		var next [numRanks + 1]int
		for g := 1; g <= ng; g++ {
			next[g] = groups[g].at
		}
		for _, v := range a {
			if c := count[((uint64(v)-uint64(lo))>>shift)&(numBuckets-1)]; c < 0 {
				g := -c
				scratch[next[g]] = v
				next[g]++
			}
		}
		k = 0
		for g := 1; g <= ng; g++ {
			gr := groups[g]
			m := 0 // the group's ranks are the next m
			for k+m < len(ranks) && ranks[k+m] < gr.first+gr.size {
				m++
			}
			blo, bhi := bucketRange(gr.bucket)
			selectRanks(scratch[gr.at:gr.at+gr.size], blo, bhi, ranks[k:k+m], gr.first, vals[k:k+m], a)
			k += m
		}
		return
	}
}

func insertionSort[T int | int64](a []T) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
