package genaispan

import (
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/itlconv"
)

// TestTimestampsPast2262: OTLP's timestamps are unsigned, and past 2^63 ns (the year 2262) an
// int64 turns negative. A span across that instant lasts what its timestamps say, and one that
// ends before it starts is refused, whichever side of it each timestamp lies; so are arrivals
// outside the span, read by either reader, and a first-token event. Compared as int64, the first
// span was refused as ending before it starts and the second kept with a duration of -2 s.
func TestTimestampsPast2262(t *testing.T) {
	const half = uint64(1) << 63
	for _, c := range []struct {
		name       string
		start, end uint64
		arrivals   []uint64 // otelitl.chunk events
		other      bool     // an event of another name first, so that the general reader reads the span
		firstToken uint64   // an OpenInference first-token event, 0 for none
		reason     Reason
		duration   float64 // seconds, when valid
		ttft       float64
		malformed  Reason // a value rejected on a span that stays valid, with no TTFT
	}{
		{name: "across", start: half - 1e9, end: half + 1e9, arrivals: []uint64{half - 5e8, half + 5e8}, duration: 2, ttft: 0.5},
		{name: "across/general", start: half - 1e9, end: half + 1e9, arrivals: []uint64{half - 5e8, half + 5e8}, other: true, duration: 2, ttft: 0.5},
		{name: "ends before it starts", start: half + 1e9, end: half - 1e9, arrivals: []uint64{half}, reason: ReasonNegativeDuration},
		{name: "past the end", start: half - 1e9, end: half + 1e9, arrivals: []uint64{half - 5e8, half + 2e9}, reason: ReasonAfterEnd},
		{name: "past the end/general", start: half - 1e9, end: half + 1e9, arrivals: []uint64{half - 5e8, half + 2e9}, other: true, reason: ReasonAfterEnd},
		{name: "before the start", start: half + 1e9, end: half + 3e9, arrivals: []uint64{half - 5e8, half + 2e9}, other: true, reason: ReasonBeforeStart},
		{name: "too long", start: half - 1e9, end: half + uint64(itlconv.MaxDuration), arrivals: []uint64{half}, reason: ReasonTooLong},
		{name: "first-token event", start: half - 1e9, end: half + 1e9, firstToken: half + 5e8, duration: 2, ttft: 1.5},
		{name: "first-token event past the end", start: half - 2e9, end: half - 1e9, firstToken: half + 5e8, duration: 1, malformed: ReasonTTFTTooLong},
		{name: "longer than 2^63 ns", start: 1, end: half + 5, arrivals: []uint64{2}, reason: ReasonTooLong},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := ptrace.NewSpan()
			s.SetStartTimestamp(pcommon.Timestamp(c.start))
			s.SetEndTimestamp(pcommon.Timestamp(c.end))
			s.Attributes().PutStr("gen_ai.operation.name", "chat")
			if c.other {
				s.Events().AppendEmpty().SetName("other")
			}
			if c.firstToken != 0 {
				ev := s.Events().AppendEmpty()
				ev.SetName(itlconv.OpenInferenceFirstTokenEvent)
				ev.SetTimestamp(pcommon.Timestamp(c.firstToken))
			}
			for _, a := range c.arrivals {
				ev := s.Events().AppendEmpty()
				ev.SetName(itlconv.ChunkEventName)
				ev.SetTimestamp(pcommon.Timestamp(a))
			}
			call := New(Config{}).Read(s, true)
			if c.reason != ReasonNone {
				if call.Valid || call.Reason != c.reason || call.HasDuration && c.reason == ReasonNegativeDuration {
					t.Fatalf("valid %v, reason %q, duration %v (%v); want reason %q", call.Valid, call.Reason, call.Duration, call.HasDuration, c.reason)
				}
				return
			}
			if c.malformed != ReasonNone {
				if !call.Valid || call.Figures.HasTTFT || !slices.Contains(call.Malformed(), c.malformed) || call.Duration != c.duration {
					t.Fatalf("valid %v, TTFT %v (%v), malformed %v, duration %v; want %q rejected and duration %v",
						call.Valid, call.Figures.TTFT, call.Figures.HasTTFT, call.Malformed(), call.Duration, c.malformed, c.duration)
				}
				return
			}
			if !call.Valid || !call.HasDuration || call.Duration != c.duration || !call.Figures.HasTTFT || call.Figures.TTFT != c.ttft {
				t.Fatalf("valid %v (%q), duration %v (%v), TTFT %v (%v); want duration %v, TTFT %v",
					call.Valid, call.Reason, call.Duration, call.HasDuration, call.Figures.TTFT, call.Figures.HasTTFT, c.duration, c.ttft)
			}
		})
	}
}
