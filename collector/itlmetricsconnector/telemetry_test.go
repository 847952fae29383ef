package itlmetricsconnector

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
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

// ownTelemetry reads one of the connector's own instruments: its value by the reason attribute
// ("" when it has none).
func ownTelemetry(t *testing.T, c *itlMetrics, name string) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	r, _ := testReaders.Load(c)
	if err := r.(*sdkmetric.ManualReader).Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	by := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			var dps []metricdata.DataPoint[int64]
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				dps = d.DataPoints
			case metricdata.Gauge[int64]:
				dps = d.DataPoints
			default:
				t.Fatalf("%s: %T", name, m.Data)
			}
			for _, dp := range dps {
				if v, ok := dp.Attributes.Value("connector"); !ok || !strings.HasPrefix(v.AsString(), "itl_metrics") {
					t.Errorf("%s: connector attribute %q", name, v.AsString())
				}
				v, _ := dp.Attributes.Value("reason")
				by[v.AsString()] += dp.Value
			}
		}
	}
	return by
}

// TestBoundingIsCounted: every value the connector records in a bounded form is counted by why,
// where before it was cut or folded into _OTHER without a trace: a model name longer than
// dimension_value_max_length, an error.type longer than its bound, and error types past the most
// a series keeps.
func TestBoundingIsCounted(t *testing.T) {
	c := newTestConnector(t, func(cfg *Config) { cfg.DimensionValueMaxLength = 16 }, consumertest.NewNop())
	td := ptrace.NewTraces()
	genSpan(td, strings.Repeat("m", 17), 1, 100, 10) // cut
	genSpan(td, strings.Repeat("m", 16), 2, 100, 10) // at the bound: kept whole
	genSpan(td, strings.Repeat("m", 17), 3, 100, 10) // cut again: each value counts
	long := genSpanWith(td, "n", 4)
	long.Attributes().PutStr("error.type", strings.Repeat("e", itlconv.MaxErrorTypeLength+1))
	for i := range 20 { // one series, 20 error types: 15 kept, the 16th slot is _OTHER
		s := genSpanWith(td, "o", byte(10+i))
		s.Attributes().PutStr("error.type", fmt.Sprintf("invented-%d", i))
	}
	if err := c.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	got := ownTelemetry(t, c, "otelcol_connector_itl_metrics_values_bounded")
	want := map[string]int64{"dimension_value_truncated": 2, "error_type_truncated": 1, "error_type_other": 20 - (maxErrorTypes - 1)}
	if !maps.Equal(got, want) {
		t.Errorf("values bounded by reason: %v, want %v", got, want)
	}
	if got := ownTelemetry(t, c, "otelcol_connector_itl_metrics_spans_recorded"); got[""] != 24 {
		t.Errorf("spans recorded: %v, want 24", got)
	}
}

// TestSeriesGaugeAndExpiry: the series gauge follows the series held, and the series that
// metrics_expiration drops are counted, where before a series vanished without a count.
func TestSeriesGaugeAndExpiry(t *testing.T) {
	c := newTestConnector(t, func(cfg *Config) { cfg.MetricsExpiration = time.Nanosecond }, consumertest.NewNop())
	td := ptrace.NewTraces()
	for i := range 3 {
		genSpan(td, fmt.Sprint("model-", i), byte(i), 100, 10)
	}
	td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("not a model call")
	if err := c.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	if got := ownTelemetry(t, c, "otelcol_connector_itl_metrics_series_held"); got[""] != 3 {
		t.Errorf("series gauge %v, want 3", got)
	}
	if got := ownTelemetry(t, c, "otelcol_connector_itl_metrics_spans_recorded"); got[""] != 3 {
		t.Errorf("spans recorded %v, want 3: the span that is no model call is not counted", got)
	}
	time.Sleep(time.Millisecond)
	if err := c.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := ownTelemetry(t, c, "otelcol_connector_itl_metrics_series_expired"); got[""] != 3 {
		t.Errorf("series expired %v, want 3", got)
	}
	if got := ownTelemetry(t, c, "otelcol_connector_itl_metrics_series_held"); got[""] != 0 {
		t.Errorf("series gauge after expiry %v, want 0", got)
	}
}

// genSpanWith adds a model call of one chunk gap to td and returns it.
func genSpanWith(td ptrace.Traces, model string, traceByte byte) ptrace.Span {
	genSpan(td, model, traceByte, 100, 10)
	rs := td.ResourceSpans()
	return rs.At(rs.Len() - 1).ScopeSpans().At(0).Spans().At(0)
}

// TestConsumeTracesAllocatesNothing: recording spans into series that exist allocates nothing,
// own telemetry included, where counting the spans recorded made a slice of options per call; and
// so does the check for nested model calls of a request of more than 16, which indexed them in a
// map made per request.
func TestConsumeTracesAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts mean nothing under the race detector")
	}
	c := newTestConnector(t, nil, consumertest.NewNop())
	td := ptrace.NewTraces()
	for i := range 40 {
		genSpan(td, "m", byte(i), 100, 10, 12, 9)
	}
	consume := func() {
		if err := c.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	if n := testing.AllocsPerRun(20, consume); n != 0 {
		t.Errorf("ConsumeTraces allocated %v times a call", n)
	}
}
