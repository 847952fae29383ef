// Package genaispan reads generation spans as the otelitl collector components see them: the chunk
// timeline a span carries, following the rules of the itlconv module's SPEC.md (which source wins,
// when a timeline is invalid, when it is complete), and the figures it yields. The itl processor
// and the itl_metrics connector share it, and the settings it reads with ([Config]), so that the
// two never disagree about a span.
package genaispan

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/collector/internal/buckets"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/itlconv/timeline"
)

// Source says where a timeline was read from.
type Source int

const (
	SourceNone    Source = iota // no timeline on the span
	SourceCompact               // otelitl.chunk.offsets_us
	SourceEvents                // chunk events
)

// Reason names why a span's value was rejected. It is the value of the "reason" attribute of the
// components' malformed-span counters, so it stays low-cardinality.
type Reason string

// Why a timeline is invalid: it then yields no chunk figures at all.
const (
	ReasonNone             Reason = ""
	ReasonNotArray         Reason = "not_an_array"      // a compact attribute is not an array
	ReasonNotInteger       Reason = "not_integer"       // an array element or tokens attribute is not an integer
	ReasonLengthMismatch   Reason = "length_mismatch"   // the tokens array's length differs from the offsets'
	ReasonNegativeOffset   Reason = "negative_offset"   // an offset below zero
	ReasonDecreasing       Reason = "decreasing_offset" // offsets that go backwards
	ReasonNegativeTokens   Reason = "negative_tokens"   // a chunk's token count below zero
	ReasonTooManyTokens    Reason = "too_many_tokens"   // a chunk's token count above itlconv.MaxTokens
	ReasonBeforeStart      Reason = "before_start"      // an arrival before the span's start
	ReasonAfterEnd         Reason = "after_end"         // an arrival after the span's end
	ReasonTooManyChunks    Reason = "too_many_chunks"   // more chunks than max_chunks
	ReasonNegativeDuration Reason = "negative_duration" // the span ends before it starts
	ReasonMissingStart     Reason = "missing_start"     // the span's start time is 0 (unset)
	ReasonTooLong          Reason = "duration_too_long" // the span lasts longer than itlconv.MaxDuration
)

// Why another value of a model call was rejected: it yields no figure, and the span still counts
// as a model call.
const (
	ReasonTTFTNotNumber Reason = "ttft_not_a_number" // a time to first chunk that is not an int or a double
	ReasonTTFTNotFinite Reason = "ttft_not_finite"   // NaN or infinite
	ReasonTTFTNegative  Reason = "ttft_negative"     // below zero, or a first-chunk time before the start
	ReasonTTFTTooLong   Reason = "ttft_exceeds_span" // longer than the span lasts
	ReasonTTFTBadTime   Reason = "ttft_unparsable"   // a completion start time that is not an ISO 8601 time
	ReasonBadUsage      Reason = "usage_invalid"     // a token count that is not a whole number from 0 to itlconv.MaxTokens
)

// Reasons lists every Reason, for tests, docs and the components' counters.
var Reasons = []Reason{ReasonNotArray, ReasonNotInteger, ReasonLengthMismatch, ReasonNegativeOffset, ReasonDecreasing,
	ReasonNegativeTokens, ReasonTooManyTokens, ReasonBeforeStart, ReasonAfterEnd, ReasonTooManyChunks, ReasonNegativeDuration,
	ReasonMissingStart, ReasonTooLong, ReasonTTFTNotNumber, ReasonTTFTNotFinite, ReasonTTFTNegative, ReasonTTFTTooLong,
	ReasonTTFTBadTime, ReasonBadUsage}

// Decoder reads spans. It reuses its buffers from span to span, so it is not safe for concurrent
// use: give each goroutine its own.
type Decoder struct {
	names     []string
	maxChunks int
	stall     time.Duration
	excluded  []string

	fields  fields
	offsets []int64
	tokens  []int64
	pairs   []pair    // for sorting arrivals that came out of order
	one     [1]string // the one event name of a second pass over a span's events
	scratch []int64   // for timeline.Compute's gaps
	// gaps are the GapStats of the timeline the last decode read, counted as it read the
	// arrivals, when hasGaps. Read hands them to the Call.
	gaps    timeline.GapStats
	hasGaps bool
	call    Call
	// counter, when set (CountGaps), counts the gaps of the arrivals into its buckets as they are
	// read; counted says it holds every gap of the timeline the last decode read.
	counter *buckets.Counter
	counted bool
}

