package itlmetricsconnector

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

func loadConfig(t *testing.T, name string) (*Config, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := cm.Sub(component.NewIDWithName(Type, name).String())
	if err != nil {
		t.Fatal(err)
	}
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	if err := sub.Unmarshal(cfg); err != nil {
		return nil, err
	}
	return cfg, confmap.Validate(cfg)
}

func TestLoadConfig(t *testing.T) {
	if err := componenttest.CheckConfigStruct(NewFactory().CreateDefaultConfig()); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Dimensions) != 6 || cfg.AggregationTemporality != "cumulative" || cfg.MetricsFlushInterval != 15*time.Second ||
		cfg.AggregationCardinalityLimit != defaultCardinalityLimit || !cfg.Exemplars.Enabled || cfg.StallThreshold != 250*time.Millisecond {
		t.Errorf("defaults: %+v", cfg)
	}
	cfg, err = loadConfig(t, "custom")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Dimensions) != 2 || *cfg.Dimensions[1].Default != "unknown" || cfg.AggregationTemporality != "delta" ||
		cfg.MetricsExpiration != 0 || !cfg.AddInstanceID || cfg.Exemplars.Enabled || len(cfg.Histogram.Explicit.Buckets.TimePerOutputChunk) != 7 ||
		cfg.StallThreshold != 500*time.Millisecond || cfg.AggregationCardinalityLimit != 500 {
		t.Errorf("custom: %+v", cfg)
	}
	cfg, err = loadConfig(t, "exponential")
	if err != nil || cfg.Histogram.Exponential.MaxSize != 80 {
		t.Errorf("exponential: %v %+v", err, cfg)
	}
}

func TestInvalidConfigNamesTheField(t *testing.T) {
	for name, want := range map[string]string{
		"bad_temporality": `aggregation_temporality: "AGGREGATION_TEMPORALITY_DELTA" is not known; use cumulative or delta`,
		"bad_buckets":     "histogram.explicit.buckets.time_to_first_chunk: boundaries must increase strictly",
		"bad_exclude":     `exclude_dimensions[0]: "gen_ai.system" is not a dimension`,
		"both_histograms": "set either explicit.buckets or exponential.max_size",
		"no_limit":        "aggregation_cardinality_limit: 0 must be above 0",
	} {
		_, err := loadConfig(t, name)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to contain %q", name, err, want)
		}
	}
}
