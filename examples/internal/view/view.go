// Package view reads the itl_metrics connector's output for the examples: quantiles from
// exponential histograms, a per-model table and a terminal histogram of the gaps.
package view

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/itlconv"
)

// Quantile estimates the q-quantile of an exponential histogram point, interpolating linearly
// inside the bucket that holds the rank. Its relative error is bounded by the bucket width.
func Quantile(dp pmetric.ExponentialHistogramDataPoint, q float64) float64 {
	n := dp.Count()
	if n == 0 {
		return math.NaN()
	}
	rank := q * float64(n)
	if rank <= float64(dp.ZeroCount()) {
		return 0
	}
	seen := float64(dp.ZeroCount())
	base := math.Exp2(math.Exp2(-float64(dp.Scale())))
	pos := dp.Positive()
	for i := range pos.BucketCounts().Len() {
		c := float64(pos.BucketCounts().At(i))
		if c == 0 {
			continue
		}
		if seen+c >= rank {
			idx := float64(int(pos.Offset()) + i)
			lo, hi := math.Pow(base, idx), math.Pow(base, idx+1)
			if dp.HasMin() {
				lo = math.Max(lo, dp.Min())
			}
			if dp.HasMax() {
				hi = math.Min(hi, dp.Max())
			}
			return lo + (hi-lo)*(rank-seen)/c
		}
		seen += c
	}
	return dp.Max()
}

// Merge adds the observations of src to dst, two points of one exponential histogram metric (as
// the connector writes for one model under different attributes, such as with and without a
// response model): the finer of the two scales is brought down to the coarser one, and the bucket
// counts added.
func Merge(dst, src pmetric.ExponentialHistogramDataPoint) {
	if src.Count() == 0 {
		return
	}
	if dst.Count() == 0 {
		src.CopyTo(dst)
		return
	}
	scale := min(dst.Scale(), src.Scale())
	counts := map[int32]uint64{}
	lo, hi := int32(math.MaxInt32), int32(math.MinInt32)
	for _, dp := range []pmetric.ExponentialHistogramDataPoint{dst, src} {
		shift := dp.Scale() - scale
		pos := dp.Positive()
		for i := range pos.BucketCounts().Len() {
			c := pos.BucketCounts().At(i)
			if c == 0 {
				continue
			}
			idx := (pos.Offset() + int32(i)) >> shift // bucket i at scale s is bucket i>>k at scale s-k
			counts[idx] += c
			lo, hi = min(lo, idx), max(hi, idx)
		}
	}
	if dst.HasMin() && src.HasMin() {
		dst.SetMin(math.Min(dst.Min(), src.Min()))
	}
	if dst.HasMax() && src.HasMax() {
		dst.SetMax(math.Max(dst.Max(), src.Max()))
	}
	dst.SetCount(dst.Count() + src.Count())
	dst.SetSum(dst.Sum() + src.Sum())
	dst.SetZeroCount(dst.ZeroCount() + src.ZeroCount())
	dst.SetScale(scale)
	pos := dst.Positive()
	pos.BucketCounts().FromRaw(nil)
	if len(counts) == 0 {
		pos.SetOffset(0)
		return
	}
	pos.SetOffset(lo)
	for idx := lo; idx <= hi; idx++ {
		pos.BucketCounts().Append(counts[idx])
	}
}

// Series is one model's figures.
type Series struct {
	Provider, Model string
	Generations     uint64
	TTFT, Gap, TPOT pmetric.ExponentialHistogramDataPoint
	OutputTokens    float64
	Stalls          int64
}

// str is the value of attribute k, "" when absent.
func str(a pcommon.Map, k attribute.Key) string {
	if v, ok := a.Get(string(k)); ok {
		return v.AsString()
	}
	return ""
}

// Collect gathers the series of a cumulative snapshot by provider and model.
func Collect(md pmetric.Metrics) []*Series {
	by := map[string]*Series{}
	get := func(a pcommon.Map) *Series {
		prov, model := str(a, semconv.GenAIProviderNameKey), str(a, semconv.GenAIRequestModelKey)
		k := prov + "/" + model
		s, ok := by[k]
		if !ok {
			s = &Series{Provider: prov, Model: model,
				TTFT: pmetric.NewExponentialHistogramDataPoint(), Gap: pmetric.NewExponentialHistogramDataPoint(), TPOT: pmetric.NewExponentialHistogramDataPoint()}
			by[k] = s
		}
		return s
	}
	pwalk.Metrics(md, func(m pmetric.Metric) {
		switch m.Type() {
		case pmetric.MetricTypeExponentialHistogram:
			dps := m.ExponentialHistogram().DataPoints()
			for d := range dps.Len() {
				dp := dps.At(d)
				s := get(dp.Attributes())
				switch m.Name() {
				case itlconv.TimeToFirstChunk.Name:
					Merge(s.TTFT, dp)
				case itlconv.TimePerOutputChunk.Name:
					Merge(s.Gap, dp)
				case itlconv.TimePerOutputToken.Name:
					Merge(s.TPOT, dp)
				case itlconv.Duration.Name:
					s.Generations += dp.Count()
				case itlconv.TokenUsage.Name:
					if t, _ := dp.Attributes().Get(string(semconv.GenAITokenTypeKey)); t.Str() == itlconv.TokenTypeOutput {
						s.OutputTokens += dp.Sum()
					}
				}
			}
		case pmetric.MetricTypeSum:
			if m.Name() == itlconv.Stalls.Name {
				dps := m.Sum().DataPoints()
				for d := range dps.Len() {
					get(dps.At(d).Attributes()).Stalls += dps.At(d).IntValue()
				}
			}
		}
	})
	out := make([]*Series, 0, len(by))
	for _, s := range by {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Provider+out[i].Model < out[j].Provider+out[j].Model })
	return out
}

