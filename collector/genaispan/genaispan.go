// Package genaispan reads generation spans as the otelitl collector components see them: the chunk
// timeline a span carries, following the rules of the itlconv module's SPEC.md (which source wins,
// when a timeline is invalid, when it is complete), and the figures it yields. The itl processor
// and the itl_metrics connector share it, and the settings it reads with ([Config]), so that the
// two never disagree about a span.
package genaispan

import (
	"cmp"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

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

// Reason names why a timeline is invalid. It is the value of the "reason" attribute of the
// components' malformed-span counters, so it stays low-cardinality.
type Reason string

const (
	ReasonNone             Reason = ""
	ReasonNotArray         Reason = "not_an_array"      // a compact attribute is not an array
	ReasonNotInteger       Reason = "not_integer"       // an array element or tokens attribute is not an integer
	ReasonLengthMismatch   Reason = "length_mismatch"   // the tokens array's length differs from the offsets'
	ReasonNegativeOffset   Reason = "negative_offset"   // an offset below zero
	ReasonDecreasing       Reason = "decreasing_offset" // offsets that go backwards
	ReasonNegativeTokens   Reason = "negative_tokens"   // a token count below zero
	ReasonBeforeStart      Reason = "before_start"      // an arrival before the span's start
	ReasonAfterEnd         Reason = "after_end"         // an arrival after the span's end
	ReasonTooManyChunks    Reason = "too_many_chunks"   // more chunks than max_chunks
	ReasonNegativeDuration Reason = "negative_duration" // the span ends before it starts
)

// Reasons lists every Reason a malformed timeline can have, for tests and docs.
var Reasons = []Reason{ReasonNotArray, ReasonNotInteger, ReasonLengthMismatch, ReasonNegativeOffset, ReasonDecreasing, ReasonNegativeTokens, ReasonBeforeStart, ReasonAfterEnd, ReasonTooManyChunks, ReasonNegativeDuration}

// Decoder reads timelines. It reuses its buffers from span to span, so it is not safe for
// concurrent use: give each goroutine its own.
type Decoder struct {
	names     []string
	maxChunks int
	stall     time.Duration

	offsets []int64
	tokens  []int64
	pairs   []pair
	Scratch []float64 // for timeline.Compute's sorted gaps
}

type pair struct{ off, tok int64 }

// New returns a Decoder for cfg. Empty ChunkEventNames and a MaxChunks of 0 take the defaults.
func New(cfg Config) *Decoder {
	d := &Decoder{names: cfg.ChunkEventNames, maxChunks: cfg.MaxChunks, stall: cfg.StallThreshold}
	if len(d.names) == 0 {
		d.names = itlconv.DefaultChunkEventNames
	}
	if d.maxChunks <= 0 {
		d.maxChunks = itlconv.DefaultMaxChunks
	}
	if d.stall <= 0 {
		d.stall = itlconv.DefaultStallThreshold
	}
	return d
}

// Result is what a span holds. Its Timeline aliases the Decoder's buffers: it is valid until the
// next call to Decode.
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
	// GenAI is true for a span with gen_ai.operation.name or with a timeline.
	GenAI bool
	// Start and End are the span's timestamps in Unix nanoseconds.
	Start, End int64
}

// Duration returns the span's duration in seconds, and false when it ends before it starts.
func (r *Result) Duration() (float64, bool) {
	if r.End < r.Start {
		return 0, false
	}
	return timeline.Seconds(r.End - r.Start), true
}

// HasTimeline reports whether the span carries a timeline at all, valid or not.
func (r *Result) HasTimeline() bool { return r.Source != SourceNone }

// Decode reads span's timeline.
func (d *Decoder) Decode(span ptrace.Span) Result {
	r := Result{Valid: true, Start: int64(span.StartTimestamp()), End: int64(span.EndTimestamp())}
	attrs := span.Attributes()
	_, r.GenAI = attrs.Get(string(semconv.GenAIOperationNameKey))

	if v, ok := attrs.Get(string(itlconv.ChunkOffsetsKey)); ok {
		r.Source = SourceCompact
		r.GenAI = true
		d.compact(&r, v, attrs)
	} else if name := d.eventName(span.Events()); name != "" {
		r.Source = SourceEvents
		r.EventName = name
		r.GenAI = true
		d.events(&r, span.Events(), name)
	}
	if r.Valid && r.Source != SourceNone && r.End < r.Start {
		d.invalid(&r, ReasonNegativeDuration)
	}
	if !r.Valid {
		return r
	}
	n := r.Timeline.Len()
	r.Complete = n > 0
	if r.Source == SourceEvents && span.DroppedEventsCount() != 0 {
		r.Complete = false
	}
	if v, ok := attrs.Get(string(itlconv.ChunkCountKey)); ok && (v.Type() != pcommon.ValueTypeInt || v.Int() != int64(n)) {
		r.Complete = false
	}
	return r
}

func (d *Decoder) invalid(r *Result, why Reason) {
	r.Valid, r.Reason, r.Complete = false, why, false
	r.Timeline = timeline.Timeline{}
}

// eventName returns the highest-priority configured chunk event name present on the span.
func (d *Decoder) eventName(evs ptrace.SpanEventSlice) string {
	best := len(d.names)
	for i := 0; i < evs.Len() && best > 0; i++ {
		name := evs.At(i).Name()
		for j := 0; j < best; j++ {
			if name == d.names[j] {
				best = j
				break
			}
		}
	}
	if best == len(d.names) {
		return ""
	}
	return d.names[best]
}

