package genaispan_test

import (
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
