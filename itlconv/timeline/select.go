package timeline

import "math/bits"

// The gap percentiles without sorting every gap. A reply of n chunks has n-1 gaps; Percentile over
// all of them sorted reads at most seven ranks (two each for p50, p90 and p99, and the largest).
// A radix selection finds exactly the values a sort would put at those ranks, in linear time, and
// the figures are the same to the bit: they are read from the same ranks and interpolated by the
// same Percentile.
//
// Why a radix selection: gaps are integers (nanoseconds) in a known range, so one counting pass
// tells which of 512 buckets of that range each wanted rank falls in, and only the gaps in those
// buckets need any further work. A quickselect moves every gap at least twice, with comparisons
// whose outcome the CPU cannot predict (every gap of a span is new to it), or pays for that with
// branch-free partitions: the radix selection took half the time of the branch-free quickselect it
// replaced (BENCHMARKS.md). And whatever the gaps, it takes at most thirteen counting passes: no
// input makes it quadratic.
//
// The range comes from the reader, which counted the smallest and largest gap as it read the
// arrivals (GapStats), and the first level reads the gaps from the offsets as it goes, so that a
// reply's gaps are not walked once more for their range, nor stored, before the selection starts.

// gapQuantiles are the quantiles Compute reports.
var gapQuantiles = [3]float64{0.50, 0.90, 0.99}

// numRanks is the number of ranks gapPercentiles reads.
const numRanks = 2*len(gapQuantiles) + 1

// gapPercentiles returns the largest gap and the p50, p90 and p99 of the timeline's gaps, in
// seconds, as Percentile over the sorted gaps would. The timeline has at least two chunks, and gs
// are its GapStats, which the caller's reader counted as it read the arrivals: their smallest and
// largest gap give the first counting pass its range without a pass of its own. (Stats that do not
// bound every gap are noticed, and the range is then counted here.) buf is a reusable buffer (for
// twice the gaps and one more, in nanoseconds); the (possibly grown) buffer is returned.
func (t Timeline) gapPercentiles(gs GapStats, buf []int64) (maxGap float64, p [len(gapQuantiles)]float64, out []int64) {
	n := len(t.Offsets) - 1
	if cap(buf) < 2*n+1 {
		buf = make([]int64, 2*n+1)
	}
	buf = buf[:2*n+1]
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
	if !selectGapRanks(t.Offsets, gs.MinNs, gs.MaxNs, sorted[:], vals[:], buf) {
		gs = t.Stats(0)
		selectGapRanks(t.Offsets, gs.MinNs, gs.MaxNs, sorted[:], vals[:], buf)
	}
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
	return Seconds(vals[numRanks-1]), p, buf
}

// numBuckets is how many buckets each counting pass divides its range into: about twice the gaps
// of a usual reply, so that a wanted rank's bucket holds few values even when one long stall
// stretches the range tenfold.
const (
	bucketBits = 9
	numBuckets = 1 << bucketBits
)

// levelBits is how many bits of bucket a counting pass below the first uses for n values (more
// than smallSelect): about one bucket a value, up to numBuckets. A level below the first counts the
// values of one bucket of the level above, often a few dozen (the gaps that cluster around a
// stream's usual pace), and walking 512 buckets to find their ranks cost more than counting them.
func levelBits(n int) uint {
	return uint(min(bits.Len(uint(n)), bucketBits))
}

// smallSelect is the size below which the selection sorts instead of counting: counting clears and
// walks 512 buckets, which costs more than sorting a few values.
const smallSelect = 24

