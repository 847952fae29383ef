package main

import (
	"context"
	"errors"
	"math/bits"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/itlconv/timeline"
)

// floorType is the floor processor's component type.
var floorType = component.MustNewType("itl_floor")

// The floor processor does the least that any implementation of the itl processor and the
// itl_metrics connector together must do on a generation span, and nothing else, so that its cost
// in a collector is a lower bound on theirs (issue 14, target (a); BENCHMARKS.md):
//
//   - it finds the timeline (the compact offsets, or the chunk events) and reads every arrival
//     once: the two components read it once each;
//   - it puts every gap in a histogram at the cheapest mapping there is (a power-of-two bucket
//     from the gap's bit length), where the connector finds the span's series and observes the gap
//     in an exponential or explicit-bucket histogram, with exemplars, and exports the metrics;
//   - it writes the six figures the itl processor adds to such a span (TPOT, the gap p50, p90,
//     p99 and maximum, the stall count) under the same keys, with values of the same types, in a
//     slice grown as the processor grows it, so that the exporter encodes and compresses as many
//     bytes; but it selects no percentile (p50, p90 and p99 are the mean gap, the mean of the mean
//     and the largest, and the largest gap less the smallest), checks no arrival, and reads no
//     other attribute: it knows no convention and no model.
//
// Its figures are not the contract's: it is a yardstick for benchmarks, never a component to run.
//
// With exact: true (the pipeline benchmark's floor_exact), it also keeps the arrivals it reads and
// selects the exact gap p50, p90 and p99 from them with the timeline package's selection, the one
// the itl processor uses and the fastest this repository has measured; its figures are then the
// processor's, to the bit. That is the floor plus the one piece of work the golden figures demand
// that the floor leaves out, each still at its cheapest: it still checks nothing, looks up no
// series and observes each gap with one increment.
//
// With read_only: true (floor_read), it reads every arrival and counts every gap as above, and
// writes nothing: the least the itl_metrics connector must do on a span that already carries its
// figures, as today's otelitl client writes them (one observation per gap, which no
// implementation can skip).
type floorProcessor struct {
	exact, readOnly bool

	mu    sync.Mutex
	hist  [65]uint64 // gaps by bit length of their nanoseconds
	gaps  uint64
	sumNs uint64
}

// floorConfig is the floor processor's configuration.
type floorConfig struct {
	// Exact selects the exact gap percentiles, as the itl processor does.
	Exact bool `mapstructure:"exact"`
	// ReadOnly reads the arrivals and counts the gaps, and writes no figure.
	ReadOnly bool `mapstructure:"read_only"`
}

// Validate refuses exact with read_only: a floor that writes no figure selects none.
func (c *floorConfig) Validate() error {
	if c.Exact && c.ReadOnly {
		return errors.New("exact: true selects the percentiles of the figures that read_only: true does not write; set one of them")
	}
	return nil
}

func newFloorFactory() processor.Factory {
	return processor.NewFactory(floorType, func() component.Config { return &floorConfig{} },
		processor.WithTraces(func(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
			c := cfg.(*floorConfig)
			p := &floorProcessor{exact: c.Exact, readOnly: c.ReadOnly}
			return processorhelper.NewTraces(ctx, set, cfg, next, p.processTraces,
				processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: !c.ReadOnly}))
		}, component.StabilityLevelDevelopment))
}

// tally is one request's share of the histogram, merged under the lock once per request.
type tally struct {
	hist        [65]uint64
	gaps, sumNs uint64

	exact, readOnly bool
	offs, scratch   []int64 // with exact: the span's arrivals, and the selection's buffer
}

func (p *floorProcessor) processTraces(_ context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	t := tally{exact: p.exact, readOnly: p.readOnly}
	pwalk.Spans(td, func(_ pcommon.Map, span ptrace.Span) { t.span(span) })
	p.mu.Lock()
	for i, n := range t.hist {
		p.hist[i] += n
	}
	p.gaps += t.gaps
	p.sumNs += t.sumNs
	p.mu.Unlock()
	return td, nil
}

// span reads the span's timeline, observes its gaps and writes the six figures.
func (t *tally) span(span ptrace.Span) {
	var (
		n                    int
		first, prev          int64
		minGap, maxGap, sumG int64
		stalls               int64
	)
	var base int64 // what at is counted from: 0 for compact offsets, the epoch for events
	t.offs = t.offs[:0]
	arrive := func(at int64) {
		if n > 0 {
			g := at - prev
			t.hist[bits.Len64(uint64(g))]++
			sumG += g
			if n == 1 || g < minGap {
				minGap = g
			}
			maxGap = max(maxGap, g)
			if g > int64(itlconv.DefaultStallThreshold) {
				stalls++
			}
		} else {
			first = at
		}
		prev = at
		n++
		if t.exact {
			t.offs = append(t.offs, at-base)
		}
	}
	attrs := span.Attributes()
	if v, ok := attrs.Get(string(itlconv.ChunkOffsetsKey)); ok && v.Type() == pcommon.ValueTypeSlice {
		offs := v.Slice()
		for i := range offs.Len() {
			arrive(offs.At(i).Int() * 1000)
		}
	} else {
		evs := span.Events()
		base = int64(span.StartTimestamp())
		for i := range evs.Len() {
			if e := evs.At(i); e.Name() == itlconv.ChunkEventName {
				arrive(int64(e.Timestamp()))
			}
		}
	}
	if n < 2 {
		return
	}
	t.gaps += uint64(n - 1)
	t.sumNs += uint64(sumG)
	if t.readOnly {
		return
	}
	mean := float64(sumG) / float64(n-1) / 1e9
	tpot := float64(prev-first) / float64(n-1) / 1e9
	p50, p90, p99 := mean, (mean+float64(maxGap)/1e9)/2, float64(maxGap-minGap)/1e9
	if t.exact {
		var f timeline.Figures
		f, t.scratch = timeline.Compute(timeline.Timeline{Offsets: t.offs}, timeline.Input{
			Complete: true, Percentiles: true, HasGapStats: true, GapStats: timeline.GapStats{MinNs: minGap, MaxNs: maxGap, Stalls: int(stalls)},
		}, t.scratch)
		tpot, p50, p90, p99 = f.TPOT, f.P50, f.P90, f.P99
	}
	attrs.EnsureCapacity(attrs.Len() + 6)
	attrs.PutDouble(string(itlconv.TPOTKey), tpot)
	attrs.PutDouble(string(itlconv.GapP50Key), p50)
	attrs.PutDouble(string(itlconv.GapP90Key), p90)
	attrs.PutDouble(string(itlconv.GapP99Key), p99)
	attrs.PutDouble(string(itlconv.GapMaxKey), float64(maxGap)/1e9)
	attrs.PutInt(string(itlconv.StallsKey), stalls)
}