type pair struct{ off, tok int64 }

// CountGaps makes d count the gaps of the timelines it reads into c's buckets as it reads the
// arrivals, for GapCounts: the itl_metrics connector's histogram of the gaps then needs no pass of
// its own over them. It counts the common timelines: compact ones, and chunk events of the default
// name without attributes in time order; for any other, GapCounts returns nil. c, which d keeps
// and overwrites with every span, is d's alone; nil stops it.
func (d *Decoder) CountGaps(c *buckets.Counter) { d.counter = c }

// GapCounts returns the counts of the gaps of the model call the last Read returned, one per
// bucket of the counter's Table, when d has a counter (CountGaps) and counted every gap of the
// call's valid timeline as it read the arrivals: a histogram of the gaps with those boundaries
// adds them instead of going over the offsets again. It returns nil otherwise: then count the
// gaps of the Call's Timeline. The counts are d's, valid until the next Read.
//
// A method of the Decoder rather than a field of the Call: every span takes a Call, and the
// common one, no model call, would pay for writing the field (BENCHMARKS.md).
func (d *Decoder) GapCounts() []uint64 {
	// counted is the last decode's; a span Read took without a decode is no model call.
	if !d.counted || !d.call.ModelCall || !d.call.Valid {
		return nil
	}
	return d.counter.Counts()
}

// KeepChunks is the longest timeline, in chunks, whose buffers Trim lets a Decoder keep: 8,192
// arrivals, far more than a chat reply has, is at most some 400 KiB of buffers.
const KeepChunks = 8192

// Trim lets go of the buffers that a timeline of more than KeepChunks chunks grew, so that a
// Decoder waiting in a pool does not hold the memory of the longest timeline it has ever read (up to
// max_chunks, 2^18 by default: some 12 MiB across its buffers). Components call it as they put a
// Decoder back; the next long timeline grows them again.
func (d *Decoder) Trim() {
	if cap(d.offsets) > KeepChunks {
		d.offsets = nil
	}
	if cap(d.tokens) > KeepChunks {
		d.tokens = nil
	}
	if cap(d.pairs) > KeepChunks {
		d.pairs = nil
	}
	if cap(d.scratch) > 2*KeepChunks+1 { // the selection's buffer holds twice the gaps, and one
		d.scratch = nil
	}
}

// New returns a Decoder for cfg. Zero values take the defaults.
func New(cfg Config) *Decoder {
	d := &Decoder{names: cfg.ChunkEventNames, maxChunks: cfg.MaxChunks, stall: cfg.StallThreshold, excluded: cfg.ExcludedOperations}
	if len(d.names) == 0 {
		d.names = itlconv.DefaultChunkEventNames
	}
	if d.maxChunks <= 0 {
		d.maxChunks = itlconv.DefaultMaxChunks
	}
	if d.stall <= 0 {
		d.stall = itlconv.DefaultStallThreshold
	}
	if d.excluded == nil {
		d.excluded = itlconv.DefaultExcludedOperations
	}
	return d
}

// Result is a span's timeline. Its Timeline aliases the Decoder's buffers: it is valid until the
// next call to Decode or Read.
type Result struct {
	Source   Source
	Timeline timeline.Timeline
	// EventName is the chunk event name read, for SourceEvents.
	EventName string
	// Valid is false when the span has a timeline that breaks a rule; Reason says which.
	Valid  bool
	Reason Reason
	// Complete is true when the timeline is valid, has a chunk, and lost none.
	Complete bool
	// Start and End are the span's timestamps in Unix nanoseconds, as OTLP's unsigned values: compare
	// them as uint64 (their difference is exact either way).
	Start, End int64

	firstToken int // index of the first OpenInference first-token event, or -1
}

// durationReason says why the span's start and end give no duration, or "" when they do.
//
// The timestamps are unsigned in OTLP, and compared so: past 2^63 ns (the year 2262) an int64
// turns negative, and a span across that instant would seem to end before it starts, or one that
// ends before it starts to last. The difference of the two int64s, taken as unsigned, is exact.
func (r *Result) durationReason() Reason {
	switch {
	case r.Start == 0:
		return ReasonMissingStart
	case uint64(r.End) < uint64(r.Start):
		return ReasonNegativeDuration
	case uint64(r.End-r.Start) > uint64(itlconv.MaxDuration):
		return ReasonTooLong
	}
	return ReasonNone
}

