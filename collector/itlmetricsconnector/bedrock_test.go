package itlmetricsconnector

import (
	"math"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

// TestBotocoreBedrock feeds the spans written from the Python botocore instrumentation's Bedrock
// Runtime extension (testdata/written/botocore-bedrock-*: ConverseStream beside an S3 GetObject,
// a Claude model's InvokeModelWithResponseStream) to the connector: each Bedrock call is one chat
// of provider aws.bedrock, with the span's duration and its output tokens, and no time to first
// chunk (none is written); the S3 call gives no point at all.
func TestBotocoreBedrock(t *testing.T) {
	md, cases := writtenMetrics(t, 2, func(name string) bool { return strings.HasPrefix(name, "botocore-bedrock-") })
	want := map[string]golden.WrittenExpected{}
	for _, wc := range cases {
		want[*wc.Expected.Model] = wc.Expected
	}
	dur := histPoints(md, itlconv.Duration.Name)
	tok := histPoints(md, itlconv.TokenUsage.Name)
	for model, w := range want {
		dp, ok := dur[dpKey{model: model}]
		if !ok || dp.Count() != 1 || math.Abs(dp.Sum()-w.DurationS[0]) > 1e-9 {
			t.Errorf("%s: duration present %v, count %d, sum %v; want one of %v", model, ok, count(dp, ok), dp.Sum(), w.DurationS[0])
		} else if p := str(dp.Attributes(), "gen_ai.provider.name"); p != "aws.bedrock" {
			t.Errorf("%s: provider %q, want aws.bedrock", model, p)
		}
		if dp, ok := tok[dpKey{model, "gen_ai.token.type", "output"}]; !ok || int64(dp.Sum()) != *w.OutputTokens {
			t.Errorf("%s: output tokens present %v, sum %v; want %d", model, ok, dp.Sum(), *w.OutputTokens)
		}
	}
	if n := len(histPoints(md, itlconv.TimeToFirstChunk.Name)); n != 0 {
		t.Errorf("%d time-to-first-chunk points, from spans that carry none", n)
	}
	pwalk.Metrics(md, func(m pmetric.Metric) {
		forPoints(m, func(attrs map[string]any) {
			if _, ok := want[attrs["gen_ai.request.model"].(string)]; !ok {
				t.Errorf("%s: a point of model %v: the S3 call counted", m.Name(), attrs["gen_ai.request.model"])
			}
			if op := attrs["gen_ai.operation.name"]; op != "chat" {
				t.Errorf("%s: a point with gen_ai.operation.name %v, want chat", m.Name(), op)
			}
		})
	})
}
