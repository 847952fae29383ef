package test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
)

// metricNames returns the names of the metrics collected.
func metricNames(rm metricdata.ResourceMetrics) map[string]bool {
	names := map[string]bool{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			names[m.Name] = true
		}
	}
	return names
}

// TestServerMetrics: a SERVER generation records the GenAI server metrics, with the conventions'
// bucket advice, and none of the client ones; a CLIENT generation the reverse.
func TestServerMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	in := otelitl.New(otelitl.WithTracerProvider(tracenoop.NewTracerProvider()), otelitl.WithMeterProvider(mp))

	start := time.Now()
	r := req
	r.Kind = trace.SpanKindServer
	r.StartTime = start
	_, g := in.Start(context.Background(), r)
	offs := []time.Duration{250 * time.Millisecond, 270 * time.Millisecond, 300 * time.Millisecond, 340 * time.Millisecond}
	toks := []int{1, 2, 1, 2}
	for i, o := range offs {
		g.ChunkAt(start.Add(o), toks[i])
	}
	g.SetUsage(100, 6)
	g.SetResponseModel("gpt-4o-2024")
	g.EndAt(start.Add(400*time.Millisecond), rateLimited{})

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	names := metricNames(rm)
	for _, m := range []itlconv.Metric{itlconv.TimeToFirstChunk, itlconv.TimePerOutputChunk, itlconv.Duration, itlconv.TokenUsage} {
		if names[m.Name] {
			t.Errorf("a SERVER generation recorded the client metric %s", m.Name)
		}
	}
	if len(names) != 3 {
		t.Errorf("metrics %v, want the three server ones only (v1.41 has no server token usage)", names)
	}

	check := func(m itlconv.Metric, count uint64, sum float64) metricdata.HistogramDataPoint[float64] {
		t.Helper()
		h := histogram(t, rm, m.Name).Data.(metricdata.Histogram[float64])
		if len(h.DataPoints) != 1 {
			t.Fatalf("%s: %d points", m.Name, len(h.DataPoints))
		}
		dp := h.DataPoints[0]
		if dp.Count != count || math.Abs(dp.Sum-sum) > 1e-9 {
			t.Errorf("%s: count %d sum %v, want %d and %v", m.Name, dp.Count, dp.Sum, count, sum)
		}
		if fmt.Sprint(dp.Bounds) != fmt.Sprint(m.Buckets) {
			t.Errorf("%s: bounds %v, want %v", m.Name, dp.Bounds, m.Buckets)
		}
		for k, v := range map[attribute.Key]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o-2024", "server.address": "api.openai.com"} {
			if got, _ := dp.Attributes.Value(k); got.String() != v {
				t.Errorf("%s: %s = %q, want %q", m.Name, k, got.String(), v)
			}
		}
		return dp
	}
	check(itlconv.ServerTimeToFirstToken, 1, 0.25)
	// One observation per gap over the tokens of the later chunk: 20 ms / 2, 30 ms / 1, 40 ms / 2.
	tpot := check(itlconv.ServerTimePerOutputToken, 3, 0.01+0.03+0.02)
	if v, ok := tpot.Min.Value(); !ok || math.Abs(v-0.01) > 1e-9 {
		t.Errorf("smallest time per output token %v, want 0.01", tpot.Min)
	}
	dp := check(itlconv.ServerRequestDuration, 1, 0.4)
	if v, _ := dp.Attributes.Value(semconv.ErrorTypeKey); v.AsString() != "rate_limited" {
		t.Errorf("server duration lacks error.type: %v", dp.Attributes)
	}

	// The same generation as a CLIENT: the client metrics only.
	reader2 := sdkmetric.NewManualReader()
	in = otelitl.New(otelitl.WithTracerProvider(tracenoop.NewTracerProvider()), otelitl.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader2))))
	r.Kind = trace.SpanKindClient
	_, g = in.Start(context.Background(), r)
	for i, o := range offs {
		g.ChunkAt(start.Add(o), toks[i])
	}
	g.EndAt(start.Add(400*time.Millisecond), nil)
	rm = metricdata.ResourceMetrics{}
	if err := reader2.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, m := range []itlconv.Metric{itlconv.ServerTimeToFirstToken, itlconv.ServerTimePerOutputToken, itlconv.ServerRequestDuration} {
		if metricNames(rm)[m.Name] {
			t.Errorf("a CLIENT generation recorded the server metric %s", m.Name)
		}
	}
	if !metricNames(rm)[itlconv.TimeToFirstChunk.Name] {
		t.Errorf("a CLIENT generation recorded no time to first chunk")
	}
}

// TestServerMetricsNoChunk: a SERVER generation without chunks records its duration only.
func TestServerMetricsNoChunk(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	in := otelitl.New(otelitl.WithTracerProvider(tracenoop.NewTracerProvider()), otelitl.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	r := req
	r.Kind = trace.SpanKindServer
	_, g := in.Start(context.Background(), r)
	g.End(context.Canceled)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if names := metricNames(rm); len(names) != 1 || !names[itlconv.ServerRequestDuration.Name] {
		t.Errorf("metrics %v, want %s only", names, itlconv.ServerRequestDuration.Name)
	}
}
