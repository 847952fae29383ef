package cycles

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestConvert(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to Pair
		v, want  []int64
	}{
		{
			// 3 ticks per nanosecond, the interval starting 1000 ns after the generation's start.
			name: "interpolates",
			from: Pair{Mono: 1000, Ticks: 90_000}, to: Pair{Mono: 1000 + 1_000_000, Ticks: 90_000 + 3_000_000},
			v:    []int64{90_000, 90_000 + 3, 90_000 + 1_500_000, 90_000 + 2_999_999, 90_000 + 3_000_000},
			want: []int64{1000, 1001, 1000 + 500_000, 1000 + 1_000_000, 1000 + 1_000_000},
		},
		{
			// Values read a few ticks outside the pairs (another CPU's counter, or an unordered read).
			name: "clamps to the interval",
			from: Pair{Mono: 500, Ticks: 1000}, to: Pair{Mono: 1500, Ticks: 2000},
			v: []int64{990, 2010}, want: []int64{500, 1500},
		},
		{
			name: "counter stood still: every value at the end",
			from: Pair{Mono: 10, Ticks: 7}, to: Pair{Mono: 900, Ticks: 7},
			v: []int64{7, 7}, want: []int64{900, 900},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			Convert(tc.v, tc.from, tc.to)
			if !slices.Equal(tc.v, tc.want) {
				t.Errorf("Convert = %v ns, want %v", tc.v, tc.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	s := int64(time.Second)
	ref0 := Pair{Mono: 0, Ticks: 0}
	ref1 := Pair{Mono: 100 * s, Ticks: 300 * s} // 3 ticks/ns over 100 s
	for _, tc := range []struct {
		name     string
		from, to Pair
		want     string // substring of the reason; "" for none
	}{
		{"same rate", Pair{Mono: 5 * s, Ticks: 15 * s}, Pair{Mono: 7 * s, Ticks: 21 * s}, ""},
		{"1% off is slewing and pair jitter", Pair{Mono: 5 * s, Ticks: 15 * s}, Pair{Mono: 7 * s, Ticks: 15*s + 6*s*101/100}, ""},
		{"5% off", Pair{Mono: 5 * s, Ticks: 15 * s}, Pair{Mono: 7 * s, Ticks: 15*s + 6*s*105/100}, "5.0% off"},
		{"5% off over a short interval is not judged", Pair{Mono: 5 * s, Ticks: 15 * s}, Pair{Mono: 5*s + s/2, Ticks: 15*s + 3*s/2*105/100}, ""},
		{"backwards", Pair{Mono: 5 * s, Ticks: 15 * s}, Pair{Mono: 5*s + 2e6, Ticks: 15*s - 10}, "did not advance"},
		{"backwards by skew over nanoseconds", Pair{Mono: 5 * s, Ticks: 15 * s}, Pair{Mono: 5*s + 40, Ticks: 15*s - 10}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := check(tc.from, tc.to, ref0, ref1)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("check = %q, want %q", got, tc.want)
			}
		})
	}
	if got := check(Pair{Mono: 0, Ticks: 0}, Pair{Mono: 2 * s, Ticks: 9 * s}, Pair{}, Pair{}); got != "" {
		t.Errorf("without a long-run interval, check judged the rate: %q", got)
	}
}

// TestAgainstTheMonotonicClock times real intervals with both clocks: converted counter values must
// land where the monotonic clock put the same moments.
func TestAgainstTheMonotonicClock(t *testing.T) {
	if !Usable() {
		t.Skipf("the kernel does not use the TSC as its clock source here (%s); nothing to compare", clockSourceFile)
	}
	start := time.Now()
	from := Read(start)
	const n = 20
	ticks := make([]int64, n)
	before := make([]int64, n)
	after := make([]int64, n)
	for i := range n {
		time.Sleep(time.Duration(1+i%3) * time.Millisecond)
		before[i] = int64(time.Since(start))
		ticks[i] = Now()
		after[i] = int64(time.Since(start))
	}
	time.Sleep(time.Millisecond)
	to := Read(start)
	Convert(ticks, from, to)
	// The converted value lies between the monotonic reads around it, give or take the pair reads'
	// width and the kernel's slewing over the interval (parts per million of ~50 ms): 5 µs is ample.
	const slack = 5000
	for i := range n {
		if ticks[i] < before[i]-slack || ticks[i] > after[i]+slack {
			t.Errorf("chunk %d: converted %d ns, monotonic clock read %d..%d ns around it", i, ticks[i], before[i], after[i])
		}
	}
	if err := Check(from, to); err != nil {
		t.Errorf("Check on a working counter: %v", err)
	}
}

func TestReadIsTight(t *testing.T) {
	if !Usable() {
		t.Skip("no usable counter here")
	}
	start := time.Now()
	p := Read(start)
	if p.Mono < 0 || p.Mono > int64(time.Since(start)) {
		t.Errorf("pair's monotonic offset %d is outside [0, now]", p.Mono)
	}
	if p.Ticks <= 0 {
		t.Errorf("pair's counter value %d, want a positive count since boot", p.Ticks)
	}
}

var sink int64

// BenchmarkClock is one clock read, side by side: Go's monotonic clock as Chunk read it before
// (time.Since), the bare counter Chunk reads now, and a Pair as Start and End read it. Compare with
// benchstat -col /clock.
func BenchmarkClock(b *testing.B) {
	start := time.Now()
	b.Run("clock=time.Since", func(b *testing.B) {
		for b.Loop() {
			sink += int64(time.Since(start))
		}
	})
	b.Run("clock=cycles.Now", func(b *testing.B) {
		if !supported {
			b.Skip("no counter on this architecture")
		}
		for b.Loop() {
			sink += Now()
		}
	})
	b.Run("clock=cycles.Read", func(b *testing.B) {
		for b.Loop() {
			sink += Read(start).Ticks
		}
	})
}