// Duration returns the span's duration in seconds, and false when its start and end give none (see
// ReasonMissingStart, ReasonNegativeDuration, ReasonTooLong).
func (r *Result) Duration() (float64, bool) {
	if r.durationReason() != ReasonNone {
		return 0, false
	}
	return timeline.Seconds(r.End - r.Start), true
}

// HasTimeline reports whether the span carries a timeline at all, valid or not.
func (r *Result) HasTimeline() bool { return r.Source != SourceNone }

// Decode reads span's timeline.
func (d *Decoder) Decode(span ptrace.Span) Result {
	d.fields.scan(span.Attributes())
	var r Result
	d.decode(span, &r)
	return r
}

// emptyResult is the Result of a span before its timeline is read: valid, with no chunks.
func emptyResult(span ptrace.Span) Result {
	return Result{Valid: true, Start: int64(span.StartTimestamp()), End: int64(span.EndTimestamp()), firstToken: -1}
}

// decode reads the timeline of span, whose attributes d.fields holds, into r: in place, because a
// Call holds it, and a Result returned would be copied into the Call.
func (d *Decoder) decode(span ptrace.Span, r *Result) {
	*r = emptyResult(span)
	d.hasGaps, d.counted = false, false
	fs := &d.fields
	evs := span.Events()
	var s eventScan // a span without events, as a compact timeline comes, has nothing to scan
	if evs.Len() > 0 {
		var ok bool
		if s, ok = d.scanChunks(r, evs); !ok {
			s = d.scanEvents(r, evs, d.names, evs.Len() <= d.maxChunks)
		}
	}
	if v, ok := fs.get(fOffsets); ok {
		r.Source = SourceCompact
		if why := r.durationReason(); why != ReasonNone {
			d.invalid(r, why)
			return
		}
		d.compact(r, v)
	} else if s.name != "" {
		r.Source = SourceEvents
		r.EventName = s.name
		if why := r.durationReason(); why != ReasonNone {
			d.invalid(r, why)
			return
		}
		d.events(r, span.Events(), s)
	}
	if !r.Valid {
		return
	}
	n := r.Timeline.Len()
	r.Complete = n > 0
	if r.Source == SourceEvents && span.DroppedEventsCount() != 0 {
		r.Complete = false
	}
	if v, ok := fs.get(fChunkCount); ok && (v.Type() != pcommon.ValueTypeInt || v.Int() != int64(n)) {
		r.Complete = false
	}
}

func (d *Decoder) invalid(r *Result, why Reason) {
	r.Valid, r.Reason, r.Complete = false, why, false
	r.Timeline, d.hasGaps = timeline.Timeline{}, false
}

// eventScan is what one pass over a span's events found.
type eventScan struct {
	name      string            // the highest-priority chunk event name present, or ""
	n         int               // how many events carry it
	collected bool              // their arrivals are in d.offsets (and d.tokens, when tokens)
	why       Reason            // the first problem among those arrivals, when collected
	tokens    bool              // an arrival carries a token count
	gaps      timeline.GapStats // of the arrivals collected, in the order they came
	counted   bool              // every gap between them, in time order, is counted in d.counter
}

// sorted reports whether the arrivals came in time order: then no gap between them is negative,
// which the smallest gap says without a comparison of its own per arrival.
func (s *eventScan) sorted() bool { return s.gaps.MinNs >= 0 }

