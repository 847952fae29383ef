package httpitl

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time of the calling thread (RUSAGE_THREAD), which benchmarks read
// around a loop locked to its thread: on a shared machine it counts the work, not the waits.
func threadCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
