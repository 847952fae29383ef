package view

import (
	"math"
	"testing"

	"github.com/lightstep/go-expohisto/structure"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// TestQuantileWithinBucketWidth fills an exponential histogram with known values and checks the
// quantiles against the exact ones, within the histogram's relative bucket width.
func TestQuantileWithinBucketWidth(t *testing.T) {
	var h structure.Histogram[float64]
	h.Init(structure.NewConfig(structure.WithMaxSize(160)))
	var vals []float64
	for i := 1; i <= 1000; i++ {
		v := 0.010 + 0.00004*float64(i) // 10 ms .. 50 ms
		vals = append(vals, v)
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
	width := math.Exp2(math.Exp2(-float64(h.Scale()))) - 1
	for _, q := range []float64{0.5, 0.9, 0.99} {
		exact := vals[int(q*1000)-1]
		if got := Quantile(dp, q); math.Abs(got-exact)/exact > width {
			t.Errorf("p%v = %v, exact %v, relative bucket width %v", q*100, got, exact, width)
		}
	}
	if !math.IsNaN(Quantile(pmetric.NewExponentialHistogramDataPoint(), 0.5)) {
		t.Error("an empty point has no quantile")
	}
}
