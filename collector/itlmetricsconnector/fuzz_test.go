package itlmetricsconnector

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"gopkg.in/yaml.v3"
)

// FuzzConfig unmarshals arbitrary YAML into the connector's config: nothing may panic, and a config
// that validates must build a connector that starts, consumes a span and shuts down.
func FuzzConfig(f *testing.F) {
	for _, seed := range []string{
		"",
		"aggregation_temporality: delta\nmetrics_flush_interval: 5s",
		"histogram: {exponential: {max_size: 40}}",
		"histogram: {explicit: {buckets: {time_per_output_chunk: [0.01, 0.02, 1]}}}",
		"dimensions: [{name: a}, {name: b, default: x}]\nexclude_dimensions: [a]",
		"aggregation_cardinality_limit: 1\nexemplars: {enabled: true, max_per_data_point: 1}",
		"stall_threshold: -1s\nchunk_event_names: ['', x]",
		"dimension_value_max_length: 1\nadd_instance_id: true\nmax_chunks: 2",
		"excluded_scopes: [golden, golden]\nexcluded_operations: [chat]",
		"excluded_scopes: [golden, other]",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var raw map[string]any
		if yaml.Unmarshal([]byte(doc), &raw) != nil {
			return
		}
		cfg := NewFactory().CreateDefaultConfig().(*Config)
		if confmap.NewFromStringMap(raw).Unmarshal(cfg) != nil || cfg.Validate() != nil {
			return
		}
		if cfg.MetricsFlushInterval < 1e6 {
			cfg.MetricsFlushInterval = 1e6 // a valid but tiny interval only makes the test slow
		}
		c, err := NewFactory().CreateTracesToMetrics(context.Background(), connectortest.NewNopSettings(Type), cfg, consumertest.NewNop())
		if err != nil {
			t.Fatalf("a valid config failed to build: %v", err)
		}
		if err := c.Start(context.Background(), componenttest.NewNopHost()); err != nil {
			t.Fatal(err)
		}
		td := ptrace.NewTraces()
		genSpan(td, "m", 1, 100, 10, 20)
		if err := c.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
