// Package engine simulates an LLM inference server's scheduler, so that token cadence moves with the
// causes it moves with on real hardware: decode work per step, KV-cache reads growing with context,
// batch size under continuous batching, prefill of newly admitted requests interrupting decode
// (optionally spread out by chunked prefill), queueing behind a full batch, and multi-token steps
// (speculative decoding). One scheduler goroutine runs steps in real time; every request receives
// its tokens as the steps that produce them finish.
package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Config is the engine's cost model.
type Config struct {
	// MaxBatch is the most sequences decoding at once; further requests wait in the queue.
	MaxBatch int
	// StepBase is the fixed cost of one decode step; StepPerSeq is added per running sequence, and
	// StepPerKTok per thousand tokens of KV cache read across the batch (prompt plus output so far).
	StepBase, StepPerSeq, StepPerKTok time.Duration
	// PrefillPerTok is the cost of prefilling one prompt token.
	PrefillPerTok time.Duration
	// ChunkedPrefill, when above 0, spreads prefill over steps of at most this many prompt tokens,
	// so that a long prompt stalls running decodes less at a time. 0 prefills a prompt in one step.
	ChunkedPrefill int
	// SpecTokens, when above 1, makes each decode step emit 1..SpecTokens tokens per sequence, as
	// speculative decoding does when drafts are accepted.
	SpecTokens int
	// Seed makes the token counts and outputs reproducible.
	Seed uint64
}

// DefaultConfig is a mid-size model on one accelerator.
func DefaultConfig() Config {
	return Config{MaxBatch: 16, StepBase: 12 * time.Millisecond, StepPerSeq: 600 * time.Microsecond,
		StepPerKTok: 40 * time.Microsecond, PrefillPerTok: 60 * time.Microsecond, SpecTokens: 1, Seed: 1}
}

// validate says what is wrong with c, by the names of fakellm's and the load test's flags, which
// set these fields.
func (c Config) validate() error {
	switch {
	case c.MaxBatch < 1:
		return fmt.Errorf("-max-batch %d: at least 1 sequence must decode at once", c.MaxBatch)
	case c.StepBase <= 0:
		return fmt.Errorf("-step-base %v: a decode step must take some time, such as 12ms", c.StepBase)
	case c.StepPerSeq < 0:
		return fmt.Errorf("-step-per-seq %v: a cost must not be negative", c.StepPerSeq)
	case c.StepPerKTok < 0:
		return fmt.Errorf("-step-per-ktok %v: a cost must not be negative", c.StepPerKTok)
	case c.PrefillPerTok < 0:
		return fmt.Errorf("-prefill-per-tok %v: a cost must not be negative", c.PrefillPerTok)
	case c.ChunkedPrefill < 0:
		return fmt.Errorf("-chunked-prefill %d: give 0 (whole prompts) or a number of tokens", c.ChunkedPrefill)
	case c.SpecTokens < 1:
		return fmt.Errorf("-spec-tokens %d: give 1 (no speculative decoding) or more", c.SpecTokens)
	}
	return nil
}

// Step is what one engine step gave a request: Tokens tokens (at least 1), flushed at At. The step
// that completes a request's prefill gives its first token, as real servers do.
type Step struct {
	Tokens int
	At     time.Time
}

// Request is one generation in the engine.
type Request struct {
	ID uint64
	// Steps delivers the request's tokens; it is closed after the last one. The reason is in
	// FinishReason then.
	Steps        chan Step
	FinishReason string

	prompt, maxTokens int // the prompt's tokens, and the most the reply may have
	output, prefilled int // the tokens generated, and the prompt's tokens prefilled, so far
	ctx               context.Context
}

// Engine runs the scheduler.
type Engine struct {
	cfg Config
	rng *rand.Rand

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []*Request
	running []*Request
	nextID  uint64
	closed  bool
	log     map[uint64][]time.Time // when each chunk of the last arrivalsKept requests was delivered
	logged  []uint64               // the requests in log, in the order of their first chunk
	done    chan struct{}
}

// New starts an engine with cfg. Close stops it.
func New(cfg Config) (*Engine, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed)), log: map[uint64][]time.Time{}, done: make(chan struct{})}
	e.cond = sync.NewCond(&e.mu)
	go e.loop()
	return e, nil
}

// Close stops the scheduler; requests still running end with finish reason "cancelled".
func (e *Engine) Close() {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	e.closed = true
	e.cond.Broadcast()
	e.mu.Unlock()
	<-e.done
}

// Submit queues a generation of maxTokens tokens (at most) for a prompt of promptTokens tokens. A
// maxTokens below 1 lets the engine choose a reply length. The request ends early when ctx ends.
func (e *Engine) Submit(ctx context.Context, promptTokens, maxTokens int) (*Request, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errors.New("engine closed")
	}
	if maxTokens < 1 {
		maxTokens = 40 + e.rng.IntN(120)
	}
	e.nextID++
	r := &Request{ID: e.nextID, prompt: max(promptTokens, 1), maxTokens: maxTokens, Steps: make(chan Step, maxTokens+2), ctx: ctx}
	e.queue = append(e.queue, r)
	e.cond.Broadcast()
	return r, nil
}

// arrivalsKept is how many of the latest requests Arrivals answers for: a server that runs for
// hours does not keep every arrival.
const arrivalsKept = 4096

