package itlmetricsconnector

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

// TestLoadConfig reads every id of testdata/config.yaml, as the collector does (unmarshal onto the
// defaults, then confmap.Validate), and compares the whole struct, or the whole error.
func TestLoadConfig(t *testing.T) {
	require.NoError(t, componenttest.CheckConfigStruct(NewFactory().CreateDefaultConfig()))
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	def := func(edit func(*Config)) *Config {
		cfg := createDefaultConfig().(*Config)
		edit(cfg)
		return cfg
	}
	unknown := "unknown"
	tests := []struct {
		id      component.ID
		want    *Config
		wantErr string
	}{
		{id: component.NewID(Type), want: def(func(*Config) {})},
		{id: component.NewIDWithName(Type, "custom"), want: def(func(c *Config) {
			c.Dimensions = []Dimension{{Name: "gen_ai.request.model"}, {Name: "deployment.environment", Default: &unknown}}
			c.AggregationTemporality = "delta"
			c.MetricsFlushInterval = 5 * time.Second
			c.MetricsExpiration = 0
			c.AggregationCardinalityLimit = 500
			c.AddInstanceID = true
			c.Exemplars.Enabled = false
			c.Histogram.Explicit.Buckets.TimePerOutputChunk = []float64{0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1}
			c.StallThreshold = 500 * time.Millisecond
		})},
		{id: component.NewIDWithName(Type, "exponential"), want: def(func(c *Config) { c.Histogram.Exponential.MaxSize = 80 })},
		{id: component.NewIDWithName(Type, "contrib_delta"), want: def(func(c *Config) { c.AggregationTemporality = "AGGREGATION_TEMPORALITY_DELTA" })},
		{id: component.NewIDWithName(Type, "contrib_cumulative"), want: def(func(c *Config) { c.AggregationTemporality = "AGGREGATION_TEMPORALITY_CUMULATIVE" })},
		{id: component.NewIDWithName(Type, "bad_temporality"), wantErr: `aggregation_temporality: "deltas" is not known; use cumulative or delta (or AGGREGATION_TEMPORALITY_CUMULATIVE / AGGREGATION_TEMPORALITY_DELTA)`},
		{id: component.NewIDWithName(Type, "bad_buckets"), wantErr: "histogram.explicit.buckets.time_to_first_chunk: boundaries must increase strictly; 0.5 follows 1"},
		{id: component.NewIDWithName(Type, "bad_exclude"), wantErr: `exclude_dimensions[0]: "gen_ai.system" is not a dimension; the dimensions are service.name, gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model, gen_ai.response.model, server.address`},
		{id: component.NewIDWithName(Type, "both_histograms"), wantErr: "histogram: set either explicit.buckets or exponential.max_size, not both"},
		{id: component.NewIDWithName(Type, "no_limit"), wantErr: "aggregation_cardinality_limit: 0 must be above 0: it bounds the connector's memory; the default is 10000"},
		{id: component.NewIDWithName(Type, "bad_stall"), wantErr: "stall_threshold: -1s must be above 0; the default is 250ms"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.id.String()] = true
		t.Run(tt.id.String(), func(t *testing.T) {
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			cfg := NewFactory().CreateDefaultConfig().(*Config)
			require.NoError(t, sub.Unmarshal(cfg))
			err = confmap.Validate(cfg)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantErr, err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
	for id := range cm.ToStringMap() {
		assert.Truef(t, seen[id], "testdata/config.yaml has %s, which no test case reads", id)
	}
}