// scanEvents reads the span's events once: it notes where the first OpenInference first-token
// event is, finds the highest-priority name of names present and counts its events, and, when
// collect is true, collects that name's arrivals on the way into d.offsets, and their token counts
// into d.tokens once one carries any (starting over when a higher-priority name turns up). Reading
// each event once matters in a collector: the events of a span the receiver has just decoded are
// cold in the caches, and each pass over them pays for it again. The decoder collects when the
// span has no more events than max_chunks, so that a timeline too long to read costs no
// allocation; a span with more events, but not more chunk events, takes a second pass (events).
//
// The loop keeps what it tracks in local variables, not in the Decoder or the scan, so that they
// stay in registers: it runs once per event of every span.
func (d *Decoder) scanEvents(r *Result, evs ptrace.SpanEventSlice, names []string, collect bool) eventScan {
	n := evs.Len()
	best := len(names)
	count, why, hasTokens := 0, ReasonNone, false
	start, end, prev, firstToken := r.Start, r.End, int64(0), -1
	gaps := timeline.NoGaps() // of the arrivals in the order they came: the timeline's when sorted
	th := int64(d.stall)
	offs, toks := d.offsets[:0], d.tokens[:0]
	if collect {
		offs = slices.Grow(offs, n)
	}
	for i := range n {
		ev := evs.At(i)
		name := ev.Name()
		if firstToken < 0 && name == itlconv.OpenInferenceFirstTokenEvent {
			firstToken = i
		}
		j := 0
		for j <= best && j < len(names) && name != names[j] {
			j++
		}
		if j > best || j == len(names) {
			continue // not a chunk event, or one of a lower priority than a name already found
		}
		if j < best { // a higher-priority name: start over with it
			best, count, why, hasTokens = j, 0, ReasonNone, false
			offs, toks, gaps = offs[:0], toks[:0], timeline.NoGaps()
		}
		count++
		if !collect || why != ReasonNone {
			continue
		}
		ts := int64(ev.Timestamp())
		switch { // as unsigned, as OTLP's timestamps are (see durationReason)
		case uint64(ts) < uint64(start):
			why = ReasonBeforeStart
			continue
		case uint64(ts) > uint64(end):
			why = ReasonAfterEnd
			continue
		}
		off := ts - start
		if len(offs) > 0 {
			gaps = gaps.Add(off-prev, th)
		}
		prev = off
		tok := int64(1)
		if ev.Attributes().Len() != 0 {
			var carries bool
			if tok, carries, why = chunkTokens(ev); why != ReasonNone {
				continue
			}
			if carries && !hasTokens {
				hasTokens, toks = true, firstCounts(toks, len(offs), n)
			}
		}
		offs = append(offs, off)
		if hasTokens {
			toks = append(toks, tok)
		}
	}
	d.offsets, d.tokens, r.firstToken = offs, toks, firstToken
	sc := eventScan{n: count, collected: collect, why: why, tokens: hasTokens, gaps: gaps}
	if best < len(names) {
		sc.name = names[best]
	}
	return sc
}

// scanChunks is scanEvents for the span most chunk timelines come on: every event a chunk event
// of the highest-priority name, within the span, at most max_chunks of them. On such a span it finds
// what scanEvents would, with a fraction of the work per event (no name priority, no first-token
// event to look for); at the first event that is not such, or whose token count is not valid, it
// reports false and scanEvents reads the span from the start. TestScanChunksAgrees checks the two
// against each other.
//
// It reads each event once: plainEvents the events that carry no attributes, the shape otelitl
// writes for one token a chunk, and from the first that carries some (a token count), tokenEvents
// the rest. Whether every arrival lies within the span it then tells from the gap statistics,
// without a pass over the offsets (inSpan).
func (d *Decoder) scanChunks(r *Result, evs ptrace.SpanEventSlice) (eventScan, bool) {
	n := evs.Len()
	name := d.names[0]
	start, end := r.Start, r.End
	if n == 0 || n > d.maxChunks || uint64(end) < uint64(start) || name == itlconv.OpenInferenceFirstTokenEvent {
		return eventScan{}, false
	}
	offs, toks := slices.Grow(d.offsets[:0], n)[:n], d.tokens[:0]
	gaps, k, ok := d.plainEvents(evs, offs, start)
	hasTokens := false
	if ok && k < n {
		gaps, toks, hasTokens, ok = d.tokenEvents(evs, offs, k, start, gaps, toks)
	}
	if !ok || !inSpan(offs, gaps, uint64(end-start)) {
		d.offsets, d.tokens = offs[:0], toks[:0]
		return eventScan{}, false
	}
	d.offsets, d.tokens = offs, toks
	// plainEvents counted every gap when it read every arrival, in time order: it leaves out a
	// negative gap, and the timeline's gaps are then those of the arrivals sorted.
	counted := d.counter != nil && name == itlconv.ChunkEventName && k == n && gaps.MinNs >= 0
	return eventScan{name: name, n: n, collected: true, tokens: hasTokens, gaps: gaps, counted: counted}, true
}