// ErrNoArrivals is what Arrivals returns, wrapped with the reason, for a request it has no record
// of: one never submitted, one that ended before its first chunk, or one older than the latest
// 4096 requests to deliver a chunk.
var ErrNoArrivals = errors.New("no arrivals recorded")

// Arrivals returns when each chunk of request id was delivered: the engine's own record, which
// tests compare with what the client instrumentation saw. It is kept for the latest 4096 requests
// to deliver a chunk; Lookup says why a request has none.
func (e *Engine) Arrivals(id uint64) []time.Time {
	a, _ := e.Lookup(id)
	return a
}

// Lookup is Arrivals with an error wrapping ErrNoArrivals for a request the engine has no record
// of. A request still waiting for its first chunk has none yet, and no error.
func (e *Engine) Lookup(id uint64) ([]time.Time, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if log, ok := e.log[id]; ok {
		return append([]time.Time(nil), log...), nil
	}
	if id == 0 || id > e.nextID {
		had := fmt.Sprintf("%d requests, numbered from 1", e.nextID)
		switch e.nextID {
		case 0:
			had = "no request yet"
		case 1:
			had = "1 request, numbered 1"
		}
		return nil, fmt.Errorf("request %d: %w: this server has had %s", id, ErrNoArrivals, had)
	}
	for _, r := range append(e.queue[:len(e.queue):len(e.queue)], e.running...) {
		if r.ID == id {
			return nil, nil
		}
	}
	return nil, fmt.Errorf("request %d: %w: it ended before its first chunk, or is older than the latest %d requests, whose arrivals are kept", id, ErrNoArrivals, arrivalsKept)
}

func (e *Engine) loop() {
	defer close(e.done)
	for {
		e.mu.Lock()
		for !e.closed && len(e.queue) == 0 && len(e.running) == 0 {
			e.cond.Wait()
		}
		if e.closed {
			for _, r := range append(e.running, e.queue...) {
				r.FinishReason = "cancelled"
				close(r.Steps)
			}
			e.running, e.queue = nil, nil
			e.mu.Unlock()
			return
		}
		// A request whose client left while it waited is dropped before it costs a prefill.
		waiting := e.queue[:0]
		for _, r := range e.queue {
			if r.ctx.Err() != nil {
				r.FinishReason = "cancelled"
				close(r.Steps)
				continue
			}
			waiting = append(waiting, r)
		}
		e.queue = waiting
		if len(e.queue) == 0 && len(e.running) == 0 {
			e.mu.Unlock()
			continue
		}
		// Continuous batching: admit waiting requests into free slots at every step.
		for len(e.running) < e.cfg.MaxBatch && len(e.queue) > 0 {
			r := e.queue[0]
			e.queue = e.queue[1:]
			e.running = append(e.running, r)
		}
		d, prefilling := e.stepCost()
		e.mu.Unlock()

		time.Sleep(d)

		e.mu.Lock()
		at := time.Now()
		kept := e.running[:0]
		for _, r := range e.running {
			if r.ctx.Err() != nil {
				r.FinishReason = "cancelled"
				close(r.Steps)
				continue
			}
			if r.prefilled < r.prompt {
				if n, ok := prefilling[r]; ok {
					r.prefilled += n
				}
				if r.prefilled < r.prompt {
					kept = append(kept, r)
					continue
				}
				// The step that completes the prefill yields the first token, as real servers do.
			}
			k := 1
			if e.cfg.SpecTokens > 1 {
				k = 1 + e.rng.IntN(e.cfg.SpecTokens)
			}
			k = min(k, r.maxTokens-r.output)
			r.output += k
			r.Steps <- Step{Tokens: k, At: at}
			if _, ok := e.log[r.ID]; !ok {
				e.logged = append(e.logged, r.ID)
				if len(e.logged) > arrivalsKept {
					delete(e.log, e.logged[0])
					e.logged = e.logged[1:]
				}
			}
			e.log[r.ID] = append(e.log[r.ID], at)
			if r.output >= r.maxTokens {
				r.FinishReason = "length"
				if r.maxTokens < 40 || e.rng.IntN(4) > 0 {
					r.FinishReason = "stop"
				}
				close(r.Steps)
				continue
			}
			kept = append(kept, r)
		}
		e.running = kept
		e.mu.Unlock()
	}
}

// stepCost returns the duration of the next step and the prompt tokens it prefills per request.
// Called with e.mu held.
func (e *Engine) stepCost() (time.Duration, map[*Request]int) {
	c := e.cfg
	d := c.StepBase
	var kv, decoding int
	prefilling := map[*Request]int{}
	budget := c.ChunkedPrefill
	for _, r := range e.running {
		if r.prefilled < r.prompt {
			n := r.prompt - r.prefilled
			if c.ChunkedPrefill > 0 {
				if budget <= 0 {
					continue
				}
				n = min(n, budget)
				budget -= n
			}
			prefilling[r] = n
			d += time.Duration(n) * c.PrefillPerTok
			continue
		}
		decoding++
		kv += r.prompt + r.output
	}
	d += time.Duration(decoding)*c.StepPerSeq + time.Duration(kv)*c.StepPerKTok/1000
	return d, prefilling
}
