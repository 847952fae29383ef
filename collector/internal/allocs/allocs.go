// Package allocs counts the heap allocations of one call, for the tests that check what a pool
// gives back.
package allocs

import "runtime"

// Of counts the heap allocations of one call of f, as testing.AllocsPerRun does but without its
// warm-up call, which would grow again the buffers the call is meant to find trimmed.
func Of(f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}
