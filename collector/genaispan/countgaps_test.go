package genaispan_test

import (
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/internal/buckets"
	"github.com/otelitl/itl/itlconv"
)

// eventSpan returns a model call's span of chunk events named name at the offsets (ns) from its
// start, which lasts until the last arrival and a second more.
func eventSpan(name string, offsets ...int64) ptrace.Span {
	s := ptrace.NewSpan()
	const start = int64(1_800_000_000_000_000_000)
	s.SetStartTimestamp(pcommon.Timestamp(start))
	s.SetEndTimestamp(pcommon.Timestamp(start + slices.Max(offsets) + 1e9))
	s.Attributes().PutStr("gen_ai.operation.name", "chat")
	for _, o := range offsets {
		ev := s.Events().AppendEmpty()
		ev.SetName(name)
		ev.SetTimestamp(pcommon.Timestamp(start + o))
	}
	return s
}

// chain returns the offsets of arrivals with the gaps given, from 0.
func chain(gaps ...int64) []int64 {
	offs := []int64{0}
	for _, g := range gaps {
		offs = append(offs, offs[len(offs)-1]+g)
	}
	return offs
}

// compactSpan returns a model call's span with the compact timeline offsetsUs (microseconds),
// which lasts until the last arrival and a second more.
func compactSpan(offsetsUs ...int64) ptrace.Span {
	s := eventSpan(itlconv.ChunkEventName, 0)
	s.Events().RemoveIf(func(ptrace.SpanEvent) bool { return true })
	s.SetEndTimestamp(s.StartTimestamp() + pcommon.Timestamp(slices.Max(offsetsUs)*1000+1e9))
	raw := make([]any, len(offsetsUs))
	for i, o := range offsetsUs {
		raw[i] = o
	}
	_ = s.Attributes().PutEmptySlice(string(itlconv.ChunkOffsetsKey)).FromRaw(raw)
	return s
}

// micros returns offsets in nanoseconds as whole microseconds, and those microseconds in
// nanoseconds again: a compact timeline's offsets, and what the reader makes of them.
func micros(offs []int64) (us, ns []int64) {
	for _, o := range offs {
		us = append(us, o/1000)
		ns = append(ns, o/1000*1000)
	}
	return us, ns
}