// Duration renders seconds for a reader: milliseconds below a second ("13.5 ms", "243 ms"),
// seconds above ("1.27 s", "14.1 s"), three significant digits; "-" for NaN (no observation).
func Duration(seconds float64) string {
	switch {
	case math.IsNaN(seconds):
		return "-"
	case math.Abs(seconds) < 0.9995: // rounds to at most 999 ms
		return sig3(seconds*1000) + " ms"
	default:
		return sig3(seconds) + " s"
	}
}

// sig3 prints v with three significant digits and no exponent (at least the units).
func sig3(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 99.95:
		return fmt.Sprintf("%.0f", v)
	case a >= 9.995:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// Table prints one row per model; elapsed is the wall time the figures cover, for tokens/s.
func Table(w io.Writer, series []*Series, elapsed time.Duration) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "provider/model\tgenerations\tTTFT p50\tTTFT p99\tITL p50\tITL p99\tTPOT p50\tout tok/s\tstalls\t")
	for _, s := range series {
		fmt.Fprintf(tw, "%s/%s\t%d\t%s\t%s\t%s\t%s\t%s\t%.0f\t%d\t\n", s.Provider, s.Model, s.Generations,
			Duration(Quantile(s.TTFT, 0.5)), Duration(Quantile(s.TTFT, 0.99)),
			Duration(Quantile(s.Gap, 0.5)), Duration(Quantile(s.Gap, 0.99)),
			Duration(Quantile(s.TPOT, 0.5)), s.OutputTokens/elapsed.Seconds(), s.Stalls)
	}
	_ = tw.Flush()
}

// GapHistogram prints the distribution of every gap as a bar chart on fixed display bins.
func GapHistogram(w io.Writer, series []*Series) {
	edges := []float64{0.010, 0.015, 0.020, 0.025, 0.030, 0.040, 0.050, 0.075, 0.100, 0.250, 0.500, 1.0}
	counts := make([]float64, len(edges)+1)
	var total float64
	for _, s := range series {
		dp := s.Gap
		if dp.Count() == 0 {
			continue
		}
		base := math.Exp2(math.Exp2(-float64(dp.Scale())))
		pos := dp.Positive()
		for i := range pos.BucketCounts().Len() {
			c := float64(pos.BucketCounts().At(i))
			if c == 0 {
				continue
			}
			idx := float64(int(pos.Offset()) + i)
			mid := math.Sqrt(math.Pow(base, idx) * math.Pow(base, idx+1))
			b := sort.SearchFloat64s(edges, mid)
			counts[b] += c
			total += c
		}
		counts[0] += float64(dp.ZeroCount())
		total += float64(dp.ZeroCount())
	}
	if total == 0 {
		fmt.Fprintln(w, "no gaps recorded")
		return
	}
	peak := 0.0
	for _, c := range counts {
		peak = math.Max(peak, c)
	}
	label := func(i int) string {
		var l string
		switch {
		case i == 0:
			l = fmt.Sprintf("< %.0f ms", edges[0]*1000)
		case i == len(edges):
			l = fmt.Sprintf(">= %.0f ms", edges[i-1]*1000)
		default:
			l = fmt.Sprintf("%.0f - %.0f ms", edges[i-1]*1000, edges[i]*1000)
		}
		return fmt.Sprintf("%15s", l)
	}
	fmt.Fprintf(w, "inter-chunk gaps (ITL), %d gaps:\n", uint64(total))
	for i, c := range counts {
		bar := strings.Repeat("█", int(math.Round(40*c/peak)))
		if c > 0 && bar == "" {
			bar = "▏"
		}
		fmt.Fprintf(w, "  %s │%-40s %6.1f%%\n", label(i), bar, 100*c/total)
	}
}

// Count writes n and the noun, in the plural unless n is 1: "1 generation", "16 generations".
func Count[N int | int64 | uint64](n N, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
