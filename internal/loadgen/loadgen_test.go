package loadgen

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelitl/itl/otelitl"
)

// Generation writes the cadence its doc comment gives, and counts what it wrote: a stall where
// (i+k) % StallEvery == 0 and nowhere else.
func TestGeneration(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(otelitl.EncodingEvents))
	start := time.Unix(1_800_000_000, 0)
	const i, chunks = 95, 4 // k = 2 is the stall: (95+2) % 97 == 0
	gaps, stalls := Generation(context.Background(), in, otelitl.Request{Provider: "load", Model: "m"}, i, start, chunks)
	if gaps != chunks-1 || stalls != 1 {
		t.Fatalf("counted %d gaps and %d stalls, want %d and 1", gaps, stalls, chunks-1)
	}
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	var got []time.Duration
	for _, ev := range spans[0].Events() {
		got = append(got, ev.Time.Sub(start))
	}
	ms := time.Millisecond
	first := (200 + i%300) * ms
	want := []time.Duration{first, first + (10+(i+7)%25)*ms, first + (10+(i+7)%25)*ms + Stall, first + (10+(i+7)%25)*ms + Stall + (10+(i+21)%25)*ms}
	if len(got) != len(want) {
		t.Fatalf("chunk offsets %v, want %v", got, want)
	}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("chunk offsets %v, want %v", got, want)
		}
	}
	if end := spans[0].EndTime().Sub(start); end != want[len(want)-1]+ms {
		t.Errorf("ended at %v, want 1 ms after the last chunk, %v", end, want[len(want)-1]+ms)
	}
	if !spans[0].StartTime().Equal(start) {
		t.Errorf("started at %v, want %v", spans[0].StartTime(), start)
	}
}
