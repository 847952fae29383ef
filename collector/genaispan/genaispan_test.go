package genaispan_test

import (
	"math"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

const tol = 1e-9

func near(a, b float64) bool { return math.Abs(a-b) <= tol }

func checkOpt(t *testing.T, name string, has bool, got float64, want *float64) {
	t.Helper()
	switch {
	case want == nil && has:
		t.Errorf("%s = %v, want none", name, got)
	case want != nil && !has:
		t.Errorf("%s missing, want %v", name, *want)
	case want != nil && !near(got, *want):
		t.Errorf("%s = %.12f, want %.12f", name, got, *want)
	}
}

// TestGolden checks every reference span against the figures computed independently of the project.
func TestGolden(t *testing.T) {
	set := golden.Load(t)
	stall := time.Duration(set.StallThresholdS * float64(time.Second))
	d := genaispan.New(genaispan.Config{StallThreshold: stall})
	for _, c := range set.Cases {
		t.Run(c.Name, func(t *testing.T) {
			want := c.Expected
			span := c.Span()
			r := d.Read(span, true)
			if r.ModelCall != want.GenAI || r.Valid != want.TimelineValid || r.Complete != want.TimelineComplete {
				t.Fatalf("model call/valid/complete = %v/%v/%v (reason %q), want %v/%v/%v", r.ModelCall, r.Valid, r.Complete, r.Reason, want.GenAI, want.TimelineValid, want.TimelineComplete)
			}
			if got := r.Timeline.Len(); got != want.ChunksSeen {
				t.Errorf("chunks seen %d, want %d", got, want.ChunksSeen)
			}
			if dur, ok := r.Result.Duration(); !ok || !near(dur, want.DurationS) || (r.ModelCall && (!r.HasDuration || r.Duration != dur)) {
				t.Errorf("duration %v, want %v", dur, want.DurationS)
			}
			if got := genaispan.ErrorType(span); got != want.ErrorType {
				t.Errorf("error.type %q, want %q", got, want.ErrorType)
			}
			f := r.Figures
			if !r.Valid {
				if f.HasTTFT || f.HasTPOT || f.HasGaps || f.HasOutputTokens || want.TTFTS != nil || want.TPOTS != nil || want.MaxGapS != nil || want.OutputTokens != nil || len(want.GapsS) != 0 {
					t.Fatalf("an invalid timeline with figures %+v, or expected figures", f)
				}
				return
			}
			checkOpt(t, "ttft", f.HasTTFT, f.TTFT, want.TTFTS)
			checkOpt(t, "tpot", f.HasTPOT, f.TPOT, want.TPOTS)
			checkOpt(t, "max gap", f.HasGaps, f.MaxGap, want.MaxGapS)
			checkOpt(t, "gap p50", f.HasGaps, f.P50, want.GapP50S)
			checkOpt(t, "gap p90", f.HasGaps, f.P90, want.GapP90S)
			checkOpt(t, "gap p99", f.HasGaps, f.P99, want.GapP99S)
			if want.OutputTokens == nil && f.HasOutputTokens || want.OutputTokens != nil && (!f.HasOutputTokens || f.OutputTokens != *want.OutputTokens) {
				t.Errorf("output tokens %v (%v), want %v", f.OutputTokens, f.HasOutputTokens, want.OutputTokens)
			}
			if f.Stalls != want.Stalls {
				t.Errorf("stalls %d, want %d", f.Stalls, want.Stalls)
			}
			if got := r.Timeline.GapCount(); got != len(want.GapsS) {
				t.Fatalf("%d gaps, want %d", got, len(want.GapsS))
			}
			for i, g := range want.GapsS {
				if !near(r.Timeline.Gap(i), g) {
					t.Fatalf("gap %d = %.9f, want %.9f", i, r.Timeline.Gap(i), g)
				}
			}
		})
	}
}

// TestCompactOffsetBounds checks the compact reader's range check at its edges: an offset at the
// span's end (in whole microseconds) is valid, one microsecond more is not, and an offset below 0
// or below the one before it fails whatever its size, the extremes of int64 included.
func TestCompactOffsetBounds(t *testing.T) {
	const end = 1_000_000_999 // ns after the start: the last valid offset is 1,000,000 us
	d := genaispan.New(genaispan.Config{})
	for _, c := range []struct {
		name string
		offs []int64
		want genaispan.Reason
	}{
		{"last at the end", []int64{0, 500_000, 1_000_000}, genaispan.ReasonNone},
		{"first at the end", []int64{1_000_000, 1_000_000}, genaispan.ReasonNone},
		{"one past the end", []int64{0, 1_000_001}, genaispan.ReasonAfterEnd},
		{"MaxInt64", []int64{0, 10, math.MaxInt64}, genaispan.ReasonAfterEnd},
		{"-1 first", []int64{-1, 10}, genaispan.ReasonNegativeOffset},
		{"MinInt64 later", []int64{0, 10, math.MinInt64}, genaispan.ReasonNegativeOffset},
		{"one below the one before", []int64{0, 10, 9}, genaispan.ReasonDecreasing},
		{"0 after a later one", []int64{5, 0}, genaispan.ReasonDecreasing},
	} {
		t.Run(c.name, func(t *testing.T) {
			span := ptrace.NewSpan()
			span.SetStartTimestamp(1_800_000_000_000_000_000)
			span.SetEndTimestamp(1_800_000_000_000_000_000 + end)
			span.Attributes().PutStr(string(semconv.GenAIOperationNameKey), "chat")
			span.Attributes().PutEmptySlice(string(itlconv.ChunkOffsetsKey)).FromRaw(toAny(c.offs))
			r := d.Read(span, false)
			if r.Reason != c.want || r.Valid != (c.want == genaispan.ReasonNone) {
				t.Fatalf("valid %v, reason %q; want reason %q", r.Valid, r.Reason, c.want)
			}
			if r.Valid && r.Timeline.Len() != len(c.offs) {
				t.Fatalf("%d chunks, want %d", r.Timeline.Len(), len(c.offs))
			}
		})
	}
}

func toAny(v []int64) []any {
	a := make([]any, len(v))
	for i, x := range v {
		a[i] = x
	}
	return a
}

// TestErrorType: a failed span without error.type is named by its HTTP status code when it records
// one (the Vercel AI SDK 7 writes none), else _OTHER; a span that did not fail has none.
func TestErrorType(t *testing.T) {
	for _, c := range []struct {
		name   string
		status ptrace.StatusCode
		attrs  map[string]any
		want   string
	}{
		{"error.type wins", ptrace.StatusCodeError, map[string]any{"error.type": "timeout", "http.response.status_code": int64(404)}, "timeout"},
		{"the status code", ptrace.StatusCodeError, map[string]any{"http.response.status_code": int64(404)}, "404"},
		{"the status code as text", ptrace.StatusCodeError, map[string]any{"http.response.status_code": "503"}, "503"},
		{"the status code as padded text", ptrace.StatusCodeError, map[string]any{"http.response.status_code": " 503 "}, "503"},
		{"the status code as a double", ptrace.StatusCodeError, map[string]any{"http.response.status_code": 404.0}, "404"},
		{"a fractional double", ptrace.StatusCodeError, map[string]any{"http.response.status_code": 404.5}, "_OTHER"},
		{"a success code", ptrace.StatusCodeError, map[string]any{"http.response.status_code": int64(200)}, "_OTHER"},
		{"out of range", ptrace.StatusCodeError, map[string]any{"http.response.status_code": int64(99999)}, "_OTHER"},
		{"nothing", ptrace.StatusCodeError, nil, "_OTHER"},
		{"not failed", ptrace.StatusCodeUnset, map[string]any{"http.response.status_code": int64(500)}, ""},
	} {
		span := ptrace.NewSpan()
		span.Status().SetCode(c.status)
		if err := span.Attributes().FromRaw(c.attrs); err != nil {
			t.Fatal(err)
		}
		if got := genaispan.ErrorType(span); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