func (d *Decoder) compact(r *Result, v pcommon.Value, attrs pcommon.Map) {
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
	if tv, ok := attrs.Get(string(itlconv.ChunkTokensKey)); ok {
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
	span := r.End - r.Start
	var prev int64
	for i := range n {
		e := offs.At(i)
		if e.Type() != pcommon.ValueTypeInt {
			d.invalid(r, ReasonNotInteger)
			return
		}
		us := e.Int()
		switch {
		case us < 0:
			d.invalid(r, ReasonNegativeOffset)
			return
		case us < prev:
			d.invalid(r, ReasonDecreasing)
			return
		}
		ns, ok := itlconv.FromMicros(us)
		if !ok || ns > span {
			d.invalid(r, ReasonAfterEnd)
			return
		}
		prev = us
		d.offsets[i] = ns
	}
	r.Timeline = timeline.Timeline{Offsets: d.offsets}
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
		if e.Int() < 0 {
			d.invalid(r, ReasonNegativeTokens)
			return
		}
		d.tokens[i] = e.Int()
	}
	r.Timeline.Tokens = d.tokens
}

func (d *Decoder) events(r *Result, evs ptrace.SpanEventSlice, name string) {
	n := 0
	for i := range evs.Len() {
		if evs.At(i).Name() == name {
			n++
		}
	}
	if n > d.maxChunks {
		d.invalid(r, ReasonTooManyChunks)
		return
	}
	d.pairs = slices.Grow(d.pairs[:0], n)
	sorted, anyTokens := true, false
	for i := range evs.Len() {
		ev := evs.At(i)
		if ev.Name() != name {
			continue
		}
		ts := int64(ev.Timestamp())
		if ts < r.Start {
			d.invalid(r, ReasonBeforeStart)
			return
		}
		if ts > r.End {
			d.invalid(r, ReasonAfterEnd)
			return
		}
		p := pair{off: ts - r.Start, tok: 1}
		if ev.Attributes().Len() > 0 {
			if tv, ok := ev.Attributes().Get(string(itlconv.ChunkTokensKey)); ok {
				if tv.Type() != pcommon.ValueTypeInt {
					d.invalid(r, ReasonNotInteger)
					return
				}
				if tv.Int() < 0 {
					d.invalid(r, ReasonNegativeTokens)
					return
				}
				p.tok, anyTokens = tv.Int(), true
			}
		}
		if len(d.pairs) > 0 && p.off < d.pairs[len(d.pairs)-1].off {
			sorted = false
		}
		d.pairs = append(d.pairs, p)
	}
	if !sorted { // the order of events on a span means nothing
		slices.SortStableFunc(d.pairs, func(a, b pair) int { return cmp.Compare(a.off, b.off) })
	}
	d.offsets = slices.Grow(d.offsets[:0], n)[:n]
	for i, p := range d.pairs {
		d.offsets[i] = p.off
	}
	r.Timeline = timeline.Timeline{Offsets: d.offsets}
	if anyTokens {
		d.tokens = slices.Grow(d.tokens[:0], n)[:n]
		for i, p := range d.pairs {
			d.tokens[i] = p.tok
		}
		r.Timeline.Tokens = d.tokens
	}
}

// Figures computes the figures of a decoded span per the golden README: attrs is the span's
// attributes (for usage and the TTFT attribute). It returns false when the timeline is invalid,
// which yields no chunk figures at all.
func (d *Decoder) Figures(r *Result, attrs pcommon.Map, percentiles bool) (timeline.Figures, bool) {
	if !r.Valid {
		return timeline.Figures{}, false
	}
	in := timeline.Input{Complete: r.Complete, StallThreshold: d.stall, Percentiles: percentiles}
	if v, ok := attrs.Get(string(semconv.GenAIUsageOutputTokensKey)); ok {
		switch v.Type() {
		case pcommon.ValueTypeInt:
			in.UsageOutputTokens, in.HasUsage = v.Int(), v.Int() >= 0
		case pcommon.ValueTypeDouble:
			in.UsageOutputTokens, in.HasUsage = int64(v.Double()), v.Double() >= 0
		}
	}
	if v, ok := attrs.Get(string(semconv.GenAIResponseTimeToFirstChunkKey)); ok {
		switch v.Type() {
		case pcommon.ValueTypeDouble:
			in.AttrTTFT, in.HasAttrTTFT = v.Double(), v.Double() >= 0
		case pcommon.ValueTypeInt:
			in.AttrTTFT, in.HasAttrTTFT = float64(v.Int()), v.Int() >= 0
		}
	}
	f, scratch := timeline.Compute(r.Timeline, in, d.Scratch)
	d.Scratch = scratch
	return f, true
}

// ErrorType returns the span's error.type, itlconv.OtherValue ("_OTHER") for an error status without one, and "" for a
// span that did not fail.
func ErrorType(span ptrace.Span) string {
	if v, ok := span.Attributes().Get(string(semconv.ErrorTypeKey)); ok && v.Str() != "" {
		return v.Str()
	}
	if span.Status().Code() == ptrace.StatusCodeError {
		return itlconv.OtherValue
	}
	return ""
}
