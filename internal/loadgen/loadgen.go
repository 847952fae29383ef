// Package loadgen writes the load test's generations with otelitl: the cadence the load test (e2e),
// the pipeline benchmark (bench/pipeline) and the floor's tests and benchmarks (bench/floorcol)
// share, so that the figures each of them reports are of one load. It is a package of its own,
// apart from benchspans, because it needs otelitl, which the collector's module must not.
package loadgen

import (
	"context"
	"time"

	"github.com/otelitl/itl/otelitl"
)

const (
	// Stall is the gap written wherever (i+k) % StallEvery == 0.
	Stall = 400 * time.Millisecond
	// StallEvery spaces the stalls: about one gap in 97.
	StallEvery = 97
)

// Generation writes generation i of the load test with in, as the client would have seen it
// from start on: chunks chunks of one token each, the first 200 + i%300 ms after the start, then
// gaps of 10 to 34 ms (10 + (i+7k) % 25 ms before chunk k), Stall wherever (i+k) %
// StallEvery == 0, and the end 1 ms after the last chunk. It returns how many gaps and stalls
// it wrote, which is what a collector must count.
func Generation(ctx context.Context, in *otelitl.Instrumentation, req otelitl.Request, i int64, start time.Time, chunks int) (gaps, stalls int64) {
	req.StartTime = start
	_, g := in.Start(ctx, req)
	off := time.Duration(200+i%300) * time.Millisecond
	for k := range int64(chunks) {
		if k > 0 {
			gap := time.Duration(10+(i+k*7)%25) * time.Millisecond
			if (i+k)%StallEvery == 0 {
				gap = Stall
				stalls++
			}
			off += gap
			gaps++
		}
		g.ChunkAt(start.Add(off), 1)
	}
	g.EndAt(start.Add(off+time.Millisecond), nil)
	return gaps, stalls
}