// selectGapRanks is selectRanks over the gaps between consecutive offsets, with base 0: its first
// counting pass computes each gap from the offsets, and its copying pass again, so that only the
// gaps in a wanted rank's bucket are ever stored. buf holds twice the gaps and one more. It is false,
// with vals unset, when a gap lies outside [lo, hi].
//
// Its loops are selectRanks's over the offsets instead of values. Storing every gap in the counting
// pass, so that the rest of the level could be selectRanks's own, made the selection 11 to 26%
// slower (BENCHMARKS.md).
func selectGapRanks(offs []int64, lo, hi int64, ranks []int, vals, buf []int64) bool {
	n := len(offs) - 1
	if lo > hi {
		return false
	}
	width := uint64(hi) - uint64(lo)
	gaps := buf[:n]
	if lo == hi || n <= smallSelect {
		if !storeGaps(offs, gaps, lo, width) {
			return false
		}
		selectRanks(gaps, lo, hi, ranks, 0, vals, buf[n:])
		return true
	}
	shift := bucketShift(lo, hi, bucketBits)
	var c counts
	prev := offs[0]
	for _, o := range offs[1:] {
		d := uint64(o-prev) - uint64(lo)
		prev = o
		if d > width { // wrong stats: never so for a reader's own
			return false
		}
		b := (d >> shift) & (numBuckets - 1)
		c.count[b]++
	}
	gr := c.locate(ranks, 0)
	if gr.n == 1 && gr.g[1].size == n {
		// Every gap is in one bucket: count again within it, from the gaps stored.
		storeGaps(offs, gaps, lo, width)
		blo, bhi := bucketRange(lo, hi, shift, gr.g[1].bucket)
		selectRanks(gaps, blo, bhi, ranks, 0, vals, buf[n:])
		return true
	}
	next := gr.starts()
	prev = offs[0]
	if gr.placed < n/wantedFew {
		for _, o := range offs[1:] {
			g := o - prev
			prev = o
			if k := c.count[((uint64(g)-uint64(lo))>>shift)&(numBuckets-1)]; k < 0 {
				buf[next[-k]] = g
				next[-k]++
			}
		}
	} else {
		for _, o := range offs[1:] {
			g := o - prev
			prev = o
			k := c.count[((uint64(g)-uint64(lo))>>shift)&(numBuckets-1)]
			grp, mark := -k&(k>>31), ^(k>>31)&unwanted
			at := next[grp]
			buf[at] = g
			next[grp|mark] = at + 1
		}
	}
	gr.selectEach(lo, hi, shift, ranks, vals, buf[:gr.placed], buf[n:])
	return true
}

// storeGaps writes the gaps between consecutive offsets to gaps. It is false when one lies outside
// [lo, lo+width], which the counting pass would put in the wrong bucket.
func storeGaps(offs, gaps []int64, lo int64, width uint64) bool {
	for i := range gaps {
		g := offs[i+1] - offs[i]
		if uint64(g)-uint64(lo) > width {
			return false
		}
		gaps[i] = g
	}
	return true
}

// selectRanks sets vals[k] to the value a sort of a would put at index ranks[k]-base. ranks ascend
// (repeats allowed) and lie in [base, base+len(a)); every value of a lies in [lo, hi]. a is
// reordered, and scratch, of more than len(a) values, is overwritten.
//
// One counting pass puts each value in one of up to 512 equal buckets of [lo, hi], about one a
// value (levelBits), and finds the bucket of each wanted rank; a second pass copies the values of
// only those buckets to scratch, grouped by bucket, and each group is selected from in turn, with a
// the scratch of the next level. A level counts more than smallSelect values, in at least 32
// buckets, so a bucket is at least 32 times narrower than its range, and after at most twelve
// levels below the first (with its 512) a group's values are equal.
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
		shift := bucketShift(lo, hi, levelBits(len(a)))
		var c counts
		for _, v := range a {
			b := ((uint64(v) - uint64(lo)) >> shift) & (numBuckets - 1)
			c.count[b]++
		}
		gr := c.locate(ranks, base)
		if gr.n == 1 && gr.g[1].size == len(a) {
			// Every value is in one bucket: count again within it, with nothing to move.
			lo, hi = bucketRange(lo, hi, shift, gr.g[1].bucket)
			continue
		}
		// The values of the wanted buckets, grouped: a wanted bucket's count is now minus its group.
		next := gr.starts()
		if gr.placed < len(a)/wantedFew {
			for _, v := range a {
				if k := c.count[((uint64(v)-uint64(lo))>>shift)&(numBuckets-1)]; k < 0 {
					scratch[next[-k]] = v
					next[-k]++
				}
			}
		} else {
			for _, v := range a {
				k := c.count[((uint64(v)-uint64(lo))>>shift)&(numBuckets-1)]
				grp, mark := -k&(k>>31), ^(k>>31)&unwanted
				at := next[grp]
				scratch[at] = v
				next[grp|mark] = at + 1
			}
		}
		gr.selectEach(lo, hi, shift, ranks, vals, scratch[:gr.placed], a)
		return
	}
}

// bucketShift is the shift that puts a value of [lo, hi], as its distance from lo, in one of
// 1<<b buckets. The distance is taken as an unsigned number: hi-lo fits even where it would
// overflow an int64.
func bucketShift(lo, hi int64, b uint) uint {
	return uint(bits.Len64((uint64(hi) - uint64(lo)) >> b))
}