// TestReadCountsGaps checks Decoder.GapCounts: with a counter, a valid timeline of plain chunk
// events or a compact one has its gaps counted in the counter's buckets exactly where a search of
// the boundaries puts them (a gap on a boundary, a nanosecond or a microsecond either side, a
// stall, a gap beyond the linear table, a gap of 0), also when a compact timeline comes with
// events, which it wins over; every other timeline has none, so that the connector counts its gaps
// itself: events out of order, events with token counts, events of another name, an invalid
// timeline, a decoder without a counter, and each of them after a counted span.
func TestReadCountsGaps(t *testing.T) {
	tab := buckets.New(itlconv.GapBuckets)
	onBounds := []int64{1}
	for _, b := range itlconv.GapBuckets {
		ns := int64(b * 1e9)
		onBounds = append(onBounds, ns-1, ns, ns+1)
	}
	const stall = 250 * time.Millisecond
	counted := []struct {
		name string
		offs []int64
	}{
		{"one chunk", []int64{5e6}},
		{"gaps on the boundaries and either side", chain(onBounds...)},
		{"a stall and gaps beyond the linear table (4.3 s)", chain(20e6, 300e6, 5e9, 0, 30e6, 1<<32-1, 1<<32, 20e6)},
	}
	for _, c := range counted {
		us, ns := micros(c.offs)
		withEvents := compactSpan(us...)
		for _, o := range chain(10e6, 20e6) {
			ev := withEvents.Events().AppendEmpty()
			ev.SetName(itlconv.ChunkEventName)
			ev.SetTimestamp(withEvents.StartTimestamp() + pcommon.Timestamp(o))
		}
		for _, r := range []struct {
			enc  string
			span ptrace.Span
			offs []int64
		}{
			{"events", eventSpan(itlconv.ChunkEventName, c.offs...), c.offs},
			{"compact", compactSpan(us...), ns},
			{"compact beside events", withEvents, ns},
		} {
			d := genaispan.New(genaispan.Config{StallThreshold: stall})
			d.CountGaps(buckets.NewCounter(tab))
			call := d.Read(r.span, false)
			if !call.Valid || !slices.Equal(call.Timeline.Offsets, r.offs) {
				t.Fatalf("%s, %s: read %+v", c.name, r.enc, call.Result)
			}
			if want := genaispan.CountsOf(tab, r.offs); !slices.Equal(d.GapCounts(), want) {
				t.Errorf("%s, %s: counted %v, want %v", c.name, r.enc, d.GapCounts(), want)
			}
		}
	}

	withTokens := eventSpan(itlconv.ChunkEventName, chain(10e6, 20e6, 30e6)...)
	withTokens.Events().At(2).Attributes().PutInt(string(itlconv.ChunkTokensKey), 2)
	afterEnd := eventSpan(itlconv.ChunkEventName, chain(10e6, 20e6)...)
	afterEnd.SetEndTimestamp(afterEnd.StartTimestamp() + 15e6)
	compactAfterEnd := compactSpan(0, 5000, 20000)
	compactAfterEnd.SetEndTimestamp(compactAfterEnd.StartTimestamp() + 15e6)
	compactFirstAfterEnd := compactSpan(20000, 20001)
	compactFirstAfterEnd.SetEndTimestamp(compactFirstAfterEnd.StartTimestamp() + 19_999_500)
	compactNotInteger := compactSpan(0, 5000)
	compactNotInteger.Attributes().PutEmptySlice(string(itlconv.ChunkOffsetsKey)).AppendEmpty().SetDouble(0)
	for _, c := range []struct {
		name  string
		span  ptrace.Span
		names []string
	}{
		{"arrivals out of order", eventSpan(itlconv.ChunkEventName, 0, 30e6, 10e6, 40e6), nil},
		{"token counts", withTokens, nil},
		{"another event name", eventSpan("my.chunk", chain(10e6, 20e6)...), []string{"my.chunk"}},
		{"a compact offset after the end", compactAfterEnd, nil},
		{"a first compact offset after the end", compactFirstAfterEnd, nil},
		{"a negative first compact offset", compactSpan(-1, 5000), nil},
		{"a first compact offset that is not an integer", compactNotInteger, nil},
		{"an arrival after the end", afterEnd, nil},
	} {
		d := genaispan.New(genaispan.Config{StallThreshold: stall, ChunkEventNames: c.names})
		d.CountGaps(buckets.NewCounter(tab))
		// The span before is counted, where the default name is read: its counts must not pass
		// to this one.
		if d.Read(eventSpan(itlconv.ChunkEventName, chain(10e6, 20e6)...), false); d.GapCounts() == nil && c.names == nil {
			t.Fatalf("%s: the span before was not counted", c.name)
		}
		call := d.Read(c.span, false)
		// The same call as a decoder without a counter reads: the reason of an invalid timeline too.
		if want := genaispan.New(genaispan.Config{StallThreshold: stall, ChunkEventNames: c.names}).Read(c.span, false); call.Valid != want.Valid || call.Reason != want.Reason {
			t.Errorf("%s: valid %v (%s), without a counter %v (%s)", c.name, call.Valid, call.Reason, want.Valid, want.Reason)
		}
		if call.Timeline.Len() == 0 && call.Valid {
			t.Fatalf("%s: no timeline read: %+v", c.name, call.Result)
		}
		if d.GapCounts() != nil {
			t.Errorf("%s: counted %v, want no counts", c.name, d.GapCounts())
		}
	}

	d := genaispan.New(genaispan.Config{StallThreshold: stall})
	if d.Read(eventSpan(itlconv.ChunkEventName, chain(10e6, 20e6)...), false); d.GapCounts() != nil {
		t.Errorf("a decoder without a counter counted %v", d.GapCounts())
	}

	// A span that is no model call, which Read passes by without decoding it, after a counted one.
	d.CountGaps(buckets.NewCounter(tab))
	if d.Read(eventSpan(itlconv.ChunkEventName, chain(10e6, 20e6)...), false); d.GapCounts() == nil {
		t.Fatal("the span before was not counted")
	}
	if call := d.Read(ptrace.NewSpan(), false); call.ModelCall || d.GapCounts() != nil {
		t.Errorf("a span that is no model call: a model call %v, counted %v", call.ModelCall, d.GapCounts())
	}
}
