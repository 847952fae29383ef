package genaispan_test

import (
	"fmt"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/itlconv"
)

// TestEventNamePriority: when a span carries events under several configured chunk names,
// interleaved and in any order, the timeline is read from the highest-priority name alone, with
// exactly its events, and the max_chunks cap counts only those.
func TestEventNamePriority(t *testing.T) {
	names := itlconv.DefaultChunkEventNames
	start := pcommon.Timestamp(1_000_000_000)
	span := func(seq ...string) ptrace.Span {
		s := ptrace.NewSpan()
		s.SetStartTimestamp(start)
		s.SetEndTimestamp(start + pcommon.Timestamp(len(seq)+1)*10_000_000)
		for i, name := range seq {
			ev := s.Events().AppendEmpty()
			ev.SetName(name)
			ev.SetTimestamp(start + pcommon.Timestamp(i+1)*10_000_000)
		}
		return s
	}
	for _, tc := range []struct {
		name      string
		seq       []string
		maxChunks int
		want      string // the event name read
		chunks    int
		reason    genaispan.Reason
	}{
		{"highest last", []string{names[2], names[1], names[2], names[1], "other", names[0], names[0]}, 0, names[0], 2, ""},
		{"highest first", []string{names[0], names[1], names[1], names[1], names[0], names[2]}, 0, names[0], 2, ""},
		{"second only", []string{names[2], names[1], "other", names[2], names[1], names[1], names[2], names[1]}, 0, names[1], 4, ""},
		{"lowest only", []string{"other", names[2], names[2], names[2]}, 0, names[2], 3, ""},
		{"cap counts the name read", []string{names[1], names[1], names[1], names[0], names[0]}, 2, names[0], 2, ""},
		{"cap exceeded", []string{names[1], names[0], names[0], names[0]}, 2, names[0], 0, genaispan.ReasonTooManyChunks},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := span(tc.seq...)
			c := genaispan.New(genaispan.Config{MaxChunks: tc.maxChunks}).Read(s, true)
			if c.Reason != tc.reason || c.EventName != tc.want || c.Timeline.Len() != tc.chunks {
				t.Fatalf("read %q: %d chunks, reason %q; want %q: %d chunks, reason %q",
					c.EventName, c.Timeline.Len(), c.Reason, tc.want, tc.chunks, tc.reason)
			}
			if tc.reason != "" {
				return
			}
			k := 0
			for i, name := range tc.seq {
				if name != tc.want {
					continue
				}
				if want := int64(i+1) * 10_000_000; c.Timeline.Offsets[k] != want {
					t.Errorf("chunk %d at %d ns, want %d (event %d)", k, c.Timeline.Offsets[k], want, i)
				}
				k++
			}
		})
	}
}

