package itlmetricsconnector

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/otelitl/itl/collector/internal/doccheck"
	"github.com/otelitl/itl/itlconv"
)

// TestREADME: the README documents every configuration key, every metric the connector emits and
// every instrument of its own telemetry.
func TestREADME(t *testing.T) {
	set := connectortest.NewNopSettings(Type)
	in := &doccheck.Instruments{}
	set.TelemetrySettings.MeterProvider = in
	if _, err := NewFactory().CreateTracesToMetrics(context.Background(), set, createDefaultConfig(), consumertest.NewNop()); err != nil {
		t.Fatal(err)
	}
	if len(in.Names()) < 3 {
		t.Fatalf("only %d instruments recorded: %v", len(in.Names()), in.Names())
	}
	words := in.Names()
	for _, k := range doccheck.Keys(createDefaultConfig()) {
		if strings.HasPrefix(k, "histogram.explicit.buckets.") {
			continue // documented as histogram.explicit.buckets.<metric>, with every metric's key
		}
		words = append(words, k)
	}
	for _, m := range metricDefs {
		words = append(words, m.Name, m.key)
	}
	words = append(words, itlconv.Stalls.Name, itlconv.Generations.Name, itlconv.TimingKey)
	if len(words) < 30 {
		t.Fatalf("only %d words to look for: the key walk found too little", len(words))
	}
	missing, err := doccheck.Missing("README.md", words)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range missing {
		t.Errorf("README.md does not mention `%s`", w)
	}
}
