// Package timeline holds the arithmetic of a streamed generation's chunk timeline: time to first
// chunk, the gaps between chunks, time per output token, the largest gap, stalls and percentiles.
//
// The client library (otelitl) and the collector components both compute these figures, and an
// operator comparing them must never see two answers for one span, so the definitions live here
// once, as SPEC.md in the itlconv module states them. The package depends on the standard library
// only.
package timeline

import (
	"math"
	"time"
)

// Timeline is the list of chunk arrivals of one generation.
//
// Offsets are nanoseconds from the span start to each arrival, in non-decreasing order. Tokens, when
// not nil, has the same length and holds each chunk's token count; nil means every chunk carried one
// token. A Timeline does not own its slices' backing arrays beyond the call that made it.
type Timeline struct {
	Offsets []int64
	Tokens  []int64
}

// Len returns the number of chunks.
func (t Timeline) Len() int { return len(t.Offsets) }

// TokensAt returns the token count of chunk i.
func (t Timeline) TokensAt(i int) int64 {
	if t.Tokens == nil {
		return 1
	}
	return t.Tokens[i]
}

// TokenSum returns the total of the chunks' token counts.
func (t Timeline) TokenSum() int64 {
	if t.Tokens == nil {
		return int64(len(t.Offsets))
	}
	var s int64
	for _, c := range t.Tokens {
		s += c
	}
	return s
}

// Seconds converts nanoseconds to seconds. Every figure in seconds goes through it so that the
// client and the collector round alike.
func Seconds(ns int64) float64 { return float64(ns) / 1e9 }

// TTFT returns the offset of the first arrival in seconds, and false when there is none.
func (t Timeline) TTFT() (float64, bool) {
	if len(t.Offsets) == 0 {
		return 0, false
	}
	return Seconds(t.Offsets[0]), true
}

// GapCount returns how many gaps the timeline has: one fewer than its chunks, or zero.
func (t Timeline) GapCount() int {
	if len(t.Offsets) < 2 {
		return 0
	}
	return len(t.Offsets) - 1
}

// Gap returns gap i (0-based) in seconds: the time between arrival i and arrival i+1.
func (t Timeline) Gap(i int) float64 { return Seconds(t.Offsets[i+1] - t.Offsets[i]) }

// GapStats are what one pass over a timeline's gaps yields for the figures and the histograms: the
// smallest and the largest gap in nanoseconds and the number of gaps strictly longer than a stall
// threshold. A reader that already walks the arrivals, as the collector's decoder does, counts them
// on its way and hands them to Compute (Input.GapStats), which then reads no gap again, and to a
// histogram, which then keeps no minimum or maximum of its own.
//
// Count gaps from NoGaps(), not from the zero GapStats: its MinNs is the largest int64 and its MaxNs
// the smallest, so that the first gap Add counts is both. A timeline with fewer than two chunks
// keeps them.
type GapStats struct {
	MinNs, MaxNs int64
	Stalls       int
}

// NoGaps returns the GapStats of no gap, which Add starts from.
func NoGaps() GapStats { return GapStats{MinNs: math.MaxInt64, MaxNs: math.MinInt64} }

// Add returns s with a gap of ns nanoseconds counted against threshold th (in nanoseconds).
//
// It takes and returns the stats by value, for the loops that count them per arrival: the compiler
// keeps a local whose address is taken, even by an inlined method, on the stack, and loads and
// stores its fields again for every gap; a value stays in registers.
func (s GapStats) Add(ns, th int64) GapStats {
	s.MinNs = min(s.MinNs, ns)
	s.MaxNs = max(s.MaxNs, ns)
	if ns > th {
		s.Stalls++
	}
	return s
}

// Stats returns the timeline's GapStats against threshold, in one pass.
func (t Timeline) Stats(threshold time.Duration) GapStats {
	s := NoGaps()
	th := int64(threshold)
	for i := 1; i < len(t.Offsets); i++ {
		s = s.Add(t.Offsets[i]-t.Offsets[i-1], th)
	}
	return s
}

// TPOT returns the decode time per output token after the first chunk, (a_n - a_1) / (N - c_1), in
// seconds, where N is the generation's output token count. It is false when the timeline is empty or
// N does not exceed the first chunk's tokens. The caller decides whether the timeline is complete
// enough for the figure to mean anything (see Figures).
func (t Timeline) TPOT(outputTokens int64) (float64, bool) {
	n := len(t.Offsets)
	if n == 0 {
		return 0, false
	}
	rest := outputTokens - t.TokensAt(0)
	if rest <= 0 {
		return 0, false
	}
	return Seconds(t.Offsets[n-1]-t.Offsets[0]) / float64(rest), true
}