// TestEventProblemsFollowTheNameRead: a problem on an event of a lower-priority name does not
// invalidate the timeline read from a higher-priority one, wherever it comes; a problem on the name
// read does, with its reason; and a span with more events than max_chunks (read in two passes)
// gives the same answers as one with fewer (read in one).
func TestEventProblemsFollowTheNameRead(t *testing.T) {
	names := itlconv.DefaultChunkEventNames
	start := pcommon.Timestamp(1_000_000_000)
	type ev struct {
		name string
		at   int64 // ns from the start; negative is before it
		tok  any   // nil: no token attribute
	}
	build := func(evs []ev, padding int) ptrace.Span {
		s := ptrace.NewSpan()
		s.SetStartTimestamp(start)
		s.SetEndTimestamp(start + 1_000_000_000)
		for _, e := range evs {
			x := s.Events().AppendEmpty()
			x.SetName(e.name)
			x.SetTimestamp(pcommon.Timestamp(int64(start) + e.at))
			switch v := e.tok.(type) {
			case int:
				x.Attributes().PutInt(string(itlconv.ChunkTokensKey), int64(v))
			case string:
				x.Attributes().PutStr(string(itlconv.ChunkTokensKey), v)
			}
		}
		for range padding { // events of no interest, to pass max_chunks in total
			s.Events().AppendEmpty().SetName("log")
		}
		return s
	}
	for _, tc := range []struct {
		name   string
		evs    []ev
		chunks int
		tokens bool
		reason genaispan.Reason
		toks   []int64 // the token counts in time order, when checked
	}{
		{"lower name before start, then the best", []ev{{names[1], -5, nil}, {names[0], 10, nil}, {names[0], 20, nil}}, 2, false, "", nil},
		{"lower name past the end, after the best", []ev{{names[0], 10, nil}, {names[1], 2_000_000_000, nil}, {names[0], 20, nil}}, 2, false, "", nil},
		{"lower name with bad tokens", []ev{{names[2], 10, "x"}, {names[0], 10, 2}, {names[0], 20, nil}}, 2, true, "", nil},
		{"best name before start", []ev{{names[0], 10, nil}, {names[0], -1, nil}}, 0, false, genaispan.ReasonBeforeStart, nil},
		{"best name past the end", []ev{{names[1], 10, nil}, {names[0], 2_000_000_000, nil}}, 0, false, genaispan.ReasonAfterEnd, nil},
		{"best name, tokens not an integer", []ev{{names[0], 10, "3"}}, 0, false, genaispan.ReasonNotInteger, nil},
		{"best name, negative tokens", []ev{{names[0], 10, -1}}, 0, false, genaispan.ReasonNegativeTokens, nil},
		{"out of order, with tokens", []ev{{names[0], 30, 3}, {names[0], 10, nil}, {names[0], 20, 2}}, 3, true, "", []int64{1, 2, 3}},
		{"tokens from the third event on", []ev{{names[0], 10, nil}, {names[0], 20, nil}, {names[0], 30, 4}, {names[0], 40, nil}}, 4, true, "", []int64{1, 1, 4, 1}},
		{"tokens on a lower name, then the best", []ev{{names[1], 5, 7}, {names[0], 10, nil}, {names[0], 20, nil}}, 2, false, "", nil},
		{"best name restarts the tokens", []ev{{names[1], 5, 7}, {names[1], 6, nil}, {names[0], 20, 2}, {names[0], 10, nil}}, 2, true, "", []int64{1, 2}},
	} {
		for _, padding := range []int{0, 8} {
			t.Run(fmt.Sprintf("%s/padding=%d", tc.name, padding), func(t *testing.T) {
				// max_chunks 6: 8 padding events make the span too long to collect in one pass.
				c := genaispan.New(genaispan.Config{MaxChunks: 6}).Read(build(tc.evs, padding), true)
				if c.Reason != tc.reason || c.Timeline.Len() != tc.chunks || (c.Timeline.Tokens != nil) != tc.tokens {
					t.Fatalf("%d chunks, tokens %v, reason %q; want %d chunks, tokens %v, reason %q",
						c.Timeline.Len(), c.Timeline.Tokens != nil, c.Reason, tc.chunks, tc.tokens, tc.reason)
				}
				if !slices.IsSorted(c.Timeline.Offsets) {
					t.Errorf("offsets %v not in time order", c.Timeline.Offsets)
				}
				if tc.toks != nil && !slices.Equal(c.Timeline.Tokens, tc.toks) {
					t.Errorf("tokens %v, want %v (offsets %v)", c.Timeline.Tokens, tc.toks, c.Timeline.Offsets)
				}
			})
		}
	}
}

// TestTooManyChunkEventsAllocateNothing: a span whose chunk events exceed max_chunks is rejected
// without the decoder allocating for its timeline.
func TestTooManyChunkEventsAllocateNothing(t *testing.T) {
	s := ptrace.NewSpan()
	s.SetStartTimestamp(1_000_000_000)
	s.SetEndTimestamp(2_000_000_000)
	for i := range 5000 {
		ev := s.Events().AppendEmpty()
		ev.SetName(itlconv.ChunkEventName)
		ev.SetTimestamp(pcommon.Timestamp(1_000_000_000 + i))
	}
	d := genaispan.New(genaispan.Config{MaxChunks: 1000})
	allocs := testing.AllocsPerRun(5, func() {
		if c := d.Read(s, true); c.Reason != genaispan.ReasonTooManyChunks {
			t.Fatalf("reason %q, want %q", c.Reason, genaispan.ReasonTooManyChunks)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations for a timeline too long to read", allocs)
	}
	if got := testing.AllocsPerRun(1, func() { genaispan.New(genaispan.Config{MaxChunks: 1000}).Read(s, true) }); got > 5 {
		t.Errorf("a fresh decoder allocated %v times for it: the timeline was collected", got)
	}
}
