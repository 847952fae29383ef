package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/otelitl/itl/examples/fakellm/engine"
	"github.com/otelitl/itl/otelitl"
)

// model is one simulated model: what its generation spans say about it, the network between the
// application and it, and the cost model of the inference server (fakellm's engine) that serves it.
type model struct {
	provider, name, server string
	port                   int
	// network is the round trip before the request reaches the server: it adds to every TTFT.
	network time.Duration
	// minTokens and maxTokens bound the reply lengths asked for.
	minTokens, maxTokens int
	cost                 engine.Config
}

// models are three servers with distinct cadences, so that the per-model breakdown shows:
//   - a fast one: a large batch, short steps and chunked prefill, so that a long prompt never
//     stalls the replies decoding beside it;
//   - one with speculative decoding: slower steps that carry 1 to 4 tokens each, so that the time
//     per output token (TPOT) is well below the gap between chunks;
//   - a small deployment: a batch of 8, so that requests queue for a slot (TTFT), and whole
//     prefills, so that a long prompt admitted into the batch stalls every reply in it.
var models = []model{
	{provider: "openai", name: "gpt-4o", server: "api.openai.com", port: 443, network: 60 * time.Millisecond,
		minTokens: 40, maxTokens: 160,
		cost: engine.Config{MaxBatch: 64, StepBase: 14 * time.Millisecond, StepPerSeq: 200 * time.Microsecond,
			StepPerKTok: 10 * time.Microsecond, PrefillPerTok: 10 * time.Microsecond, ChunkedPrefill: 512, SpecTokens: 1}},
	{provider: "anthropic", name: "claude-sonnet-4-5", server: "api.anthropic.com", port: 443, network: 80 * time.Millisecond,
		minTokens: 60, maxTokens: 220,
		cost: engine.Config{MaxBatch: 32, StepBase: 28 * time.Millisecond, StepPerSeq: 300 * time.Microsecond,
			StepPerKTok: 10 * time.Microsecond, PrefillPerTok: 12 * time.Microsecond, ChunkedPrefill: 2048, SpecTokens: 4}},
	{provider: "vllm", name: "llama-3.1-70b", server: "vllm.internal", port: 8000, network: time.Millisecond,
		minTokens: 20, maxTokens: 60,
		cost: engine.Config{MaxBatch: 8, StepBase: 16 * time.Millisecond, StepPerSeq: time.Millisecond,
			StepPerKTok: 20 * time.Microsecond, PrefillPerTok: 30 * time.Microsecond, SpecTokens: 1}},
}

var errServerClosed = errors.New("the server closed the stream")

// prompt draws a prompt length: mostly a few hundred to two thousand tokens, and one request in
// twelve carries a long document, whose prefill is what stalls a batch that prefills whole prompts.
func prompt(rng *rand.Rand) int {
	if rng.IntN(12) == 0 {
		return 6000 + rng.IntN(6000)
	}
	return 200 + rng.IntN(1800)
}

// generate runs one generation of m on eng through in: the span starts as the application sends the
// request, and every chunk is recorded as the engine's step that produced it arrives, in real time.
// It returns the chunks received.
func generate(ctx context.Context, in *otelitl.Instrumentation, m model, eng *engine.Engine, rng *rand.Rand) int {
	_, g := in.Start(ctx, otelitl.Request{Provider: m.provider, Model: m.name, ServerAddress: m.server, ServerPort: m.port})
	promptTokens, maxTokens := prompt(rng), m.minTokens+rng.IntN(m.maxTokens-m.minTokens+1)
	select {
	case <-ctx.Done():
		g.End(ctx.Err())
		return 0
	case <-time.After(m.network):
	}
	r, err := eng.Submit(ctx, promptTokens, maxTokens)
	if err != nil {
		g.End(err)
		return 0
	}
	chunks, tokens := 0, 0
	for st := range r.Steps {
		g.Chunk(st.Tokens)
		chunks++
		tokens += st.Tokens
	}
	if r.FinishReason == "cancelled" {
		err := context.Cause(ctx)
		if err == nil {
			err = errServerClosed
		}
		g.End(err)
		return chunks
	}
	g.SetUsage(promptTokens, tokens)
	g.SetResponseModel(m.name)
	g.AddFinishReason(r.FinishReason)
	g.End(nil)
	return chunks
}
