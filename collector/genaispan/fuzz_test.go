package genaispan_test

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/internal/buckets"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/itlconv/timeline"
)

// spanFrom builds a span from fuzz bytes: every byte pair chooses what the next element is (an
// offset or token of any attribute type, an event of any chunk name with any attribute), so the
// fuzzer explores arbitrary events, attribute types and array contents while the span stays valid
// pdata.
func spanFrom(start, dur int64, data []byte) ptrace.Span {
	s := ptrace.NewSpan()
	s.SetStartTimestamp(pcommon.Timestamp(start))
	s.SetEndTimestamp(pcommon.Timestamp(start + dur))
	a := s.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	var offs, toks pcommon.Slice
	for len(data) >= 3 {
		op, v := data[0], int64(int16(binary.LittleEndian.Uint16(data[1:3])))
		data = data[3:]
		switch op % 12 {
		case 0, 1, 2:
			if offs == (pcommon.Slice{}) {
				offs = a.PutEmptySlice(string(itlconv.ChunkOffsetsKey))
			}
			offs.AppendEmpty().SetInt(v * 1000)
		case 3:
			if offs != (pcommon.Slice{}) {
				switch e, k := offs.AppendEmpty(), int64(uint16(v)%4); k {
				case 0:
					e.SetStr("x") // not an integer
				case 1:
					e.SetDouble(0) // not an integer, though read as one it is 0
				case 2:
					e.SetInt(math.MinInt64 + k) // far below any offset: its difference wraps
				default:
					e.SetInt(math.MaxInt64 - k)
				}
			}
		case 4:
			if toks == (pcommon.Slice{}) {
				toks = a.PutEmptySlice(string(itlconv.ChunkTokensKey))
			}
			toks.AppendEmpty().SetInt(v % 8)
		case 5:
			if toks != (pcommon.Slice{}) {
				toks.AppendEmpty().SetDouble(float64(v) / 3)
			}
		case 6, 7, 8:
			ev := s.Events().AppendEmpty()
			ev.SetName(itlconv.DefaultChunkEventNames[int(op)%3])
			ev.SetTimestamp(pcommon.Timestamp(start + v*int64(time.Millisecond)))
		case 9:
			if n := s.Events().Len(); n > 0 {
				e := s.Events().At(n - 1).Attributes()
				switch v % 3 {
				case 0:
					e.PutInt(string(itlconv.ChunkTokensKey), v%5)
				case 1:
					e.PutStr(string(itlconv.ChunkTokensKey), "three")
				default:
					e.PutDouble(string(itlconv.ChunkTokensKey), 1.5)
				}
			}
		case 10:
			switch v % 4 {
			case 0:
				a.PutInt(string(itlconv.ChunkCountKey), v)
			case 1:
				a.PutStr(string(itlconv.ChunkOffsetsKey), "not an array")
				offs = pcommon.Slice{}
			case 2:
				a.PutDouble("gen_ai.response.time_to_first_chunk", float64(v)/100)
			default:
				a.PutInt("gen_ai.usage.output_tokens", v)
			}
		case 11:
			if n := s.Events().Len(); n > 0 && v >= 0x100 {
				// the last event far from the span: its offset, and its gaps, wrap around int64
				s.Events().At(n - 1).SetTimestamp(pcommon.Timestamp(uint64(start) + uint64(v)<<50))
			} else {
				s.SetDroppedEventsCount(uint32(v & 3))
			}
		}
	}
	return s
}