// plainEvents reads the span's events from the first for as long as they are chunk events of the
// highest-priority name without attributes: each one's offset from start into offs, and their
// gaps' statistics. It returns how many it read, k (the event at k carries attributes, when k is
// less than len(offs)), and false at an event of another name.
//
// Its loop only loads each event's timestamp, name and attribute count: each event is an object
// of its own, behind a pointer, and a loop this short keeps its state in registers and lets the
// CPU have the loads of many events in flight at once.
func (d *Decoder) plainEvents(evs ptrace.SpanEventSlice, offs []int64, start int64) (gaps timeline.GapStats, k int, ok bool) {
	name, th := d.names[0], int64(d.stall)
	gaps = timeline.NoGaps()
	// The default name is compared as a constant, which the compiler turns into a few loads and
	// comparisons in line. The names of a span the receiver decoded are strings of their own, so a
	// comparison with a variable would call memequal for every event.
	isDefault := name == itlconv.ChunkEventName
	ev := evs.At(0)
	prev := int64(ev.Timestamp()) - start
	offs[0] = prev
	if !chunkNamed(ev.Name(), name, isDefault) {
		return gaps, 0, false
	}
	if ev.Attributes().Len() != 0 {
		return gaps, 0, true
	}
	if isDefault && d.counter != nil {
		return d.countedEvents(evs, offs, start, prev)
	}
	if isDefault {
		// A stall ends the inner loop, which counts it, and the loop goes on after it: a stall is
		// rare, and a branch taken that rarely costs less per gap than a count without one.
		for i := 1; i < len(offs); i++ {
			for ; i < len(offs); i++ {
				ev := evs.At(i)
				off := int64(ev.Timestamp()) - start
				offs[i] = off
				if ev.Name() != itlconv.ChunkEventName {
					return gaps, i, false
				}
				if ev.Attributes().Len() != 0 {
					return gaps, i, true
				}
				g := off - prev
				gaps.MinNs, gaps.MaxNs, prev = min(gaps.MinNs, g), max(gaps.MaxNs, g), off
				if g > th {
					gaps.Stalls++
					break
				}
			}
		}
		return gaps, len(offs), true
	}
	for i := 1; i < len(offs); i++ {
		ev := evs.At(i)
		off := int64(ev.Timestamp()) - start
		offs[i] = off
		if ev.Name() != name {
			return gaps, i, false
		}
		if ev.Attributes().Len() != 0 {
			return gaps, i, true
		}
		gaps = gaps.Add(off-prev, th)
		prev = off
	}
	return gaps, len(offs), true
}

// countedEvents is plainEvents's loop over chunk events of the default name for a decoder with a
// counter: it also counts each gap into the counter's buckets, so that the itl_metrics connector
// need not go over the offsets again (BENCHMARKS.md). Event 0, at offset prev, has been read.
//
// One comparison in the loop sends the rare gaps out of it: a stall, a gap beyond the counter's
// linear table, and a negative one (arrivals out of order, which GapCounts then leaves out).
// Its own function, so that the compiler gives its state the registers: it has none to spare.
func (d *Decoder) countedEvents(evs ptrace.SpanEventSlice, offs []int64, start, prev int64) (gaps timeline.GapStats, k int, ok bool) {
	c, th := d.counter, int64(d.stall)
	c.Reset()
	gaps = timeline.NoGaps()
	cut, shift := c.Cut(th), c.Shift()
	for i := 1; i < len(offs); i++ {
		for ; i < len(offs); i++ {
			ev := evs.At(i)
			off := int64(ev.Timestamp()) - start
			offs[i] = off
			if ev.Name() != itlconv.ChunkEventName {
				return gaps, i, false
			}
			if ev.Attributes().Len() != 0 {
				return gaps, i, true
			}
			g := off - prev
			gaps.MinNs, gaps.MaxNs, prev = min(gaps.MinNs, g), max(gaps.MaxNs, g), off
			if uint64(g) >= cut {
				break
			}
			c.Add(g, shift)
		}
		if i == len(offs) {
			break
		}
		g := offs[i] - offs[i-1]
		if g > th {
			gaps.Stalls++
		}
		if g >= 0 {
			c.AddAny(g)
		}
	}
	return gaps, len(offs), true
}

// chunkNamed reports whether an event named evName is a chunk event of name; isDefault says name
// is itlconv.ChunkEventName, which is then compared as a constant (see plainEvents). It inlines.
func chunkNamed(evName, name string, isDefault bool) bool {
	return isDefault && evName == itlconv.ChunkEventName || !isDefault && evName == name
}

