package main

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelitl/itl/collector/itlprocessor"
	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/otelitl"
)

// BenchmarkAboveFloor runs the floor, the exact floor and the itl processor on the same requests
// of 100 client spans, the pipeline benchmark's loads (compact-200 and events-100), each request a
// fresh copy made with the timer stopped and its garbage collected, as a receiver hands a request
// it has just decoded to the first processor: what the processor costs above the least any
// implementation does, without the pipeline's noise. Compare the components with
// `go test -run '^$' -bench AboveFloor -count 10 .` and benchstat, in one run.
func BenchmarkAboveFloor(b *testing.B) {
	for _, load := range loads {
		reqs := load.requests(b)
		for _, c := range []struct {
			name    string
			factory processor.Factory
			cfg     any
		}{
			{"floor", newFloorFactory(), &floorConfig{}},
			{"floor_exact", newFloorFactory(), &floorConfig{Exact: true}},
			{"itl", itlprocessor.NewFactory(), itlprocessor.NewFactory().CreateDefaultConfig()},
		} {
			p, err := c.factory.CreateTraces(context.Background(), processortest.NewNopSettings(c.factory.Type()), c.cfg, consumertest.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("load=%s/component=%s", load.name, c.name), func(b *testing.B) {
				i := 0
				for b.Loop() {
					b.StopTimer()
					td := ptrace.NewTraces()
					reqs[i%len(reqs)].CopyTo(td)
					i++
					runtime.GC()
					b.StartTimer()
					if err := p.ConsumeTraces(context.Background(), td); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perRequest), "ns/span")
			})
		}
	}
}

// loads are the pipeline benchmark's two loads, for the benchmarks here, as an older client sends
// them: without the figures today's client writes, so that the itl processor computes them.
var loads = []load{{name: "compact-200", enc: otelitl.EncodingCompact, chunks: 200}, {name: "events-100", enc: otelitl.EncodingEvents, chunks: 100}}

// figureLoads are the same loads as today's client sends them, its figures on every span.
var figureLoads = []load{{"figures-compact-200", otelitl.EncodingCompact, 200, true}, {"figures-events-100", otelitl.EncodingEvents, 100, true}}

type load struct {
	name    string
	enc     otelitl.Encoding
	chunks  int
	figures bool // the spans keep the figures the client writes
}

// perRequest is how many spans a request of the benchmarks here holds, as the SDK's batch span
// processor sends them at 1000 generations a second.
const perRequest = 100

// requests returns 4 requests of perRequest client spans of the load.
func (l load) requests(b *testing.B) []ptrace.Traces {
	const requests = 4
	reqs := splitRequests(clientSpans(b, l.enc, perRequest*requests, l.chunks, l.figures), perRequest)
	if len(reqs) != requests || reqs[0].SpanCount() != perRequest {
		b.Fatalf("%d requests of %d spans", len(reqs), reqs[0].SpanCount())
	}
	return reqs
}

// splitRequests puts td's spans in requests of n spans each, under one resource and one scope,
// as the SDK's batch span processor sends an application's spans.
func splitRequests(td ptrace.Traces, n int) []ptrace.Traces {
	rs := td.ResourceSpans().At(0)
	ss := rs.ScopeSpans().At(0)
	var out []ptrace.Traces
	var dst ptrace.SpanSlice
	k := 0
	pwalk.Spans(td, func(_ pcommon.Map, span ptrace.Span) {
		if k%n == 0 {
			req := ptrace.NewTraces()
			r := req.ResourceSpans().AppendEmpty()
			rs.Resource().CopyTo(r.Resource())
			s := r.ScopeSpans().AppendEmpty()
			ss.Scope().CopyTo(s.Scope())
			dst = s.Spans()
			out = append(out, req)
		}
		span.CopyTo(dst.AppendEmpty())
		k++
	})
	return out
}
