package engine

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// gapsAt drives the engine with `clients` clients, each submitting a new request as soon as its last
// finished, for `run`, and returns every inter-chunk gap and every time to first chunk.
func gapsAt(t *testing.T, cfg Config, clients, prompt, tokens int, run time.Duration) (gaps, ttfts []time.Duration) {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var mu sync.Mutex
	var wg sync.WaitGroup
	deadline := time.Now().Add(run)
	for c := range clients {
		wg.Go(func() {
			// Replies of varied length, and clients that do not start in step: lockstep clients
			// would prefill together between decodes and hide the interruptions.
			time.Sleep(time.Duration(c) * 3 * time.Millisecond)
			for n := 0; time.Now().Before(deadline); n++ {
				start := time.Now()
				r, err := e.Submit(context.Background(), prompt, tokens+(c*7+n*5)%17)
				if err != nil {
					return
				}
				var prev time.Time
				var local, lt []time.Duration
				for st := range r.Steps {
					if prev.IsZero() {
						lt = append(lt, st.At.Sub(start))
					} else {
						local = append(local, st.At.Sub(prev))
					}
					prev = st.At
				}
				mu.Lock()
				gaps, ttfts = append(gaps, local...), append(ttfts, lt...)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return gaps, ttfts
}

func pct(v []time.Duration, q float64) time.Duration {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

// fast is a cost model scaled down so that the test runs in seconds: 2 ms steps, and a prefill of
// a 400-token prompt taking 8 ms.
func fast() Config {
	return Config{MaxBatch: 4, StepBase: 2 * time.Millisecond, StepPerSeq: 300 * time.Microsecond,
		StepPerKTok: 20 * time.Microsecond, PrefillPerTok: 20 * time.Microsecond, SpecTokens: 1, Seed: 1}
}

// TestCadenceFollowsTheCostModel shows the causes moving the figures as the cost model says:
// prefill of newly admitted prompts interrupting decode raises the gap p99; crossing the batch
// limit raises TTFT (queueing) and the gap tail (a full batch admits a newcomer, and stalls for its
// prefill, every few steps); chunked prefill brings the gap p99 back down.
func TestCadenceFollowsTheCostModel(t *testing.T) {
	const prompt, tokens, run = 400, 20, 1500 * time.Millisecond
	gs, _ := gapsAt(t, fast(), 3, 10, tokens, run)
	gl, _ := gapsAt(t, fast(), 3, prompt, tokens, run)
	t.Logf("3 clients, 10-token prompts: gap p99 %v; 400-token prompts (8 ms prefill): gap p99 %v", pct(gs, .99), pct(gl, .99))
	if pct(gl, .99) < pct(gs, .99)*3/2 {
		t.Errorf("prefill interruptions did not raise the gap p99: %v short prompts, %v long", pct(gs, .99), pct(gl, .99))
	}

	g2, t2 := gapsAt(t, fast(), 2, prompt, tokens, run)
	g8, t8 := gapsAt(t, fast(), 8, prompt, tokens, run)
	t.Logf("2 clients: gap p50 %v p90 %v p99 %v, TTFT p50 %v", pct(g2, .5), pct(g2, .9), pct(g2, .99), pct(t2, .5))
	t.Logf("8 clients (batch limit 4): gap p50 %v p90 %v p99 %v, TTFT p50 %v", pct(g8, .5), pct(g8, .9), pct(g8, .99), pct(t8, .5))
	if pct(g8, .9) < pct(g2, .9)*3/2 || pct(g8, .5) <= pct(g2, .5) {
		t.Errorf("the gaps did not rise past the batch limit: p50/p90 %v/%v at 2 clients, %v/%v at 8", pct(g2, .5), pct(g2, .9), pct(g8, .5), pct(g8, .9))
	}
	if pct(t8, .5) < pct(t2, .5)*2 {
		t.Errorf("TTFT p50 did not rise with queueing past the batch limit: %v at 2 clients, %v at 8", pct(t2, .5), pct(t8, .5))
	}

	long := fast()
	long.PrefillPerTok = 40 * time.Microsecond // a 400-token prompt now stalls decodes for 16 ms
	chunked := long
	chunked.ChunkedPrefill = 50
	gw, _ := gapsAt(t, long, 4, prompt, tokens, run)
	gc, _ := gapsAt(t, chunked, 4, prompt, tokens, run)
	t.Logf("whole prefill: gap p99 %v; chunked prefill (50 tokens a step): gap p99 %v", pct(gw, .99), pct(gc, .99))
	if pct(gc, .99) > pct(gw, .99)*8/10 {
		t.Errorf("chunked prefill did not cut the gap p99: %v whole, %v chunked", pct(gw, .99), pct(gc, .99))
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
	if got := len(e.Arrivals(r.ID)); got != steps {
		t.Errorf("the engine logged %d arrivals for %d steps", got, steps)
	}
}

func TestConfigValidation(t *testing.T) {
	bad := fast()
	bad.MaxBatch = 0
	if _, err := New(bad); err == nil {
		t.Error("a zero batch must be refused")
	}
}