// tokenEvents goes on from event k, the first that carries attributes, where plainEvents stopped,
// with the statistics of the gaps before it: it reads each event's offset and token count (1 for
// an event that carries none) and counts the gaps, and reports false at an event of another name
// or a token count that is not valid. toks is empty; once an event carries a count, it holds a
// count for every event.
//
// Only an event that carries attributes has a count to look up. The events between two such, most
// of a reply even when a server decodes speculatively, take an inner loop as short as
// plainEvents's: the counts start as 1 for every event, when the first count turns up, and an
// event without attributes leaves its 1 alone.
func (d *Decoder) tokenEvents(evs ptrace.SpanEventSlice, offs []int64, k int, start int64, gaps timeline.GapStats,
	toks []int64) (timeline.GapStats, []int64, bool, bool) {
	name, th, hasTokens := d.names[0], int64(d.stall), false
	isDefault := name == itlconv.ChunkEventName // compared as a constant (see plainEvents)
	n, prev := len(offs), int64(0)
	if k > 0 {
		prev = offs[k-1]
	}
	for i := k; i < n; {
		// Event i carries attributes, and its name was checked where the last loop stopped at it.
		ev := evs.At(i)
		off := int64(ev.Timestamp()) - start
		offs[i] = off
		if i > 0 {
			gaps = gaps.Add(off-prev, th)
		}
		prev = off
		tok, carries, why := chunkTokens(ev)
		if why != ReasonNone {
			return gaps, toks, false, false
		}
		if carries && !hasTokens {
			hasTokens, toks = true, ones(toks, n)
		}
		if hasTokens {
			toks[i] = tok
		}
		for i++; i < n; i++ {
			ev := evs.At(i)
			off := int64(ev.Timestamp()) - start
			offs[i] = off
			if !chunkNamed(ev.Name(), name, isDefault) {
				return gaps, toks, false, false
			}
			if ev.Attributes().Len() != 0 {
				break
			}
			gaps, prev = gaps.Add(off-prev, th), off
		}
	}
	return gaps, toks, hasTokens, true
}

// ones returns toks grown to n counts of 1.
func ones(toks []int64, n int) []int64 {
	toks = slices.Grow(toks[:0], n)[:n]
	for i := range toks {
		toks[i] = 1
	}
	return toks
}

// inSpan reports whether every offset lies within the span, from 0 to length (the span must not
// end before it starts), for offsets whose gaps counted to gs. An offset lies within the span when,
// taken as unsigned, it is at most the span's length: one comparison, exact for every int64 however
// the subtraction that made it wrapped.
//
// For arrivals in time order it needs no pass over the offsets: the first and the last within the
// span put every one between them there, as long as no sum of gaps can wrap around. The gaps are
// at least 0 and at most gs.MaxNs each, so the offsets, the first plus the gaps before each, stay
// below 2^63 when the first plus every gap at its largest does. Otherwise (arrivals out of order,
// or a span of centuries) it checks each offset.
func inSpan(offs []int64, gs timeline.GapStats, length uint64) bool {
	n := len(offs)
	if uint64(offs[0]) > length || uint64(offs[n-1]) > length {
		return false
	}
	if n == 1 {
		return true
	}
	if gs.MinNs >= 0 && length <= math.MaxInt64 && uint64(gs.MaxNs) <= (math.MaxInt64-length)/uint64(n-1) {
		return true
	}
	for _, off := range offs {
		if uint64(off) > length {
			return false
		}
	}
	return true
}

// firstCounts starts the token counts when the arrival after the first k carries the first count:
// those k carried none, so 1 each. The buffer grows to hold n.
func firstCounts(toks []int64, k, n int) []int64 {
	toks = slices.Grow(toks[:0], n)
	for range k {
		toks = append(toks, 1)
	}
	return toks
}

// chunkTokens reads a chunk event's token count: 1 when it carries none, and then false, or why it
// cannot be read.
func chunkTokens(ev ptrace.SpanEvent) (int64, bool, Reason) {
	tv, ok := ev.Attributes().Get(string(itlconv.ChunkTokensKey))
	if !ok {
		return 1, false, ReasonNone
	}
	if tv.Type() != pcommon.ValueTypeInt {
		return 0, false, ReasonNotInteger
	}
	if why := chunkTokensReason(tv.Int()); why != ReasonNone {
		return 0, false, why
	}
	return tv.Int(), true, ReasonNone
}

