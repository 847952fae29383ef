// Package buckets finds the bucket of a gap, in nanoseconds, among a histogram's explicit
// boundaries, in seconds, exactly where a binary search of the float boundaries would put it, with
// integer look-ups instead of the search: the itl_metrics connector's per-gap work. A Counter does
// the same work for a reader that counts the gaps as it reads the arrivals.
package buckets

import (
	"math"
	"math/bits"

	"github.com/otelitl/itl/itlconv/timeline"
)

// Table holds a histogram's explicit boundaries, with what the per-gap loop needs to find a gap's
// bucket on integers, without a search:
//   - ns[i] is the largest number of nanoseconds whose value in seconds (timeline.Seconds) is at
//     most b[i], so that a gap of g ns falls in the first bucket i with g <= ns[i], exactly where
//     the float comparison with b would put it; ns ends with math.MaxInt64, which no gap exceeds,
//     so that no step needs a length check;
//   - lin[c] is the count of thresholds below the smallest gap of cell c, the gaps from c<<linShift
//     to (c+1)<<linShift - 1, for the gaps below linLimit. linShift is the largest that leaves at
//     most one threshold inside any cell, so that a gap's bucket is lin[c] plus one comparison,
//     added without a branch (a branch would be mispredicted for about half the gaps that share
//     a cell with a threshold). For the default gap boundaries the cells are 1.05 ms wide and
//     cover the gaps up to 4.3 s, which is nearly every gap;
//   - start[k] is where a search starts for a larger gap of key k (its bit length and the three
//     bits after its leading one, an eighth of an octave): the count of thresholds below the
//     smallest gap of that key, every one of them below any gap of the key.
type Table struct {
	b        []float64
	ns       [tableSize]int64 // the thresholds, then math.MaxInt64 to the end
	lin      [linSize]uint8
	linShift uint
	linLimit uint64 // 0 when lin's counts cannot hold the boundaries (255 or more)
	start    [tableSize]uint16
}

// tableSize holds every key (64 bit lengths, 8 eighths each) and every threshold (at most 256
// boundaries and the sentinel): indexes masked with tableSize-1 need no bounds check.
const tableSize = 64 << 3

// linSize is the number of cells of the linear table: 4 KiB, which stays in the L1 cache.
const linSize = 1 << 12

// maxLinShift bounds the cells' width (2^40 ns is 18 minutes): wider cells would cover gaps no
// timeline holds.
const maxLinShift = 40

// New makes the Table of the boundaries b, which must be sorted (the connector's config checks
// them). It keeps b.
func New(b []float64) *Table {
	t := &Table{b: b}
	for i := range t.ns {
		t.ns[i] = math.MaxInt64
	}
	for i, x := range b {
		t.ns[i] = maxNanos(x)
	}
	for k := range t.start {
		low, ok := lowestOfKey(k)
		if !ok {
			continue // no gap has this key
		}
		n := 0
		for n < len(b) && t.ns[n] < low {
			n++
		}
		t.start[k] = uint16(n)
	}
	if len(b) < math.MaxUint8 {
		// Cells 2 ns wide always pass: a gap can exceed only the smaller of its cell's two values.
		for shift := uint(maxLinShift); !t.fillLinear(shift) && shift > 1; shift-- {
		}
	}
	return t
}

// fillLinear fills the linear table with cells 2^shift ns wide, and reports whether every cell
// holds at most one threshold that a gap of the cell can exceed. It sets linLimit only then.
func (t *Table) fillLinear(shift uint) bool {
	n := 0
	for c := range t.lin {
		low := int64(c) << shift
		for n < len(t.b) && t.ns[n] < low {
			n++
		}
		// the largest gap of the cell exceeds threshold n+1 too: more than one step
		if high := int64(c+1)<<shift - 1; t.ns[n+1] < high {
			return false
		}
		t.lin[c] = uint8(n)
	}
	t.linShift, t.linLimit = shift, uint64(linSize)<<shift
	return true
}

// gapKey is the table key of a gap of ns >= 0 nanoseconds: its bit length, and the three bits that
// follow its leading one.
func gapKey(ns int64) int {
	l := bits.Len64(uint64(ns))
	// The shift is masked so that the compiler emits a bare shift: 65-l is 64 only for l = 1,
	// where a shift by 0 gives the same answer (1 >> 61 is 0).
	return l<<3 | int(uint64(ns)<<((65-l)&63)>>61)
}

// lowestOfKey returns the smallest non-negative int64 with gapKey k, and false when none has it.
func lowestOfKey(k int) (int64, bool) {
	l, sub := k>>3, int64(k&7)
	switch {
	case l == 0:
		return 0, sub == 0
	case l < 4: // fewer than three bits follow the leading one: look for it
		for g := int64(1) << (l - 1); g < int64(1)<<l; g++ {
			if gapKey(g) == k {
				return g, true
			}
		}
		return 0, false
	case l > 63:
		return 0, false
	}
	return int64(1)<<(l-1) | sub<<(l-4), true
}

// maxNanos is the largest int64 g with timeline.Seconds(g) <= x (math.MinInt64 when there is none).
func maxNanos(x float64) int64 {
	switch {
	case x >= timeline.Seconds(math.MaxInt64):
		return math.MaxInt64
	case x < timeline.Seconds(math.MinInt64):
		return math.MinInt64
	}
	g := int64(math.Floor(x * 1e9))
	for g < math.MaxInt64 && timeline.Seconds(g+1) <= x {
		g++
	}
	for g > math.MinInt64 && timeline.Seconds(g) > x {
		g--
	}
	return g
}

