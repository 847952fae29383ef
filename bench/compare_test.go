// Package bench compares the itl_metrics connector with the components an operator would otherwise
// use, on the same generation spans: spanmetricsconnector with event counting, and the protobuf
// decoding of the spans, the cost no pipeline avoids. It lives in its own module so that the root
// module does not depend on contrib.
//
//	cd bench && go test -run '^$' -bench . -count 6 | tee compare.txt && benchstat -col /impl compare.txt
package bench

import (
	"context"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/connector/spanmetricsconnector"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/itlmetricsconnector"
	"github.com/otelitl/itl/internal/benchspans"
)

const (
	spans  = 100
	chunks = 200
)

func start(b *testing.B, f connector.Factory, cfg component.Config) consumer.Traces {
	c, err := f.CreateTracesToMetrics(context.Background(), connectortest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Shutdown(context.Background()) })
	return c
}

func perSpan(b *testing.B, run func()) {
	b.ReportAllocs()
	for b.Loop() {
		run()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/spans, "ns/span")
}

// BenchmarkPerSpan runs each implementation over the same batch of 100 generation spans of 200
// chunks each. enc=events-decoded is the events batch as a receiver hands it on, decoded from its
// OTLP bytes: there every event's name is a string of its own (in the batch as built, all share
// one), so that comparing names reads their bytes, and the events lie where the decoder put them.
func BenchmarkPerSpan(b *testing.B) {
	for _, enc := range []struct {
		name             string
		compact, decoded bool
	}{{"events", false, false}, {"compact", true, false}, {"events-decoded", false, true}} {
		td := benchspans.Traces(spans, chunks, enc.compact)
		var m ptrace.ProtoMarshaler
		raw, err := m.MarshalTraces(td)
		if err != nil {
			b.Fatal(err)
		}
		if enc.decoded {
			var u ptrace.ProtoUnmarshaler
			if td, err = u.UnmarshalTraces(raw); err != nil {
				b.Fatal(err)
			}
		}

		b.Run("enc="+enc.name+"/impl=itl_metrics", func(b *testing.B) {
			f := itlmetricsconnector.NewFactory()
			cfg := f.CreateDefaultConfig().(*itlmetricsconnector.Config)
			cfg.MetricsFlushInterval = time.Hour
			c := start(b, f, cfg)
			perSpan(b, func() { _ = c.ConsumeTraces(context.Background(), td) })
		})
		b.Run("enc="+enc.name+"/impl=spanmetrics", func(b *testing.B) {
			f := spanmetricsconnector.NewFactory()
			cfg := f.CreateDefaultConfig().(*spanmetricsconnector.Config)
			cfg.MetricsFlushInterval = time.Hour
			cfg.Dimensions = []spanmetricsconnector.Dimension{{Name: "gen_ai.request.model"}, {Name: "gen_ai.provider.name"}}
			cfg.Events = spanmetricsconnector.EventsConfig{Enabled: true, Dimensions: []spanmetricsconnector.Dimension{{Name: "otelitl.chunk.tokens"}}}
			c := start(b, f, cfg)
			perSpan(b, func() { _ = c.ConsumeTraces(context.Background(), td) })
		})
		b.Run("enc="+enc.name+"/impl=proto_unmarshal", func(b *testing.B) {
			var u ptrace.ProtoUnmarshaler
			perSpan(b, func() {
				if _, err := u.UnmarshalTraces(raw); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