// events builds the timeline from the events scanEvents found, reading them again, for s.name
// only, when it could not collect them on its way (a span with more events than max_chunks).
func (d *Decoder) events(r *Result, evs ptrace.SpanEventSlice, s eventScan) {
	if s.n > d.maxChunks {
		d.invalid(r, ReasonTooManyChunks)
		return
	}
	if !s.collected {
		d.one[0] = s.name
		s = d.scanEvents(r, evs, d.one[:], true)
	}
	if s.why != ReasonNone {
		d.invalid(r, s.why)
		return
	}
	offs := d.offsets
	if !s.sorted() { // the order of events on a span means nothing
		d.pairs = d.pairs[:0]
		for i, off := range offs {
			p := pair{off: off, tok: 1}
			if s.tokens {
				p.tok = d.tokens[i]
			}
			d.pairs = append(d.pairs, p)
		}
		slices.SortStableFunc(d.pairs, func(a, b pair) int { return cmp.Compare(a.off, b.off) })
		for i, p := range d.pairs {
			offs[i] = p.off
			if s.tokens {
				d.tokens[i] = p.tok
			}
		}
	}
	r.Timeline = timeline.Timeline{Offsets: offs}
	// The gaps counted on the way are the timeline's when the arrivals came in time order; for the
	// rare span whose events did not, Read counts them on the sorted timeline.
	d.gaps, d.hasGaps = s.gaps, s.sorted()
	d.counted = s.counted
	if s.tokens {
		r.Timeline.Tokens = d.tokens
	}
}

func (d *Decoder) compact(r *Result, v pcommon.Value) {
	if v.Type() != pcommon.ValueTypeSlice {
		d.invalid(r, ReasonNotArray)
		return
	}
	offs := v.Slice()
	n := offs.Len()
	if n > d.maxChunks {
		d.invalid(r, ReasonTooManyChunks)
		return
	}
	var toks pcommon.Slice
	hasTokens := false
	if tv, ok := d.fields.get(fChunkTokens); ok {
		if tv.Type() != pcommon.ValueTypeSlice {
			d.invalid(r, ReasonNotArray)
			return
		}
		toks, hasTokens = tv.Slice(), true
		if toks.Len() != n {
			d.invalid(r, ReasonLengthMismatch)
			return
		}
	}
	d.offsets = slices.Grow(d.offsets[:0], n)[:n]
	// The span lasts at most itlconv.MaxDuration (checked before): an offset within it converts to
	// nanoseconds without overflow.
	limit := itlconv.Micros(r.End - r.Start)
	var gaps timeline.GapStats
	var bad int
	if d.counter != nil {
		gaps, bad = readCountedOffsets(offs, d.offsets, limit, int64(d.stall), d.counter)
	} else {
		gaps, bad = readOffsets(offs, d.offsets, limit, int64(d.stall))
	}
	if bad < n {
		prev := int64(0)
		if bad > 0 {
			prev = itlconv.Micros(d.offsets[bad-1])
		}
		e := offs.At(bad)
		d.invalid(r, offsetReason(e, e.Int(), prev))
		return
	}
	r.Timeline = timeline.Timeline{Offsets: d.offsets}
	d.gaps, d.hasGaps, d.counted = gaps, true, d.counter != nil
	if !hasTokens {
		return
	}
	d.tokens = slices.Grow(d.tokens[:0], n)[:n]
	for i := range n {
		e := toks.At(i)
		if e.Type() != pcommon.ValueTypeInt {
			d.invalid(r, ReasonNotInteger)
			return
		}
		if why := chunkTokensReason(e.Int()); why != ReasonNone {
			d.invalid(r, why)
			return
		}
		d.tokens[i] = e.Int()
	}
	r.Timeline.Tokens = d.tokens
}

// readOffsets converts the compact offsets (microseconds) to nanoseconds into out, which has
// their length, and counts their gaps against th (nanoseconds). It returns the index of the first
// offset that is not an integer, is below 0 or the offset before it, or exceeds limit (the span's
// length in microseconds), and len(out) when there is none.
//
// One unsigned comparison checks prev <= us <= limit: prev never exceeds limit, and an offset
// below prev wraps around to a difference larger than any limit. The loop is a function of its
// own so that its state stays in registers: inside compact the compiler kept most of it on the
// stack, loading and storing it again for every offset.
func readOffsets(offs pcommon.Slice, out []int64, limit, th int64) (timeline.GapStats, int) {
	gaps := timeline.NoGaps()
	var prev, prevNs int64 // prev from 0: a negative first offset fails the range check
	// A stall ends the inner loop, which counts it, and the loop goes on after it (see plainEvents).
	for i := 0; i < len(out); i++ {
		for ; i < len(out); i++ {
			e := offs.At(i)
			us := e.Int() // 0 for a value that is not an int: only then is its type worth a look
			if uint64(us-prev) > uint64(limit-prev) || us == 0 && e.Type() != pcommon.ValueTypeInt {
				return gaps, i
			}
			ns := itlconv.Nanos(us)
			g := ns - prevNs
			prev, prevNs, out[i] = us, ns, ns
			if i > 0 {
				gaps.MinNs, gaps.MaxNs = min(gaps.MinNs, g), max(gaps.MaxNs, g)
				if g > th {
					gaps.Stalls++
					break
				}
			}
		}
	}
	return gaps, len(out)
}

