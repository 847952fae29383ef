package wraptest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that notes the failures CheckLateness reports instead of failing.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	panic(r)
}

// TestCheckLateness runs CheckLateness on streams of 12 chunks 8 ms apart, seen with the lateness
// of each case (in ms, chunk by chunk), and checks which pass.
func TestCheckLateness(t *testing.T) {
	ms := func(by ...float64) []float64 { return by }
	busy := Busy()
	start := busy
	start.Start = 50 * time.Millisecond
	for _, c := range []struct {
		name string
		l    Lateness
		by   []float64 // ms late, per chunk; missing chunks are on time (1 ms late)
		fail string    // a word of the failure, or "" for none
	}{
		{"on time", busy, nil, ""},
		{"at the slack", busy, ms(6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6), ""},
		{"a clock read just before the write", busy, ms(-0.9), ""},
		{"before the server sent it", busy, ms(0, -2), "before"},
		{"one stall", busy, ms(1, 1, 1, 20, 12, 4), ""},
		{"one stall at the start", busy, ms(20, 12), ""},
		{"one stall at the end", busy, ms(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 24), ""},
		{"two stalls", busy, ms(1, 10, 1, 1, 1, 1, 1, 10), "2 runs"},
		{"a stall too long", busy, ms(1, 1, 30, 22, 14), "beyond any scheduling stall"},
		{"a stall in two steps", busy, ms(1, 6.5, 18, 10, 2), ""},
		{"drifting behind, within a stall", busy, ms(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23), ""},
		{"drifting beyond the stall", busy, ms(2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 32, 35), "beyond"},
		{"a late start without the allowance", busy, ms(45, 37, 29, 21, 13, 5, 1, 1, 10), "2 runs"},
		{"a late start", start, ms(45, 37, 29, 21, 13, 5, 1, 1, 10), ""},
		{"a late start and a stall", start, ms(45, 37, 29, 21, 13, 5, 1, 1, 20, 12), ""},
		{"a late start and two stalls", start, ms(45, 37, 5, 1, 10, 1, 10), "2 runs"},
		{"a start too late", start, ms(60, 52, 44, 36, 28, 20, 12, 4), "a start later"},
		{"no late start: a stall at the start counts as the start", start, ms(20, 12, 4, 1, 15), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := time.Unix(1_800_000_000, 0)
			var sent, got []time.Time
			for i := range 12 {
				s := base.Add(time.Duration(i) * 8 * time.Millisecond)
				by := 1.0
				if i < len(c.by) {
					by = c.by[i]
				}
				sent, got = append(sent, s), append(got, s.Add(time.Duration(by*float64(time.Millisecond))))
			}
			r := &recorder{TB: t}
			CheckLateness(r, got, sent, c.l)
			failed := strings.Join(r.failures, "\n")
			switch {
			case c.fail == "" && failed != "":
				t.Errorf("failed: %s", failed)
			case c.fail != "" && !strings.Contains(failed, c.fail):
				t.Errorf("failures %q, want one saying %q", failed, c.fail)
			}
		})
	}
}

// TestCheckLatenessCounts fails a stream whose chunks the client did not all see.
func TestCheckLatenessCounts(t *testing.T) {
	r := &recorder{TB: t}
	func() {
		defer func() { _ = recover() }()
		CheckLateness(r, make([]time.Time, 3), make([]time.Time, 4), Busy())
	}()
	if len(r.failures) != 1 || !strings.Contains(r.failures[0], "3 chunks seen, the server sent 4") {
		t.Errorf("failures %q", r.failures)
	}
}
