// Package cycles is a cheap clock for hot paths: the CPU's time-stamp counter, calibrated against
// Go's monotonic clock at both ends of the interval it measures.
//
// Reading Go's monotonic clock is a vDSO clock_gettime call: about 25 ns on a virtual machine, more
// than everything else otelitl's Chunk does. Where the kernel keeps that clock with the time-stamp
// counter (TSC), the counter itself reads in about 10 ns. A counter value means nothing alone:
// [Convert] turns counter values into offsets by interpolating between two [Pair]s, each one
// counter read and one monotonic read, taken at the start and at the end of the interval. Every
// converted offset then lies on the monotonic clock's scale, exact at both ends, and the counter's
// frequency needs no separate measurement. It is the arithmetic of the vDSO itself, with a rate
// fitted per interval instead of one the kernel maintains.
//
// The counter is used only where the kernel itself uses it as its clock source (Linux, with
// current_clocksource "tsc"): the kernel has then checked that it runs at a constant rate and is
// synchronised across CPUs. Elsewhere [Usable] reports false and callers read the monotonic clock.
// The kernel's choice is read again every [recheck]; and [Check] turns the counter off for the
// process when an interval's rate disagrees with the long-run rate.
package cycles

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// clockSourceFile is where Linux names the clock source behind CLOCK_MONOTONIC.
const clockSourceFile = "/sys/devices/system/clocksource/clocksource0/current_clocksource"

// recheck is how often Usable reads the kernel's clock source again: the kernel's watchdog may
// declare the TSC unstable while the process runs and switch to another source.
const recheck = 10 * time.Second

// epoch anchors the monotonic readings of this package.
var epoch = time.Now()

var (
	usable    atomic.Bool
	disabled  atomic.Bool
	nextCheck atomic.Int64 // monotonic ns since epoch of the next clock-source read
	checkMu   sync.Mutex
	reference Pair // the first pair read once usable: the long-run rate is measured from it
	haveRef   atomic.Bool
)

// Usable reports whether [Now] is a valid clock on this machine now.
func Usable() bool {
	if !supported || disabled.Load() {
		return false
	}
	now := int64(time.Since(epoch))
	if now < nextCheck.Load() {
		return usable.Load()
	}
	checkMu.Lock()
	defer checkMu.Unlock()
	if now >= nextCheck.Load() {
		ok := kernelUsesTSC()
		usable.Store(ok)
		if ok && !haveRef.Load() {
			reference = Read(epoch)
			haveRef.Store(true)
		}
		nextCheck.Store(now + int64(recheck))
	}
	return usable.Load()
}

func kernelUsesTSC() bool {
	if runtime.GOOS != "linux" {
		return false
	}
	b, err := os.ReadFile(clockSourceFile)
	return err == nil && string(bytes.TrimSpace(b)) == "tsc"
}

// Pair is one counter value and the monotonic offset read with it.
type Pair struct {
	Mono  int64 // nanoseconds since the start time given to Read
	Ticks int64 // counter value
}

// Read reads a Pair: the monotonic offset from start, and the counter at the same moment. It reads
// the counter on both sides of the monotonic clock and keeps the tightest of three tries, so a
// preemption between the two reads does not skew the pair.
func Read(start time.Time) Pair {
	var best Pair
	width := int64(math.MaxInt64)
	for range 3 {
		a := Now()
		m := int64(time.Since(start))
		b := Now()
		if w := b - a; w >= 0 && w < width {
			width = w
			best = Pair{Mono: m, Ticks: a + w/2}
		}
	}
	if width == math.MaxInt64 { // the counter ran backwards three times: Check will say so
		best = Pair{Mono: int64(time.Since(start)), Ticks: Now()}
	}
	return best
}

// Convert turns the counter values in v into monotonic offsets in place, interpolating linearly
// between from and to (read before the first and after the last value), and clamping each into
// [from.Mono, to.Mono] so that no offset leaves the interval the two pairs measured. When the
// counter did not advance over the interval, every value becomes to.Mono.
func Convert(v []int64, from, to Pair) {
	dt := float64(to.Ticks - from.Ticks)
	dm := to.Mono - from.Mono
	if dt <= 0 || dm <= 0 {
		for i := range v {
			v[i] = max(to.Mono, from.Mono)
		}
		return
	}
	scale := float64(dm) / dt
	for i, t := range v {
		off := from.Mono + int64(math.Round(float64(t-from.Ticks)*scale))
		v[i] = min(max(off, from.Mono), to.Mono)
	}
}

// minCheck is the shortest interval Check judges: a pair read across a preemption can be off by a
// few milliseconds, which is under 1% of a second.
const minCheck = time.Second

// minBackwards is the shortest interval over which a counter that did not advance is an error:
// over shorter ones, CPUs' counters may differ by the few nanoseconds the kernel tolerates.
const minBackwards = time.Millisecond

// maxDisagreement is how far an interval's rate may stray from the long-run rate. The kernel slews
// the monotonic clock by at most 500 ppm, and pairs add under 0.5% on intervals of minCheck.
const maxDisagreement = 0.02

// Check compares the counter's rate over [from, to] with its long-run rate in this process. When
// they disagree by more than 2%, or the counter ran backwards, it turns the counter off for the rest
// of the process and returns an error that says so. Intervals shorter than a second are only checked
// for a counter running backwards.
func Check(from, to Pair) error {
	var ref0, ref1 Pair // empty: only a counter running backwards is judged
	if to.Mono-from.Mono >= int64(minCheck) && haveRef.Load() {
		ref0, ref1 = reference, Read(epoch)
	}
	why := check(from, to, ref0, ref1)
	if why == "" || disabled.Swap(true) {
		return nil // nothing wrong, or said once already
	}
	return fmt.Errorf("%s; the counter is off for the rest of the process", why)
}

// check is Check against the long-run interval [ref0, ref1] (an empty one checks only for a counter
// running backwards); it returns what is wrong, or "".
func check(from, to, ref0, ref1 Pair) string {
	dt, dm := to.Ticks-from.Ticks, to.Mono-from.Mono
	if dm >= int64(minBackwards) && dt <= 0 {
		return fmt.Sprintf("the CPU time-stamp counter did not advance over %v of monotonic time", time.Duration(dm))
	}
	refTicks, refMono := ref1.Ticks-ref0.Ticks, ref1.Mono-ref0.Mono
	if dm < int64(minCheck) || refMono < int64(minCheck) || refTicks <= 0 {
		return ""
	}
	rate := float64(dt) / float64(dm)
	long := float64(refTicks) / float64(refMono)
	if d := math.Abs(rate/long - 1); d > maxDisagreement {
		return fmt.Sprintf("the CPU time-stamp counter ran at %.4g ticks/ns over %v, %.1f%% off its long-run %.4g ticks/ns", rate, time.Duration(dm), 100*d, long)
	}
	return ""
}
