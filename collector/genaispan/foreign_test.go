package genaispan_test

import (
	"math"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/internal/golden"
)

// readAll reads every span of td as a model call and sums what the model calls hold.
type readAll struct {
	calls     int
	models    []string
	providers []string
	durations []float64
	ttfts     []float64
	sources   []string
	output    *int64
	gaps      int
	stalls    bool
	malformed []genaispan.Reason
}

func read(td ptrace.Traces) readAll {
	d := genaispan.New(genaispan.Config{})
	var a readAll
	pwalk.Spans(td, func(_ pcommon.Map, span ptrace.Span) {
		c := d.Read(span, false)
		if !c.ModelCall {
			return
		}
		a.calls++
		a.models = append(a.models, c.Model)
		a.providers = append(a.providers, c.Provider)
		a.malformed = append(a.malformed, c.Malformed()...)
		if c.HasDuration {
			a.durations = append(a.durations, c.Duration)
		}
		if c.Figures.HasTTFT {
			a.ttfts = append(a.ttfts, c.Figures.TTFT)
			a.sources = append(a.sources, c.TTFTSource)
		}
		if c.Figures.HasOutputTokens {
			n := c.Figures.OutputTokens
			if a.output != nil {
				n += *a.output
			}
			a.output = &n
		}
		if c.HasTimeline() && c.Valid {
			a.gaps += c.Timeline.GapCount()
			a.stalls = true
		}
	})
	return a
}

func nearAll(got, want []float64, tol float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol {
			return false
		}
	}
	return true
}

// TestForeign checks every foreign reference trace: which spans are model calls, and their
// figures from whichever source the instrumentation wrote.
func TestForeign(t *testing.T) {
	for _, c := range golden.LoadForeign(t) {
		t.Run(c.Name, func(t *testing.T) {
			want := c.Expected
			got := read(c.Traces)
			if got.calls != want.ModelCalls {
				t.Fatalf("%d model calls, want %d", got.calls, want.ModelCalls)
			}
			for _, m := range got.models {
				if m != want.Model {
					t.Errorf("model %q, want %q", m, want.Model)
				}
			}
			if want.Provider != "" && !slices.Equal(got.providers, []string{want.Provider}) {
				t.Errorf("providers %q, want %q", got.providers, want.Provider)
			}
			if !nearAll(got.durations, want.DurationS, 1e-9) {
				t.Errorf("durations %v, want %v", got.durations, want.DurationS)
			}
			if !nearAll(got.ttfts, want.TTFTS, want.Tolerance()) {
				t.Errorf("time to first chunk %v, want %v (tolerance %v)", got.ttfts, want.TTFTS, want.Tolerance())
			}
			if len(got.ttfts) > 0 && got.sources[0] != want.Source {
				t.Errorf("time to first chunk from %q, want %q", got.sources[0], want.Source)
			}
			if (got.output == nil) != (want.OutputTokens == nil) || got.output != nil && *got.output != *want.OutputTokens {
				t.Errorf("output tokens %v, want %v", deref(got.output), deref(want.OutputTokens))
			}
			if got.gaps != want.Gaps || got.stalls != want.StallSeries {
				t.Errorf("gaps %d, stall series %v; want %d, %v", got.gaps, got.stalls, want.Gaps, want.StallSeries)
			}
			if (len(got.malformed) > 0) != want.Malformed {
				t.Errorf("malformed %v, want %v", got.malformed, want.Malformed)
			}
		})
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