// FuzzDecode feeds arbitrary timelines to the decoder: it must never panic, and what it accepts
// must obey the rules (non-decreasing arrivals inside the span, matching lengths, finite figures).
func FuzzDecode(f *testing.F) {
	f.Add(int64(1_800_000_000_000_000_000), int64(2e9), []byte{0, 100, 0, 0, 120, 0, 1, 200, 0})
	f.Add(int64(1_800_000_000_000_000_000), int64(2e9), []byte{6, 10, 0, 7, 20, 0, 9, 4, 0, 8, 30, 0})
	f.Add(int64(0), int64(1e6), []byte{0, 5, 0, 4, 2, 0, 0, 3, 0, 3, 0, 0, 10, 1, 0})
	f.Add(int64(5), int64(-5), []byte{1, 255, 255, 5, 1, 0, 11, 1, 0, 10, 4, 0})
	// Events 2^62 ns apart four times over, back at the start: each gap at least 0, the first and
	// the last arrival within the span, those between far outside it.
	f.Add(int64(1_800_000_000_000_000_000), int64(2e9), []byte{6, 0, 0, 6, 0, 0, 11, 0, 0x10, 6, 0, 0, 11, 0, 0x20,
		6, 0, 0, 11, 0, 0x30, 6, 0, 0, 11, 0, 0x40})
	// A span across 2^63 ns (the year 2262), where an int64 turns negative: its timestamps are
	// unsigned, and it lasts 2 s.
	f.Add(int64(math.MaxInt64-1e9), int64(2e9), []byte{6, 100, 0, 7, 200, 0, 8, 0xe8, 0x03, 9, 3, 0})
	// A span from 1 ns to 2^63+5 ns: longer than any, though its end less its start, as an int64,
	// is negative.
	f.Add(int64(1), int64(math.MinInt64+4), []byte{6, 0, 0})
	// Any 64 bits are a timestamp: start and dur are their bits, and the end wraps as uint64 does.
	f.Fuzz(func(t *testing.T, start, dur int64, data []byte) {
		span := spanFrom(start, dur, data)
		const stall = 20 * time.Millisecond // short, so that both sides of it are reached
		d := genaispan.New(genaispan.Config{MaxChunks: 1000, StallThreshold: stall})
		r := d.Read(span, true)
		// A decoder that counts the gaps as it reads them reads the same call, valid or not, and
		// its counts, when it has them, are the timeline's gaps in the counter's buckets.
		dc := genaispan.New(genaispan.Config{MaxChunks: 1000, StallThreshold: stall})
		dc.CountGaps(buckets.NewCounter(fuzzBuckets))
		rc := dc.Read(span, true)
		if rc.Valid != r.Valid || rc.Reason != r.Reason || rc.Figures != r.Figures || rc.Gaps != r.Gaps ||
			!slices.Equal(rc.Timeline.Offsets, r.Timeline.Offsets) {
			t.Fatalf("counting the gaps changed the call: %+v, without %+v", rc, r)
		}
		if counts := dc.GapCounts(); counts != nil && !slices.Equal(counts, genaispan.CountsOf(fuzzBuckets, r.Timeline.Offsets)) {
			t.Fatalf("offsets %v: counted %v, want %v", r.Timeline.Offsets, counts, genaispan.CountsOf(fuzzBuckets, r.Timeline.Offsets))
		}
		if want, ok := compactReason(span, 1000); ok && r.Reason != want {
			t.Fatalf("compact timeline: reason %q, want %q", r.Reason, want)
		}
		// A duration exactly when the timestamps, unsigned, give one within the bound.
		s, e := span.StartTimestamp(), span.EndTimestamp()
		wantDur := s != 0 && e >= s && uint64(e-s) <= uint64(itlconv.MaxDuration)
		if r.HasDuration != wantDur || wantDur && r.Duration != timeline.Seconds(int64(e-s)) {
			t.Fatalf("start %d, end %d: duration %v (%v), want one: %v", s, e, r.Duration, r.HasDuration, wantDur)
		}
		if !r.Valid {
			if r.Reason == "" || r.Timeline.Len() != 0 || r.Complete || r.Gaps != timeline.NoGaps() {
				t.Fatalf("invalid without a reason, or with a timeline or its gaps: %+v", r)
			}
			return
		}
		offs := r.Timeline.Offsets
		if r.Timeline.Tokens != nil && len(r.Timeline.Tokens) != len(offs) {
			t.Fatalf("%d tokens for %d offsets", len(r.Timeline.Tokens), len(offs))
		}
		for i, o := range offs {
			if o < 0 || uint64(o) > uint64(r.End-r.Start) || (i > 0 && o < offs[i-1]) {
				t.Fatalf("accepted offset %d at %d outside [0, %d] or decreasing", o, i, r.End-r.Start)
			}
		}
		fig := r.Figures
		for _, v := range []float64{fig.TTFT, fig.TPOT, fig.MaxGap, fig.P50, fig.P90, fig.P99} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("a figure is not finite: %+v", fig)
			}
		}
		if fig.HasGaps && (fig.P50 > fig.P90 || fig.P90 > fig.P99 || fig.P99 > fig.MaxGap) {
			t.Fatalf("percentiles out of order: %+v", fig)
		}
		// The decoder counts the gaps' statistics as it reads the arrivals: they must be the
		// timeline's, as a separate pass over the timeline it returns finds them.
		want := r.Timeline.Stats(stall)
		if fig.Stalls != want.Stalls || (fig.HasGaps && fig.MaxGap != timeline.Seconds(want.MaxNs)) {
			t.Fatalf("stalls %d, largest gap %v; the timeline has %d, %v", fig.Stalls, fig.MaxGap, want.Stalls, timeline.Seconds(want.MaxNs))
		}
		if r.Gaps != want { // the connector's gap histogram takes its minimum and maximum from them
			t.Fatalf("the call's gaps %+v; the timeline's %+v", r.Gaps, want)
		}
	})
}

// fuzzBuckets are the default gap boundaries: their linear table ends at 2^32 ns, and the fuzzer's
// gaps fall on either side of it.
var fuzzBuckets = buckets.New(itlconv.GapBuckets)

// compactReason is the compact timeline's rules written out plainly, the fuzz target's reference
// for the reader's faster checks: the reason a span's offsets break the first rule at, in order
// (not an integer, negative, below the one before, after the span's end), or "" when they break
// none. It is false for a span it does not judge: no offsets array, a bad duration, too many
// chunks, or token counts (whose own rules come into play).
func compactReason(span ptrace.Span, maxChunks int) (genaispan.Reason, bool) {
	v, ok := span.Attributes().Get(string(itlconv.ChunkOffsetsKey))
	_, hasTokens := span.Attributes().Get(string(itlconv.ChunkTokensKey))
	start, end := uint64(span.StartTimestamp()), uint64(span.EndTimestamp())
	if !ok || v.Type() != pcommon.ValueTypeSlice || hasTokens || v.Slice().Len() > maxChunks ||
		start == 0 || end < start || end-start > uint64(itlconv.MaxDuration) {
		return "", false
	}
	limit := int64(end-start) / 1000
	prev := int64(0)
	for i := range v.Slice().Len() {
		e := v.Slice().At(i)
		switch us := e.Int(); {
		case e.Type() != pcommon.ValueTypeInt:
			return genaispan.ReasonNotInteger, true
		case us < 0:
			return genaispan.ReasonNegativeOffset, true
		case us < prev:
			return genaispan.ReasonDecreasing, true
		case us > limit:
			return genaispan.ReasonAfterEnd, true
		default:
			prev = us
		}
	}
	return genaispan.ReasonNone, true
}
