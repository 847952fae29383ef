package view

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lightstep/go-expohisto/structure"
	"go.opentelemetry.io/collector/pdata/pmetric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/itlconv"
)

// point records vals in an exponential histogram of 160 buckets, as the connector does.
func point(vals []float64) pmetric.ExponentialHistogramDataPoint {
	var h structure.Histogram[float64]
	h.Init(structure.NewConfig(structure.WithMaxSize(160)))
	for _, v := range vals {
		h.Update(v)
	}
	dp := pmetric.NewExponentialHistogramDataPoint()
	dp.SetCount(h.Count())
	dp.SetSum(h.Sum())
	dp.SetMin(h.Min())
	dp.SetMax(h.Max())
	dp.SetScale(h.Scale())
	dp.SetZeroCount(h.ZeroCount())
	dp.Positive().SetOffset(h.Positive().Offset())
	for i := uint32(0); i < h.Positive().Len(); i++ {
		dp.Positive().BucketCounts().Append(h.Positive().At(i))
	}
	return dp
}

// checkQuantiles compares the quantiles of dp with the exact ones of the sorted vals, within the
// point's relative bucket width.
func checkQuantiles(t *testing.T, dp pmetric.ExponentialHistogramDataPoint, vals []float64) {
	t.Helper()
	width := math.Exp2(math.Exp2(-float64(dp.Scale()))) - 1
	for _, q := range []float64{0.5, 0.9, 0.99} {
		exact := vals[int(q*float64(len(vals)))-1]
		if got := Quantile(dp, q); math.Abs(got-exact)/exact > width {
			t.Errorf("p%v = %v, exact %v, relative bucket width %v", q*100, got, exact, width)
		}
	}
}

// TestQuantileWithinBucketWidth fills an exponential histogram with known values and checks the
// quantiles against the exact ones, within the histogram's relative bucket width.
func TestQuantileWithinBucketWidth(t *testing.T) {
	var vals []float64
	for i := 1; i <= 1000; i++ {
		vals = append(vals, 0.010+0.00004*float64(i)) // 10 ms .. 50 ms
	}
	checkQuantiles(t, point(vals), vals)
	if !math.IsNaN(Quantile(pmetric.NewExponentialHistogramDataPoint(), 0.5)) {
		t.Error("an empty point has no quantile")
	}
}

func TestDuration(t *testing.T) {
	for v, want := range map[float64]string{
		0.0004: "0.40 ms", 0.0135: "13.5 ms", 0.2433: "243 ms", 0.9994: "999 ms", 0.9996: "1.00 s",
		1.2715: "1.27 s", 14.1045: "14.1 s", 250: "250 s", math.NaN(): "-",
	} {
		if got := Duration(v); got != want {
			t.Errorf("Duration(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestMerge merges two points of different scales (a narrow range of gaps and a wide one) and
// checks the counts and the quantiles of the union.
func TestMerge(t *testing.T) {
	var a, b []float64
	for i := 1; i <= 600; i++ {
		a = append(a, 0.015+0.00001*float64(i)) // 15 ms .. 21 ms: a fine scale
	}
	for i := 1; i <= 400; i++ {
		b = append(b, 0.010*math.Pow(1.01, float64(i))) // 10 ms .. 0.5 s: a coarser one
	}
	pa, pb := point(a), point(b)
	if pa.Scale() == pb.Scale() {
		t.Fatalf("both points have scale %d; the test needs two", pa.Scale())
	}
	m := pmetric.NewExponentialHistogramDataPoint()
	Merge(m, pa)
	Merge(m, pb)
	all := append(slices.Clone(a), b...)
	slices.Sort(all)
	if m.Count() != 1000 || m.Scale() != min(pa.Scale(), pb.Scale()) || m.Min() != all[0] || m.Max() != all[len(all)-1] {
		t.Errorf("merged: count %d scale %d min %v max %v", m.Count(), m.Scale(), m.Min(), m.Max())
	}
	var n uint64
	for i := range m.Positive().BucketCounts().Len() {
		n += m.Positive().BucketCounts().At(i)
	}
	if n != 1000 || math.Abs(m.Sum()-(pa.Sum()+pb.Sum())) > 1e-9 {
		t.Errorf("the buckets hold %d observations, sum %v", n, m.Sum())
	}
	checkQuantiles(t, m, all)
}

// TestCollectMergesAttributes: the connector writes one point per attribute set, such as with and
// without a response model (a cancelled generation has none); a model's row covers them all.
func TestCollectMergesAttributes(t *testing.T) {
	md := pmetric.NewMetrics()
	m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName(itlconv.TimePerOutputChunk.Name)
	dps := m.SetEmptyExponentialHistogram().DataPoints()
	for i, vals := range [][]float64{{0.020, 0.021, 0.022}, {0.030}} {
		dp := dps.AppendEmpty()
		point(vals).CopyTo(dp)
		dp.Attributes().PutStr(string(semconv.GenAIProviderNameKey), "openai")
		dp.Attributes().PutStr(string(semconv.GenAIRequestModelKey), "gpt-4o")
		if i == 0 {
			dp.Attributes().PutStr(string(semconv.GenAIResponseModelKey), "gpt-4o-2024-08-06")
		}
	}
	series := Collect(md)
	if len(series) != 1 || series[0].Gap.Count() != 4 {
		t.Fatalf("want one series of 4 gaps, got %d series, the first with %d", len(series), series[0].Gap.Count())
	}
}

// TestTableAligned: a long model name and figures of every width keep the columns in line.
func TestTableAligned(t *testing.T) {
	gaps := point([]float64{0.0135, 0.02, 0.4})
	series := []*Series{
		{Provider: "openai", Model: "gpt-4o", Generations: 3, TTFT: point([]float64{0.2, 0.3}), Gap: gaps, TPOT: gaps, OutputTokens: 600, Stalls: 1},
		{Provider: "aws.bedrock", Model: "anthropic.claude-3-7-sonnet-20250219-v1:0", Generations: 1234, TTFT: point([]float64{7.5, 14.2}),
			Gap: gaps, TPOT: gaps, OutputTokens: 123456, Stalls: 10234},
		{Provider: "vllm", Model: "x", TTFT: pmetric.NewExponentialHistogramDataPoint(), Gap: pmetric.NewExponentialHistogramDataPoint(), TPOT: pmetric.NewExponentialHistogramDataPoint()},
	}
	var b strings.Builder
	Table(&b, series, 10*time.Second)
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	for _, l := range lines[1:] {
		if utf8.RuneCountInString(l) != utf8.RuneCountInString(lines[0]) {
			t.Fatalf("the columns do not line up:\n%s", b.String())
		}
	}
	if !strings.Contains(b.String(), "s ") || !strings.Contains(b.String(), " ms") {
		t.Errorf("durations not in ms and s:\n%s", b.String())
	}
}

func TestCount(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Count(0, "level"), "0 levels"}, {Count(1, "level"), "1 level"}, {Count(int64(16), "generation"), "16 generations"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