// Lin returns the bucket of ns, as Search does, for 0 <= ns < linLimit: one look-up and one comparison.
// It is small enough to be inlined into the per-gap loop, which a function choosing between it and
// Search would not be.
func (t *Table) Lin(ns int64) int {
	// The shift is masked so that the compiler emits a bare shift: linShift is at most 40.
	i := int(t.lin[(ns>>(t.linShift&63))&(linSize-1)])
	return i + b2i(t.ns[i&(tableSize-1)] < ns)
}

// Search returns the index of the bucket (b[i-1], b[i]] that holds ns nanoseconds in seconds
// (timeline.Seconds), the first boundary at or above it, or len(b), for any ns >= 0: the key
// table's start, then a step per threshold at most.
func (t *Table) Search(ns int64) int {
	i := int(t.start[gapKey(ns)&(tableSize-1)])
	for t.ns[i&(tableSize-1)] < ns {
		i++
	}
	return i
}

// b2i is 1 for true and 0 for false; the compiler makes it a flag read, not a branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Bounds returns the boundaries the Table was made of.
func (t *Table) Bounds() []float64 { return t.b }

// LinLimit returns the end of the linear table: Lin takes the gaps below it. It is 0 when the
// boundaries are too many for the table (255 or more), and Search then takes every gap.
func (t *Table) LinLimit() uint64 { return t.linLimit }

// Counter counts gaps into the buckets of a Table, for a reader that counts them as it reads the
// arrivals, in the same loop. It holds a copy of the table's linear part beside the counts, so
// that the loop reaches both through one pointer: a loop that reads arrivals from pdata has no
// register to spare, and with a second pointer the compiler moved its state to the stack
// (BENCHMARKS.md).
type Counter struct {
	lin    [linSize]uint8
	ns     [maxLinBuckets]int64 // the table's thresholds that lin indexes, then math.MaxInt64
	shift  uint
	limit  uint64
	t      *Table
	counts [maxLinBuckets]uint64
	n      int // the number of buckets, len(t.b)+1
}

// maxLinBuckets bounds the buckets of a Table with a linear table (fewer than 255 boundaries, see
// New): indexes masked with maxLinBuckets-1 need no bounds check.
const maxLinBuckets = 256

// NewCounter returns a Counter of t's buckets, all at zero, or nil when t has no linear table.
func NewCounter(t *Table) *Counter {
	if t.linLimit == 0 {
		return nil
	}
	c := &Counter{lin: t.lin, shift: t.linShift, limit: t.linLimit, t: t, n: len(t.b) + 1}
	copy(c.ns[:], t.ns[:])
	return c
}

// Reset sets every count to zero.
func (c *Counter) Reset() { clear(c.counts[:c.n]) }

// Counts returns the counts, one per bucket, as Table.Search numbers them.
func (c *Counter) Counts() []uint64 { return c.counts[:c.n] }

// Cut returns the smallest gap, as unsigned, that a reader counting stalls over th nanoseconds
// (th >= 0) does not hand to Add: a stall, a gap beyond the linear table, or a negative one. Such
// gaps, rare, take the reader's slower path, which counts a gap of at least 0 with AddAny; the
// loop itself needs one comparison for all three.
func (c *Counter) Cut(th int64) uint64 { return min(uint64(th)+1, c.limit) }

// Shift returns the width of the linear table's cells, as the shift Add takes: a loop keeps it in
// a register (a variable shift needs CX), where Add would load it for every gap.
func (c *Counter) Shift() uint { return c.shift & 63 }

// Add counts a gap of 0 <= ns < Cut nanoseconds; shift is Shift(). It inlines.
//
// It takes the last step with a branch, where Table.Lin and AddFlag add a flag, for a loop that
// waits on its loads, as one over span events, each behind a pointer, does: there the branch,
// mispredicted for some of the gaps that share a cell with a boundary, costs less than the
// flag's instructions (BENCHMARKS.md: the connector 7% faster on event spans than with the flag,
// on arrivals at whole milliseconds and at any nanosecond alike).
func (c *Counter) Add(ns int64, shift uint) {
	i := int(c.lin[(ns>>shift)&(linSize-1)])
	if c.ns[i&(maxLinBuckets-1)] < ns {
		i++
	}
	c.counts[i&(maxLinBuckets-1)]++
}

// AddFlag is Add with the last step added as a flag, as Table.Lin does, for a loop bound by the
// instructions it issues, as one over an array of offsets is: there the branch's mispredictions
// cost more than they save on gaps that fall anywhere in a bucket (BENCHMARKS.md).
func (c *Counter) AddFlag(ns int64, shift uint) {
	i := int(c.lin[(ns>>shift)&(linSize-1)])
	i += b2i(c.ns[i&(maxLinBuckets-1)] < ns)
	c.counts[i&(maxLinBuckets-1)]++
}

// AddAny counts a gap of any ns >= 0 nanoseconds.
func (c *Counter) AddAny(ns int64) { c.counts[c.t.Search(ns)&(maxLinBuckets-1)]++ }
