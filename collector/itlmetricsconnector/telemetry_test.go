package itlmetricsconnector

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelitl/itl/internal/golden"
)

// TestTelemetryNamesTheInstance: two itl_metrics connectors in one collector count apart, each
// under its id; before, their counts merged into one series.
func TestTelemetryNamesTheInstance(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	run := func(name, golden string) {
		set := connectortest.NewNopSettings(Type)
		set.ID = component.NewIDWithName(Type, name)
		set.TelemetrySettings = tel.NewTelemetrySettings()
		c, err := NewFactory().CreateTracesToMetrics(context.Background(), set, createDefaultConfig(), consumertest.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		if err := c.ConsumeTraces(context.Background(), goldenTraces(t, golden)); err != nil {
			t.Fatal(err)
		}
	}
	run("a", "malformed-decreasing")
	run("a", "malformed-length")
	run("b", "events-basic")
	m, err := tel.GetMetric("otelcol_connector_itl_metrics_spans_malformed")
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]int64{}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		v, _ := dp.Attributes.Value("connector")
		by[v.AsString()] += dp.Value
	}
	if by["itl_metrics/a"] != 2 || len(by) != 1 {
		t.Errorf("malformed spans by connector: %v, want itl_metrics/a: 2 alone", by)
	}
}

func goldenTraces(t *testing.T, name string) ptrace.Traces {
	t.Helper()
	td, err := golden.ReadTraces(golden.Dir() + "/cases/" + name + ".otlp.json")
	if err != nil {
		t.Fatal(err)
	}
	return td
}
