package itlmetricsconnector

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/itlconv"
)

// TestPythonContribProviders feeds the spans written from opentelemetry-python-contrib's
// google-genai and vertexai instrumentations (testdata/written/google-genai, vertexai), whose
// gen_ai.system is "vertex_ai", the conventions' name before gcp.vertex_ai, to the connector: each
// is one model call, and every point is under gen_ai.provider.name gcp.vertex_ai, with the other
// instrumentations' Vertex AI calls. Before, "vertex_ai" was carried as written.
func TestPythonContribProviders(t *testing.T) {
	md, _ := writtenMetrics(t, 2, func(name string) bool { return name == "google-genai" || name == "vertexai" })
	// google-genai's call is a generate_content, vertexai's a chat: a point each.
	ops := map[any]uint64{}
	forMetric(md, itlconv.Duration.Name, func(m pmetric.Metric) {
		for i := range m.Histogram().DataPoints().Len() {
			dp := m.Histogram().DataPoints().At(i)
			ops[dp.Attributes().AsRaw()["gen_ai.operation.name"]] += dp.Count()
		}
	})
	if len(ops) != 2 || ops["generate_content"] != 1 || ops["chat"] != 1 {
		t.Errorf("%s: observations by operation %v, want one generate_content and one chat", itlconv.Duration.Name, ops)
	}
	pwalk.Metrics(md, func(m pmetric.Metric) {
		forPoints(m, func(attrs map[string]any) {
			if p := attrs["gen_ai.provider.name"]; p != "gcp.vertex_ai" {
				t.Errorf("%s: a point with gen_ai.provider.name %v, want gcp.vertex_ai", m.Name(), p)
			}
		})
	})
}
