package cycles

// Now returns the CPU's time-stamp counter (RDTSC), unordered: the read may move by a few
// instructions either way, which is nanoseconds, far below the microseconds a timeline keeps.
func Now() int64

const supported = true
