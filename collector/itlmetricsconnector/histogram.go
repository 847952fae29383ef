package itlmetricsconnector

import (
	"github.com/lightstep/go-expohisto/structure"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelitl/itl/collector/internal/buckets"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/itlconv/timeline"
)

// metricDef is one histogram the connector emits: a metric of the contract and the key of its
// boundaries under histogram.explicit.buckets.
type metricDef struct {
	itlconv.Metric
	key     string
	buckets func(*BucketsConfig) []float64
}

const (
	hTTFT = iota
	hGap
	hDuration
	hTokens
	hTPOT
	hGapMax
	hServerTTFT
	hServerTPOT
	hServerDuration
	numHists
)

var metricDefs = [numHists]metricDef{
	hTTFT:     {itlconv.TimeToFirstChunk, "time_to_first_chunk", func(b *BucketsConfig) []float64 { return b.TimeToFirstChunk }},
	hGap:      {itlconv.TimePerOutputChunk, "time_per_output_chunk", func(b *BucketsConfig) []float64 { return b.TimePerOutputChunk }},
	hDuration: {itlconv.Duration, "duration", func(b *BucketsConfig) []float64 { return b.Duration }},
	hTokens:   {itlconv.TokenUsage, "token_usage", func(b *BucketsConfig) []float64 { return b.TokenUsage }},
	hTPOT:     {itlconv.TimePerOutputToken, "time_per_output_token", func(b *BucketsConfig) []float64 { return b.TimePerOutputToken }},
	hGapMax:   {itlconv.GapMax, "gap_max", func(b *BucketsConfig) []float64 { return b.GapMax }},

	hServerTTFT:     {itlconv.ServerTimeToFirstToken, "server_time_to_first_token", func(b *BucketsConfig) []float64 { return b.ServerTimeToFirstToken }},
	hServerTPOT:     {itlconv.ServerTimePerOutputToken, "server_time_per_output_token", func(b *BucketsConfig) []float64 { return b.ServerTimePerOutputToken }},
	hServerDuration: {itlconv.ServerRequestDuration, "server_request_duration", func(b *BucketsConfig) []float64 { return b.ServerRequestDuration }},
}

// exemplar links an observation to the span it came from.
type exemplar struct {
	value   float64
	ts      pcommon.Timestamp
	traceID pcommon.TraceID
	spanID  pcommon.SpanID
}

// reservoir keeps the exemplars of the largest values seen, at most cap(r.ex): those are the ones
// an operator looking at a tail percentile wants to open. Once it is full, lo is the index of the
// smallest value kept: most offers are below it, and are then turned away with one comparison.
type reservoir struct {
	ex []exemplar
	lo int
}

// offer offers ex with the value v: it is kept if v is among the largest values offered. The usual
// offer, of a value below every one kept, costs one comparison, and no copy of the exemplar.
func (r *reservoir) offer(v float64, ex *exemplar) {
	if len(r.ex) < cap(r.ex) || cap(r.ex) > 0 && v > r.ex[r.lo].value {
		r.keep(v, ex)
	}
}

// keep adds ex with the value v, in place of the smallest value when the reservoir is full.
func (r *reservoir) keep(v float64, ex *exemplar) {
	e := *ex
	e.value = v
	if len(r.ex) < cap(r.ex) {
		r.ex = append(r.ex, e)
		if len(r.ex) == cap(r.ex) {
			r.lo = r.smallest()
		}
		return
	}
	r.ex[r.lo] = e
	r.lo = r.smallest()
}

// smallest returns the index of the first of the smallest values kept.
func (r *reservoir) smallest() int {
	lo := 0
	for i := range r.ex {
		if r.ex[i].value < r.ex[lo].value {
			lo = i
		}
	}
	return lo
}

func (r *reservoir) copyTo(dst pmetric.ExemplarSlice) {
	dst.EnsureCapacity(len(r.ex))
	for _, e := range r.ex {
		pe := dst.AppendEmpty()
		pe.SetDoubleValue(e.value)
		pe.SetTimestamp(e.ts)
		pe.SetTraceID(e.traceID)
		pe.SetSpanID(e.spanID)
	}
}

// hist aggregates one histogram data point.
type hist interface {
	observe(v float64)
	// observeGaps observes every gap between consecutive offsets (nanoseconds), in seconds: the
	// connector's hot loop, kept free of per-gap interface calls. gs are the offsets' GapStats,
	// which the decoder counted as it read them: their smallest and largest gap.
	observeGaps(offsets []int64, gs timeline.GapStats)
	// addGapCounts observes the same gaps as observeGaps from counts, their counts in the buckets
	// of the gap histogram's boundaries (the connector's hGap), which the decoder counted as it
	// read them (genaispan.Decoder.GapCounts).
	addGapCounts(counts []uint64, offsets []int64, gs timeline.GapStats)
	// observeGapsPerToken observes every gap over the tokens of the chunk that ends it, in seconds:
	// the server's time per output token. gs are tl's GapStats.
	observeGapsPerToken(tl timeline.Timeline, gs timeline.GapStats)
	count() uint64
	reset()
	// write appends the point to the metric, which already has the right type.
	write(m pmetric.Metric, attrs pcommon.Map, start, now pcommon.Timestamp)
	exemplars() *reservoir
}

