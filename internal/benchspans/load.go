package benchspans

import (
	"context"
	"time"

	"github.com/otelitl/itl/otelitl"
)

// The load test's cadence, which the load test (e2e), the pipeline benchmark (bench/pipeline) and
// the floor's tests (bench/floorcol) all write, so that the figures each of them reports are of
// one load.
const (
	// LoadStall is the gap written wherever (i+k) % LoadStallEvery == 0.
	LoadStall = 400 * time.Millisecond
	// LoadStallEvery spaces the stalls: about one gap in 97.
	LoadStallEvery = 97
)

// LoadGeneration writes generation i of the load test with in, as the client would have seen it
// from start on: chunks chunks of one token each, the first 200 + i%300 ms after the start, then
// gaps of 10 to 34 ms (10 + (i+7k) % 25 ms before chunk k), LoadStall wherever (i+k) %
// LoadStallEvery == 0, and the end 1 ms after the last chunk. It returns how many gaps and stalls
// it wrote, which is what a collector must count.
func LoadGeneration(ctx context.Context, in *otelitl.Instrumentation, req otelitl.Request, i int64, start time.Time, chunks int) (gaps, stalls int64) {
	req.StartTime = start
	_, g := in.Start(ctx, req)
	off := time.Duration(200+i%300) * time.Millisecond
	for k := range int64(chunks) {
		if k > 0 {
			gap := time.Duration(10+(i+k*7)%25) * time.Millisecond
			if (i+k)%LoadStallEvery == 0 {
				gap = LoadStall
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