// readCountedOffsets is readOffsets for a decoder with a counter: it also counts each gap into the
// counter's buckets (see countedEvents), with AddFlag, whose flag suits a loop over an array. The
// offsets it accepts are in order, so no gap is negative; one comparison sends a stall or a gap
// beyond the linear table out of the loop.
func readCountedOffsets(offs pcommon.Slice, out []int64, limit, th int64, c *buckets.Counter) (timeline.GapStats, int) {
	c.Reset()
	gaps := timeline.NoGaps()
	if len(out) == 0 {
		return gaps, 0
	}
	e := offs.At(0)
	prev := e.Int()
	if uint64(prev) > uint64(limit) || prev == 0 && e.Type() != pcommon.ValueTypeInt {
		return gaps, 0
	}
	out[0] = itlconv.Nanos(prev)
	cut, shift := c.Cut(th), c.Shift()
	for i := 1; i < len(out); i++ {
		for ; i < len(out); i++ {
			e := offs.At(i)
			us := e.Int() // 0 for a value that is not an int: only then is its type worth a look
			if uint64(us-prev) > uint64(limit-prev) || us == 0 && e.Type() != pcommon.ValueTypeInt {
				return gaps, i
			}
			g := itlconv.Nanos(us - prev)
			prev, out[i] = us, itlconv.Nanos(us)
			gaps.MinNs, gaps.MaxNs = min(gaps.MinNs, g), max(gaps.MaxNs, g)
			if uint64(g) >= cut {
				break
			}
			c.AddFlag(g, shift)
		}
		if i == len(out) {
			break
		}
		g := out[i] - out[i-1]
		if g > th {
			gaps.Stalls++
		}
		c.AddAny(g)
	}
	return gaps, len(out)
}

// offsetReason says what is wrong with a compact offset us (the value e) that follows prev and
// failed the reader's range check: not an integer, negative, below prev, or after the span's end.
func offsetReason(e pcommon.Value, us, prev int64) Reason {
	switch {
	case e.Type() != pcommon.ValueTypeInt:
		return ReasonNotInteger
	case us < 0:
		return ReasonNegativeOffset
	case us < prev:
		return ReasonDecreasing
	}
	return ReasonAfterEnd
}

// chunkTokensReason says what is wrong with a chunk's token count, or "".
func chunkTokensReason(n int64) Reason {
	switch {
	case n < 0:
		return ReasonNegativeTokens
	case n > itlconv.MaxTokens:
		return ReasonTooManyTokens
	}
	return ReasonNone
}

// ErrorType returns the span's error.type; for an error status without one, the HTTP status code
// the span records (http.response.status_code, 400 or above, as the conventions name an HTTP
// failure: the Vercel AI SDK 7 writes no error.type), else itlconv.OtherValue ("_OTHER"); and ""
// for a span that did not fail.
func ErrorType(span ptrace.Span) string {
	if v, ok := span.Attributes().Get(string(semconv.ErrorTypeKey)); ok && v.Str() != "" {
		return v.Str()
	}
	if span.Status().Code() != ptrace.StatusCodeError {
		return ""
	}
	if v, ok := span.Attributes().Get(string(semconv.HTTPResponseStatusCodeKey)); ok {
		var code int64
		switch v.Type() {
		case pcommon.ValueTypeInt:
			code = v.Int()
		case pcommon.ValueTypeDouble:
			if f := v.Double(); f == math.Trunc(f) && f >= 0 && f < 1000 {
				code = int64(f)
			}
		case pcommon.ValueTypeStr:
			code, _ = strconv.ParseInt(strings.TrimSpace(v.Str()), 10, 64)
		}
		if code >= 400 && code <= 599 {
			return strconv.FormatInt(code, 10)
		}
	}
	return itlconv.OtherValue
}