type explicitHist struct {
	bs       *buckets.Table // shared, read-only
	bounds   []float64
	counts   []uint64
	odd      []uint64 // observeGaps's counts of every other gap, until merge; nil until it runs
	sum      float64
	n        uint64
	min, max float64
	res      reservoir
}

func newExplicit(bs *buckets.Table, exemplars int) *explicitHist {
	return &explicitHist{bs: bs, bounds: bs.Bounds(), counts: make([]uint64, len(bs.Bounds())+1), res: reservoir{ex: make([]exemplar, 0, exemplars)}}
}

func (h *explicitHist) observe(v float64) {
	h.counts[bucket(h.bounds, v)]++
	h.sum += v
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if h.n == 0 || v > h.max {
		h.max = v
	}
	h.n++
}

// bucket returns the index of the bucket (bounds[i-1], bounds[i]] that holds v: the first bound
// >= v, or len(bounds). A hand-rolled binary search: sort.SearchFloat64s costs a closure call per
// step, and this runs once per gap.
func bucket(bounds []float64, v float64) int {
	lo, hi := 0, len(bounds)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if bounds[mid] < v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// observeGaps is the connector's hot loop: per gap, a subtraction, a table look-up, one comparison
// with an integer threshold, and the count (Table.Lin, inlined; Table.Search for the rare gap
// beyond the linear table). The gaps' sum is the span of the arrivals; their minimum and maximum
// come from the decoder, which counted them as it read the arrivals (keeping them here too cost
// a fifth of the loop: BENCHMARKS.md).
//
// The loop takes the gaps in pairs and counts the second of each pair in h.odd: a reply's gaps
// cluster in a few buckets, and two increments of one count in a row wait for each other through
// memory; with two arrays only every other gap can (merge adds them up before they are read).
func (h *explicitHist) observeGaps(offsets []int64, gs timeline.GapStats) {
	n := len(offsets)
	if n < 2 {
		return
	}
	if h.odd == nil {
		h.odd = make([]uint64, len(h.counts))
	}
	bs, counts, odd := h.bs, h.counts, h.odd[:len(h.counts)]
	// i is the offset that ends the next gap to count. A gap beyond the linear table, rare, and the
	// last of an odd number, take the key table; then the pairs go on after them.
	for i := 1; i < n; i++ {
		i += linGaps(bs, offsets[i-1:], counts, odd) - 1
		if i < n {
			counts[bs.Search(offsets[i]-offsets[i-1])]++
		}
	}
	h.addGapStats(offsets, gs)
}

// addGapStats adds the count, the sum, the minimum and the maximum of the gaps between offsets (at
// least two), whose GapStats are gs: the sum is the span of the arrivals.
func (h *explicitHist) addGapStats(offsets []int64, gs timeline.GapStats) {
	n := len(offsets)
	if v := timeline.Seconds(gs.MinNs); h.n == 0 || v < h.min {
		h.min = v
	}
	if v := timeline.Seconds(gs.MaxNs); h.n == 0 || v > h.max {
		h.max = v
	}
	h.sum += timeline.Seconds(offsets[n-1] - offsets[0])
	h.n += uint64(n - 1)
}

// addGapCounts adds counts bucket by bucket: a few dozen additions a span, where observeGaps
// takes a step per gap. Counts of other boundaries than h's, which the connector never hands it,
// would be a bug: it then counts the gaps itself.
func (h *explicitHist) addGapCounts(counts []uint64, offsets []int64, gs timeline.GapStats) {
	if len(counts) != len(h.counts) {
		h.observeGaps(offsets, gs)
		return
	}
	if len(offsets) < 2 {
		return
	}
	for i, c := range counts {
		h.counts[i] += c
	}
	h.addGapStats(offsets, gs)
}

// linGaps counts the gaps of offsets from the first on in pairs, the first of each pair in counts
// and the second in odd, as long as both fall in the linear table. It returns the index of the
// offset that ends the first gap it did not count (len(offsets) when it counted them all). The
// loop has no other way out, and the key table's search is elsewhere, so that the compiler keeps
// all its state in registers: with the search in the loop, it kept four of its values on the
// stack.
func linGaps(bs *buckets.Table, offsets []int64, counts, odd []uint64) int {
	lim := bs.LinLimit()
	prev, i := offsets[0], 1
	for ; i+1 < len(offsets); i += 2 {
		a, b := offsets[i], offsets[i+1]
		g0, g1 := a-prev, b-a
		if uint64(g0) >= lim || uint64(g1) >= lim {
			return i
		}
		counts[bs.Lin(g0)]++
		odd[bs.Lin(g1)]++
		prev = b
	}
	return i
}

// merge adds the counts observeGaps kept in h.odd to h.counts.
func (h *explicitHist) merge() {
	for i, c := range h.odd {
		h.counts[i] += c
	}
	clear(h.odd)
}

func (h *explicitHist) observeGapsPerToken(tl timeline.Timeline, gs timeline.GapStats) {
	if tl.Tokens == nil {
		h.observeGaps(tl.Offsets, gs)
		return
	}
	for i := 1; i < tl.Len(); i++ {
		h.observe(perToken(tl, i))
	}
}

// perToken is gap i-1 of tl (between chunks i-1 and i) over chunk i's tokens.
func perToken(tl timeline.Timeline, i int) float64 {
	return timeline.Seconds(tl.Offsets[i]-tl.Offsets[i-1]) / float64(max(tl.TokensAt(i), 1))
}

func (h *explicitHist) count() uint64         { return h.n }
func (h *explicitHist) exemplars() *reservoir { return &h.res }

func (h *explicitHist) reset() {
	clear(h.counts)
	clear(h.odd)
	h.sum, h.n, h.min, h.max = 0, 0, 0, 0
	h.res.ex = h.res.ex[:0]
}

func (h *explicitHist) write(m pmetric.Metric, attrs pcommon.Map, start, now pcommon.Timestamp) {
	dp := m.Histogram().DataPoints().AppendEmpty()
	attrs.CopyTo(dp.Attributes())
	dp.SetStartTimestamp(start)
	dp.SetTimestamp(now)
	dp.SetCount(h.n)
	dp.SetSum(h.sum)
	if h.n > 0 {
		dp.SetMin(h.min)
		dp.SetMax(h.max)
	}
	dp.ExplicitBounds().FromRaw(h.bounds)
	h.merge()
	dp.BucketCounts().FromRaw(h.counts)
	h.res.copyTo(dp.Exemplars())
}

type expoHist struct {
	h   structure.Histogram[float64]
	res reservoir
}

func newExpo(maxSize int, exemplars int) *expoHist {
	e := &expoHist{res: reservoir{ex: make([]exemplar, 0, exemplars)}}
	e.h.Init(structure.NewConfig(structure.WithMaxSize(int32(maxSize))))
	return e
}

func (e *expoHist) observe(v float64) { e.h.Update(v) }

func (e *expoHist) observeGaps(offsets []int64, _ timeline.GapStats) {
	for i := 1; i < len(offsets); i++ {
		e.h.Update(timeline.Seconds(offsets[i] - offsets[i-1]))
	}
}

// addGapCounts observes the gaps themselves: counts in explicit buckets mean nothing to an
// exponential histogram (and the connector counts none when it makes those).
func (e *expoHist) addGapCounts(_ []uint64, offsets []int64, gs timeline.GapStats) {
	e.observeGaps(offsets, gs)
}

func (e *expoHist) observeGapsPerToken(tl timeline.Timeline, _ timeline.GapStats) {
	for i := 1; i < tl.Len(); i++ {
		e.h.Update(perToken(tl, i))
	}
}

func (e *expoHist) count() uint64         { return e.h.Count() }
func (e *expoHist) exemplars() *reservoir { return &e.res }
func (e *expoHist) reset()                { e.h.Clear(); e.res.ex = e.res.ex[:0] }

func (e *expoHist) write(m pmetric.Metric, attrs pcommon.Map, start, now pcommon.Timestamp) {
	dp := m.ExponentialHistogram().DataPoints().AppendEmpty()
	attrs.CopyTo(dp.Attributes())
	dp.SetStartTimestamp(start)
	dp.SetTimestamp(now)
	agg := &e.h
	dp.SetCount(agg.Count())
	dp.SetSum(agg.Sum())
	if agg.Count() != 0 {
		dp.SetMin(agg.Min())
		dp.SetMax(agg.Max())
	}
	dp.SetZeroCount(agg.ZeroCount())
	dp.SetScale(agg.Scale())
	for _, half := range []struct {
		in  *structure.Buckets
		out pmetric.ExponentialHistogramDataPointBuckets
	}{{agg.Positive(), dp.Positive()}, {agg.Negative(), dp.Negative()}} {
		half.out.SetOffset(half.in.Offset())
		half.out.BucketCounts().EnsureCapacity(int(half.in.Len()))
		for i := uint32(0); i < half.in.Len(); i++ {
			half.out.BucketCounts().Append(half.in.At(i))
		}
	}
	e.res.copyTo(dp.Exemplars())
}
