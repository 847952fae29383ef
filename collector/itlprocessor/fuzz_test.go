package itlprocessor

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"gopkg.in/yaml.v3"

	"github.com/otelitl/itl/internal/golden"
)

// FuzzConfig unmarshals arbitrary YAML into the processor's config: nothing may panic, and a config
// that validates must build a processor that processes a reference span.
func FuzzConfig(f *testing.F) {
	for _, seed := range []string{
		"",
		"stall_threshold: 400ms\ncompact_events: true",
		"drop_timeline: true\nmax_chunks: 3",
		"chunk_event_names: [a, b, a]",
		"excluded_scopes: [golden, \"\", \" x\"]",
		"excluded_scopes: [golden]\ndrop_timeline: true",
		"stall_threshold: 0s\ncompact_events: true\ndrop_timeline: true",
	} {
		f.Add(seed)
	}
	td, err := golden.ReadTraces(golden.Dir() + "/cases/events-basic.otlp.json")
	if err != nil {
		f.Fatal(err)
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
		p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(Type), cfg, consumertest.NewNop())
		if err != nil {
			t.Fatalf("a valid config failed to build: %v", err)
		}
		if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
			t.Fatal(err)
		}
		in := ptrace.NewTraces()
		td.CopyTo(in)
		if err := p.ConsumeTraces(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		if err := p.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
