package itlprocessor

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
	if cfg.StallThreshold != 250*time.Millisecond || len(cfg.ChunkEventNames) != 3 || cfg.CompactEvents || cfg.DropTimeline || cfg.MaxChunks != defaultMaxChunks {
		t.Errorf("defaults: %+v", cfg)
	}
	cfg, err = loadConfig(t, "custom")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.StallThreshold != 400*time.Millisecond || strings.Join(cfg.ChunkEventNames, ",") != "otelitl.chunk,my.chunk" || !cfg.CompactEvents || cfg.MaxChunks != 50000 {
		t.Errorf("custom: %+v", cfg)
	}
}

func TestInvalidConfigNamesTheField(t *testing.T) {
	for name, want := range map[string]string{
		"bad_threshold": "stall_threshold: 0s must be above 0",
		"bad_names":     `chunk_event_names[1]: "otelitl.chunk" is listed twice`,
		"both":          "compact_events and drop_timeline",
	} {
		_, err := loadConfig(t, name)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to contain %q", name, err, want)
		}
	}
}
