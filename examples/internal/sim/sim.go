// Package sim simulates the cadence of streamed LLM replies for the examples: queueing and prefill
// before the first chunk, jittered decode gaps, occasional stalls (a batch preempted, a prefill of
// another request interrupting decode), and multi-token chunks (speculative decoding). It drives a
// real otelitl.Generation with real sleeps, so that every timestamp is genuine.
package sim

import (
	"context"
	"math"
	"math/rand/v2"
	"time"

	"github.com/otelitl/itl/otelitl"
)

// Profile is the cadence of one model behind one provider.
type Profile struct {
	Provider, Model, Server string
	Port                    int

	QueueMedian   time.Duration // median queueing delay before prefill (log-normal)
	PrefillPerTok time.Duration // prefill cost per prompt token
	GapMean       time.Duration // mean decode gap between chunks
	GapJitter     time.Duration // uniform jitter around the mean
	StallProb     float64       // chance that a gap is a stall
	StallMin      time.Duration // a stall lasts StallMin..2*StallMin
	MaxTokens     int           // chunks carry 1..MaxTokens tokens (1 = no speculative decoding)
	MinChunks     int
	MaxChunks     int
}

// Profiles are three realistic, distinct cadences, so that the per-model breakdown shows.
var Profiles = []Profile{
	{Provider: "openai", Model: "gpt-4o", Server: "api.openai.com", Port: 443,
		QueueMedian: 120 * time.Millisecond, PrefillPerTok: 80 * time.Microsecond,
		GapMean: 22 * time.Millisecond, GapJitter: 8 * time.Millisecond,
		StallProb: 0.008, StallMin: 300 * time.Millisecond, MaxTokens: 1, MinChunks: 30, MaxChunks: 110},
	{Provider: "anthropic", Model: "claude-sonnet-4-5", Server: "api.anthropic.com", Port: 443,
		QueueMedian: 250 * time.Millisecond, PrefillPerTok: 60 * time.Microsecond,
		GapMean: 30 * time.Millisecond, GapJitter: 10 * time.Millisecond,
		StallProb: 0.004, StallMin: 400 * time.Millisecond, MaxTokens: 3, MinChunks: 25, MaxChunks: 90},
	{Provider: "vllm", Model: "llama-3.1-70b", Server: "vllm.internal", Port: 8000,
		QueueMedian: 60 * time.Millisecond, PrefillPerTok: 150 * time.Microsecond,
		GapMean: 38 * time.Millisecond, GapJitter: 14 * time.Millisecond,
		StallProb: 0.02, StallMin: 260 * time.Millisecond, MaxTokens: 4, MinChunks: 20, MaxChunks: 80},
}

// Result is what one simulated generation did.
type Result struct {
	Chunks, Tokens int
	Stalls         int
}

// Run streams one simulated generation of p through in, sleeping for real. The context ends it
// early (recorded as a cancellation).
func Run(ctx context.Context, in *otelitl.Instrumentation, p Profile, rng *rand.Rand) Result {
	_, g := in.Start(ctx, otelitl.Request{Operation: "chat", Provider: p.Provider, Model: p.Model, ServerAddress: p.Server, ServerPort: p.Port})
	prompt := 200 + rng.IntN(2000)
	queue := time.Duration(float64(p.QueueMedian) * math.Exp(rng.NormFloat64()*0.5))
	var res Result
	if !sleep(ctx, queue+time.Duration(prompt)*p.PrefillPerTok) {
		g.End(ctx.Err())
		return res
	}
	n := p.MinChunks + rng.IntN(p.MaxChunks-p.MinChunks+1)
	for i := range n {
		if i > 0 {
			gap := p.GapMean + time.Duration((rng.Float64()*2-1)*float64(p.GapJitter))
			if rng.Float64() < p.StallProb {
				gap = p.StallMin + time.Duration(rng.Int64N(int64(p.StallMin)))
				res.Stalls++
			}
			if !sleep(ctx, gap) {
				g.End(ctx.Err())
				return res
			}
		}
		tok := 1
		if p.MaxTokens > 1 {
			tok = 1 + rng.IntN(p.MaxTokens)
		}
		g.Chunk(tok)
		res.Chunks++
		res.Tokens += tok
	}
	g.SetUsage(prompt, res.Tokens)
	g.SetResponseModel(p.Model)
	g.AddFinishReason("stop")
	g.End(nil)
	return res
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