// Percentile returns the q-th quantile (0 <= q <= 1) of sorted values by linear interpolation
// between the closest ranks, which is numpy's default method. It returns NaN for no values.
func Percentile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	lo, frac := rank(n, q)
	if frac == 0 {
		return sorted[lo]
	}
	return lerp(sorted[lo], sorted[lo+1], frac)
}

// rank returns the lower of the closest ranks of quantile q among n sorted values, and how far
// towards the next rank the quantile lies (0 when it is on a rank, or past the ends).
func rank(n int, q float64) (lo int, frac float64) {
	h := float64(n-1) * q
	lo = int(math.Floor(h))
	switch {
	case lo >= n-1:
		return n - 1, 0
	case lo < 0:
		return 0, 0
	}
	return lo, h - float64(lo)
}

// lerp interpolates between a and b as numpy does: computing from the nearer end keeps the result
// monotonic and exact at the ends.
func lerp(a, b, frac float64) float64 {
	if frac >= 0.5 {
		return b - (b-a)*(1-frac)
	}
	return a + (b-a)*frac
}

// Figures are the derived figures of one generation span. A field's Has flag says whether the figure
// is defined for the span; an undefined figure must not be recorded.
type Figures struct {
	// Chunks is the number of arrivals read.
	Chunks int
	// TTFT is the time to first chunk in seconds.
	TTFT    float64
	HasTTFT bool
	// OutputTokens is the provider's usage when known, else the chunks' token sum when the timeline is
	// complete.
	OutputTokens    int64
	HasOutputTokens bool
	// TPOT is the decode time per output token in seconds.
	TPOT    float64
	HasTPOT bool
	// MaxGap is the largest gap in seconds; P50, P90 and P99 are percentiles of the span's own gaps.
	// All four are defined together, when there are two chunks or more.
	MaxGap, P50, P90, P99 float64
	HasGaps               bool
	// Stalls counts the gaps above the stall threshold.
	Stalls int
}

// Input is what Compute needs to know about a span besides its timeline.
type Input struct {
	// Complete says the timeline holds every chunk from the first (see the golden README).
	Complete bool
	// UsageOutputTokens is gen_ai.usage.output_tokens, when HasUsage.
	UsageOutputTokens int64
	HasUsage          bool
	// AttrTTFT is gen_ai.response.time_to_first_chunk in seconds, used when the timeline is not
	// complete and HasAttrTTFT.
	AttrTTFT    float64
	HasAttrTTFT bool
	// StallThreshold is the gap above which a gap counts as a stall.
	StallThreshold time.Duration
	// Percentiles turns on P50, P90 and P99.
	Percentiles bool
	// GapStats, when HasGapStats, are the timeline's against StallThreshold, counted by the
	// caller as it read the arrivals: Compute then does not walk the gaps for them, and the
	// percentiles' selection takes its range from them.
	GapStats    GapStats
	HasGapStats bool
}

// Compute derives the figures of a valid timeline. scratch is a reusable buffer for the gaps; the
// (possibly grown) buffer is returned so the caller can keep it.
func Compute(t Timeline, in Input, scratch []int64) (Figures, []int64) {
	var f Figures
	scratch = ComputeInto(&f, t, &in, scratch)
	return f, scratch
}

// ComputeInto is Compute writing the figures to *f, which it overwrites whole. A collector reads
// the figures of every span into a structure of its own: there, passing the input and the figures
// by value copied some 200 bytes a span to no purpose.
func ComputeInto(f *Figures, t Timeline, in *Input, scratch []int64) []int64 {
	gs := in.GapStats
	if !in.HasGapStats {
		gs = t.Stats(in.StallThreshold)
	}
	*f = Figures{Chunks: t.Len(), Stalls: gs.Stalls}
	if in.Complete {
		f.TTFT, f.HasTTFT = t.TTFT()
	}
	if !f.HasTTFT && in.HasAttrTTFT {
		f.TTFT, f.HasTTFT = in.AttrTTFT, true
	}
	switch {
	case in.HasUsage:
		f.OutputTokens, f.HasOutputTokens = in.UsageOutputTokens, true
	case in.Complete:
		f.OutputTokens, f.HasOutputTokens = t.TokenSum(), true
	}
	if in.Complete && f.HasOutputTokens {
		f.TPOT, f.HasTPOT = t.TPOT(f.OutputTokens)
	}
	if t.Len() >= 2 {
		f.HasGaps = true
		if in.Percentiles {
			var p [len(gapQuantiles)]float64
			f.MaxGap, p, scratch = t.gapPercentiles(gs, scratch)
			f.P50, f.P90, f.P99 = p[0], p[1], p[2]
		} else {
			f.MaxGap = Seconds(gs.MaxNs)
		}
	}
	return scratch
}
