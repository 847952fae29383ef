package itlmetricsconnector

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelitl/itl/collector/itlprocessor"
	"github.com/otelitl/itl/internal/benchspans"
	"github.com/otelitl/itl/itlconv"
)

// refusing is an exporter whose sending queue is full for its first requests: it refuses them as
// exporterhelper does, then takes the rest.
type refusing struct {
	consumertest.TracesSink
	refuse atomic.Int32
}

func (r *refusing) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (r *refusing) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if r.refuse.Add(-1) >= 0 {
		return errors.New("sending queue is full")
	}
	return r.TracesSink.ConsumeTraces(ctx, td)
}

// shippedMaxSpans reads connectors.itl_metrics.deduplicate.max_spans from a shipped configuration.
func shippedMaxSpans(t *testing.T, file string) int {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("..", "..", "exporter-config", file))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := cm.Sub("connectors::itl_metrics::deduplicate")
	if err != nil {
		t.Fatal(err)
	}
	var d DeduplicateConfig
	if err := sub.Unmarshal(&d); err != nil {
		t.Fatal(err)
	}
	return d.MaxSpans
}

// TestRetriedRequestCountsOnce runs gateway.yaml's traces pipeline, the itl processor
// (compact_events) then the itl_metrics connector and an exporter side by side behind the
// collector's own fanout (the one connector.NewTracesRouter builds, as the service builds it for a
// pipeline's exporters), with the exporter's queue full for the first 3 requests. The client sends
// its request again after each refusal, as an OTel SDK or agent.yaml does, and once more after it
// got through, as a client whose deadline passed first does. With deduplicate.max_spans (as
// gateway.yaml, otlp.yaml and otlphttp.yaml set it) the metrics count every gap and generation once; without it, once per attempt (5 times), which is
// what the README's troubleshooting row described. The exporter gets every span either way.
func TestRetriedRequestCountsOnce(t *testing.T) {
	const spans, chunks, refusals = 8, 50, 3
	request := benchspans.Traces(spans, chunks, false)
	for _, tc := range []struct {
		name            string
		maxSpans, times int
	}{{"off", 0, refusals + 2}, {"max_spans=100000", 100_000, 1},
		// The shipped configurations whose connector shares its requests with a queued exporter.
		{"gateway.yaml", shippedMaxSpans(t, "gateway.yaml"), 1}, {"otlp.yaml", shippedMaxSpans(t, "otlp.yaml"), 1}, {"otlphttp.yaml", shippedMaxSpans(t, "otlphttp.yaml"), 1}} {
		t.Run(tc.name, func(t *testing.T) {
			sink := new(consumertest.MetricsSink)
			conn := newTestConnector(t, withDedup(tc.maxSpans), sink)
			exp := &refusing{}
			exp.refuse.Store(refusals)
			fanout := connector.NewTracesRouter(map[pipeline.ID]consumer.Traces{
				pipeline.NewIDWithName(pipeline.SignalTraces, "connector"): conn,
				pipeline.NewIDWithName(pipeline.SignalTraces, "exporter"):  exp,
			})
			pf := itlprocessor.NewFactory()
			pcfg := pf.CreateDefaultConfig().(*itlprocessor.Config)
			pcfg.CompactEvents = true
			proc, err := pf.CreateTraces(context.Background(), processortest.NewNopSettings(itlprocessor.Type), pcfg, fanout)
			if err != nil {
				t.Fatal(err)
			}
			if err := proc.Start(context.Background(), componenttest.NewNopHost()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = proc.Shutdown(context.Background()) })

			send := func() error { // each attempt is a new request, decoded anew by the receiver
				td := ptrace.NewTraces()
				request.CopyTo(td)
				return proc.ConsumeTraces(context.Background(), td)
			}
			attempts := 1
			for err := send(); err != nil; err = send() {
				if attempts > refusals {
					t.Fatalf("attempt %d refused: %v", attempts, err)
				}
				attempts++
			}
			if err := send(); err != nil { // the client's deadline passed before the answer came
				t.Fatal(err)
			}
			if attempts != refusals+1 {
				t.Fatalf("%d attempts, want %d", attempts, refusals+1)
			}
			if err := conn.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			md := sink.AllMetrics()[0]
			if n, _ := gapCount(md); n != uint64(tc.times*spans*(chunks-1)) {
				t.Errorf("%d gaps observed, want %d: %d spans of %d gaps, %d times", n, tc.times*spans*(chunks-1), spans, chunks-1, tc.times)
			}
			var generations int64
			for _, n := range sumPoints(md, itlconv.Generations.Name, itlconv.TimingKey) {
				generations += n
			}
			if generations != int64(tc.times*spans) {
				t.Errorf("%d generations, want %d", generations, tc.times*spans)
			}
			if n := exp.SpanCount(); n != 2*spans {
				t.Errorf("the exporter took %d spans, want the %d of the attempt that got through and of the one after it", n, 2*spans)
			}
		})
	}
}
