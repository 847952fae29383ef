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
	"slices"
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

// MaxGap returns the largest gap in seconds, and false when there are fewer than two chunks.
func (t Timeline) MaxGap() (float64, bool) {
	if len(t.Offsets) < 2 {
		return 0, false
	}
	var m int64
	for i := 1; i < len(t.Offsets); i++ {
		if d := t.Offsets[i] - t.Offsets[i-1]; d > m {
			m = d
		}
	}
	return Seconds(m), true
}

// Stalls counts the gaps strictly longer than threshold.
func (t Timeline) Stalls(threshold time.Duration) int {
	n := 0
	th := int64(threshold)
	for i := 1; i < len(t.Offsets); i++ {
		if t.Offsets[i]-t.Offsets[i-1] > th {
			n++
		}
	}
	return n
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

// SortedGaps appends the gaps in seconds to buf[:0], sorts them and returns the result. Pass a reused
// buffer to keep the hot path free of allocations.
func (t Timeline) SortedGaps(buf []float64) []float64 {
	buf = buf[:0]
	for i := 1; i < len(t.Offsets); i++ {
		buf = append(buf, Seconds(t.Offsets[i]-t.Offsets[i-1]))
	}
	slices.Sort(buf)
	return buf
}

// Percentile returns the q-th quantile (0 <= q <= 1) of sorted values by linear interpolation
// between the closest ranks, which is numpy's default method. It returns NaN for no values.
func Percentile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n == 1 {
		return sorted[0]
	}
	h := float64(n-1) * q
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	if lo < 0 {
		return sorted[0]
	}
	frac := h - float64(lo)
	a, b := sorted[lo], sorted[lo+1]
	// numpy's lerp: computing from the nearer end keeps the result monotonic and exact at the ends.
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
	// Percentiles turns on P50, P90 and P99, which need a sort of the gaps.
	Percentiles bool
}

// Compute derives the figures of a valid timeline. scratch is a reusable buffer for the sorted gaps;
// the (possibly grown) buffer is returned so the caller can keep it.
func Compute(t Timeline, in Input, scratch []float64) (Figures, []float64) {
	f := Figures{Chunks: t.Len(), Stalls: t.Stalls(in.StallThreshold)}
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
			scratch = t.SortedGaps(scratch)
			f.MaxGap = scratch[len(scratch)-1]
			f.P50 = Percentile(scratch, 0.50)
			f.P90 = Percentile(scratch, 0.90)
			f.P99 = Percentile(scratch, 0.99)
		} else {
			f.MaxGap, _ = t.MaxGap()
		}
	}
	return f, scratch
}
