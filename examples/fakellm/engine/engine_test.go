package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// scenario is one engine under one closed-loop load: clients clients, each submitting a new
// request of a prompt-token prompt as soon as its last one finished.
type scenario struct {
	cfg             Config
	clients, prompt int
	tokens          int
}

// observed is what a scenario's clients saw: every inter-chunk gap and every time to first chunk.
type observed struct{ gaps, ttfts []time.Duration }

// runTogether runs every scenario at once, each on its own engine, for run.
func runTogether(t *testing.T, run time.Duration, scenarios ...scenario) []observed {
	t.Helper()
	out := make([]observed, len(scenarios))
	var wg sync.WaitGroup
	deadline := time.Now().Add(run)
	for i, sc := range scenarios {
		e, err := New(sc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		var mu sync.Mutex
		for c := range sc.clients {
			wg.Go(func() {
				// Replies of varied length, and clients that do not start in step: lockstep
				// clients would prefill together between decodes and hide the interruptions.
				time.Sleep(time.Duration(c) * 3 * time.Millisecond)
				for n := 0; time.Now().Before(deadline); n++ {
					start := time.Now()
					r, err := e.Submit(context.Background(), sc.prompt, sc.tokens+(c*7+n*5)%17)
					if err != nil {
						return
					}
					var prev time.Time
					var gaps, ttfts []time.Duration
					for st := range r.Steps {
						if prev.IsZero() {
							ttfts = append(ttfts, st.At.Sub(start))
						} else {
							gaps = append(gaps, st.At.Sub(prev))
						}
						prev = st.At
					}
					mu.Lock()
					out[i].gaps, out[i].ttfts = append(out[i].gaps, gaps...), append(out[i].ttfts, ttfts...)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	return out
}

func pct(v []time.Duration, q float64) time.Duration {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

// fast is a cost model scaled down so that the test runs in seconds: steps of 2 ms plus 1 ms per
// decoding sequence, and a prefill of a 400-token prompt taking 8 ms. Every difference the test
// looks for is a millisecond or more: time.Sleep, which paces the steps, overshoots by up to about
// one.
func fast() Config {
	return Config{MaxBatch: 4, StepBase: 2 * time.Millisecond, StepPerSeq: time.Millisecond,
		StepPerKTok: 20 * time.Microsecond, PrefillPerTok: 20 * time.Microsecond, SpecTokens: 1, Seed: 1}
}

// above is the share of v at or above d.
func above(v []time.Duration, d time.Duration) float64 {
	n := 0
	for _, x := range v {
		if x >= d {
			n++
		}
	}
	return float64(n) / float64(max(len(v), 1))
}

// TestCadenceFollowsTheCostModel shows the causes moving the figures as the cost model says:
// prefill of newly admitted prompts interrupting decode puts long gaps in the tail; crossing the
// batch limit raises TTFT (queueing), the typical gap (a fuller batch) and the tail (a full batch
// admits a newcomer, and stalls for its prefill, every few steps); chunked prefill takes the
// long gaps out again.
//
// The two scenarios of each comparison run at the same time, so that a machine busy with other work
// slows both alike. Such a machine delays a few percent of the engine's wake-ups by 10 to 40 ms,
// more than the costs compared here: the tail is judged by the share of gaps above a threshold
// between the steps with and without a prefill, which such delays raise in both scenarios alike,
// rather than by a high percentile, which they decide.
func TestCadenceFollowsTheCostModel(t *testing.T) {
	const prompt, tokens, run = 400, 20, 2500 * time.Millisecond
	enough := func(o []observed) {
		t.Helper()
		for i, ob := range o {
			if len(ob.gaps) < 400 {
				t.Fatalf("scenario %d saw %d gaps in %v, too few to judge", i, len(ob.gaps), run)
			}
		}
	}

	// A decode step of 3 sequences takes 5 ms, and 13 ms when a 400-token prompt (8 ms) is
	// prefilled in it.
	o := runTogether(t, run,
		scenario{cfg: fast(), clients: 3, prompt: 10, tokens: tokens},
		scenario{cfg: fast(), clients: 3, prompt: prompt, tokens: tokens})
	enough(o)
	gs, gl := o[0].gaps, o[1].gaps
	t.Logf("3 clients, 10-token prompts: %.1f%% of gaps at 9 ms or more, p99 %v; 400-token prompts: %.1f%%, p99 %v",
		100*above(gs, 9*time.Millisecond), pct(gs, .99), 100*above(gl, 9*time.Millisecond), pct(gl, .99))
	if above(gl, 9*time.Millisecond) < above(gs, 9*time.Millisecond)+0.03 {
		t.Errorf("prefill interruptions did not put long gaps in the tail")
	}

	// 2 clients decode in steps of 4 ms; 8 clients fill the batch of 4 (6 ms steps) and queue.
	o = runTogether(t, run,
		scenario{cfg: fast(), clients: 2, prompt: prompt, tokens: tokens},
		scenario{cfg: fast(), clients: 8, prompt: prompt, tokens: tokens})
	enough(o)
	g2, t2, g8, t8 := o[0].gaps, o[0].ttfts, o[1].gaps, o[1].ttfts
	t.Logf("2 clients: gap p50 %v, %.1f%% at 12 ms or more, TTFT p50 %v", pct(g2, .5), 100*above(g2, 12*time.Millisecond), pct(t2, .5))
	t.Logf("8 clients (batch limit 4): gap p50 %v, %.1f%% at 12 ms or more, TTFT p50 %v", pct(g8, .5), 100*above(g8, 12*time.Millisecond), pct(t8, .5))
	if pct(g8, .5) < pct(g2, .5)+time.Millisecond {
		t.Errorf("the typical gap did not rise with a fuller batch")
	}
	if above(g8, 12*time.Millisecond) < above(g2, 12*time.Millisecond)+0.03 {
		t.Errorf("the gap tail did not rise past the batch limit")
	}
	if pct(t8, .5) < pct(t2, .5)*3 {
		t.Errorf("TTFT p50 did not rise with queueing past the batch limit")
	}

	// 4 clients: a 400-token prompt at 40 µs a token stalls a 6 ms step for 16 ms when prefilled
	// whole, and for 2 ms at a time when in chunks of 50 tokens.
	long := fast()
	long.PrefillPerTok = 40 * time.Microsecond
	chunked := long
	chunked.ChunkedPrefill = 50
	o = runTogether(t, run,
		scenario{cfg: long, clients: 4, prompt: prompt, tokens: tokens},
		scenario{cfg: chunked, clients: 4, prompt: prompt, tokens: tokens})
	enough(o)
	gw, gc := o[0].gaps, o[1].gaps
	t.Logf("whole prefill: %.1f%% of gaps at 15 ms or more, p99 %v; chunked prefill: %.1f%%, p99 %v",
		100*above(gw, 15*time.Millisecond), pct(gw, .99), 100*above(gc, 15*time.Millisecond), pct(gc, .99))
	if above(gc, 15*time.Millisecond) > above(gw, 15*time.Millisecond)-0.03 {
		t.Errorf("chunked prefill did not take the long gaps out")
	}
}

func TestSpeculativeStepsCarrySeveralTokens(t *testing.T) {
	cfg := fast()
	cfg.SpecTokens = 4
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r, _ := e.Submit(context.Background(), 10, 60)
	total, steps, multi := 0, 0, 0
	for st := range r.Steps {
		total += st.Tokens
		steps++
		if st.Tokens > 1 {
			multi++
		}
	}
	if total != 60 || multi == 0 || steps >= 60 {
		t.Errorf("%d tokens in %d steps (%d multi-token); want 60 tokens in fewer steps", total, steps, multi)
	}
	if got, err := e.Lookup(r.ID); err != nil || len(got) != steps {
		t.Errorf("the engine logged %d arrivals (%v) for %d steps", len(got), err, steps)
	}
}

// TestLeftWhileWaiting: a request whose client leaves while it waits for a slot ends at once, without
// waiting for the slot or costing a prefill.
func TestLeftWhileWaiting(t *testing.T) {
	cfg := fast()
	cfg.MaxBatch = 1
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	long, _ := e.Submit(context.Background(), 10, 1000) // holds the only slot for seconds
	ctx, cancel := context.WithCancel(context.Background())
	waiting, _ := e.Submit(ctx, 10, 10)
	<-long.Steps
	cancel()
	select {
	case _, ok := <-waiting.Steps:
		if ok {
			t.Fatal("the request that waited got a token")
		}
	case <-time.After(time.Second):
		t.Fatal("the request whose client left still waits")
	}
	if waiting.FinishReason != "cancelled" {
		t.Errorf("finish reason %q, want cancelled", waiting.FinishReason)
	}
}

func TestConfigValidation(t *testing.T) {
	bad := fast()
	bad.MaxBatch = 0
	if _, err := New(bad); err == nil {
		t.Error("a zero batch must be refused")
	}
}

// TestArrivalsBounded: the engine keeps the arrivals of its latest requests only, so that a server
// running for hours does not grow without bound.
func TestArrivalsBounded(t *testing.T) {
	cfg := fast()
	cfg.StepBase, cfg.StepPerSeq, cfg.MaxBatch = 10*time.Microsecond, 0, 512
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var last *Request
	for range arrivalsKept + 10 {
		if last, err = e.Submit(context.Background(), 1, 1); err != nil {
			t.Fatal(err)
		}
	}
	for range last.Steps {
	}
	first, err := e.Lookup(1)
	if !errors.Is(err, ErrNoArrivals) || !strings.Contains(err.Error(), "older than the latest 4096 requests") {
		t.Errorf("arrivals of the first request %v, %v; want it forgotten", first, err)
	}
	if got, err := e.Lookup(last.ID); err != nil || len(got) != 1 {
		t.Errorf("arrivals of the last request %v, %v", got, err)
	}
	e.mu.Lock()
	n := len(e.log)
	e.mu.Unlock()
	if n > arrivalsKept {
		t.Errorf("the engine keeps the arrivals of %d requests", n)
	}
}

// TestArrivalsUnknown: a request never submitted is told apart from one that has not delivered a
// chunk yet, which has no arrivals and no error.
func TestArrivalsUnknown(t *testing.T) {
	cfg := fast()
	cfg.MaxBatch = 1
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	long, err := e.Submit(ctx, 1, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	<-long.Steps
	waiting, err := e.Submit(ctx, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.Lookup(waiting.ID); err != nil || len(got) != 0 {
		t.Errorf("a request waiting for the batch: %v, %v; want no arrivals and no error", got, err)
	}
	fresh, err := New(fast())
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if _, err := fresh.Lookup(1); err == nil || !strings.HasSuffix(err.Error(), "this server has had no request yet") {
		t.Errorf("a fresh engine: %v", err)
	}
	for _, id := range []uint64{0, waiting.ID + 1} {
		_, err := e.Lookup(id)
		if !errors.Is(err, ErrNoArrivals) || !strings.Contains(err.Error(), "this server has had 2 requests") {
			t.Errorf("request %d: %v", id, err)
		}
	}
}