// bucketRange returns the smallest and largest value bucket b of [lo, hi] can hold.
func bucketRange(lo, hi int64, shift uint, b int) (int64, int64) {
	blo := uint64(lo) + uint64(b)<<shift
	return int64(blo), int64(blo + min(uint64(1)<<shift-1, uint64(hi)-blo))
}

// counts are one counting pass's buckets.
type counts struct {
	count [numBuckets]int32
}

// block returns the values in the 16 buckets from b, a multiple of 16. Summing them here, when
// locate would skip them, costs less than counting blocks in the counting pass, where values of
// one block in a row (gaps of whole milliseconds, say) make each count wait for the one before.
func (c *counts) block(b int) int32 {
	x := c.count[b : b+16 : b+16]
	return ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7])) +
		((x[8] + x[9]) + (x[10] + x[11])) + ((x[12] + x[13]) + (x[14] + x[15]))
}

// group is a bucket a wanted rank falls in.
type group struct {
	bucket      int
	first, size int // the bucket's values are first..first+size-1 in the sorted order
	at          int // their place in the copying pass's output
}

// groups are the buckets of the wanted ranks, in ascending order, from g[1] (g[0] is unused, so
// that a bucket marked with its group reads as a negative count).
type groups struct {
	g      [numRanks + 1]group
	n      int
	placed int // the values of all groups
}

// locate finds the bucket of each rank (ascending, all in [base, base+the values counted)) and
// marks each such bucket's count with minus its group.
func (c *counts) locate(ranks []int, base int) groups {
	var gr groups
	k := 0
	b, before := 0, base // before: the values in the buckets below b, after base
	for k < len(ranks) {
		for r := ranks[k]; ; { // to the bucket of rank r
			if b%16 == 0 && before+int(c.block(b)) <= r {
				before += int(c.block(b))
				b += 16
			} else if before+int(c.count[b]) <= r {
				before += int(c.count[b])
				b++
			} else {
				break
			}
		}
		size := int(c.count[b])
		gr.n++
		gr.g[gr.n] = group{bucket: b, first: before, size: size, at: gr.placed}
		c.count[b] = -int32(gr.n) // the bucket's group, from now on
		gr.placed += size
		for k < len(ranks) && ranks[k] < before+size {
			k++
		}
		before += size
		b++
	}
	return gr
}

// wantedFew: when fewer than one value in wantedFew is in a wanted bucket, the copying pass
// branches on whether each value is (see starts): the branch is then mostly not taken, and
// predicted, and costs less than writing every value.
const wantedFew = 4

// unwanted is where the copying pass notes the place after a value of no group: a slot of next
// above every group's, from which no place is read.
const unwanted = 16

// starts returns where each group's values go in the copying pass's output, by group; and for
// group 0, the values of no group, one place past them all, which no group's value overwrites.
//
// Where many values are wanted, the copying pass writes every value, each to its group's next place
// or to that one, without a branch: a branch on whether a value is wanted would be mispredicted for
// about every other value where the wanted buckets hold many (gaps that cluster in a few of them,
// beside a stall that stretches the range), at some 15 cycles each. A value of no group notes the
// next place in next[unwanted], which nothing reads, and not in next[0]: a store there would make
// every load of next[0] wait for the one before.
func (gr *groups) starts() [unwanted + 1]int {
	var next [unwanted + 1]int
	next[0] = gr.placed
	for g := 1; g <= gr.n; g++ {
		next[g] = gr.g[g].at
	}
	return next
}

// selectEach sets the values of the ranks from the groups' values, copied grouped into grouped; a
// group whose bucket held more than one value is selected from at the next level, with scratch.
func (gr *groups) selectEach(lo, hi int64, shift uint, ranks []int, vals, grouped, scratch []int64) {
	k := 0
	for g := 1; g <= gr.n; g++ {
		x := gr.g[g]
		m := 0 // the group's ranks are the next m
		for k+m < len(ranks) && ranks[k+m] < x.first+x.size {
			m++
		}
		blo, bhi := bucketRange(lo, hi, shift, x.bucket)
		selectRanks(grouped[x.at:x.at+x.size], blo, bhi, ranks[k:k+m], x.first, vals[k:k+m], scratch)
		k += m
	}
}

func insertionSort[T int | int64](a []T) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
