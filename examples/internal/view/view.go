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

// Series is one model's figures.
type Series struct {
	Provider, Model string
	Generations     uint64
	TTFT, Gap, TPOT pmetric.ExponentialHistogramDataPoint
	OutputTokens    float64
	Stalls          int64
}

// Collect gathers the series of a cumulative snapshot by provider and model.
func Collect(md pmetric.Metrics) []*Series {
	by := map[string]*Series{}
	get := func(a pcommon.Map) *Series {
		prov, _ := a.Get(string(semconv.GenAIProviderNameKey))
		model, _ := a.Get(string(semconv.GenAIRequestModelKey))
		k := prov.AsString() + "/" + model.AsString()
		s, ok := by[k]
		if !ok {
			s = &Series{Provider: prov.AsString(), Model: model.AsString(),
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
					dp.CopyTo(s.TTFT)
				case itlconv.TimePerOutputChunk.Name:
					dp.CopyTo(s.Gap)
				case string(itlconv.TPOTKey):
					dp.CopyTo(s.TPOT)
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

func ms(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.0f ms", v*1000)
}

// Table prints one row per model; elapsed is the wall time the figures cover, for tokens/s.
func Table(w io.Writer, series []*Series, elapsed time.Duration) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "provider/model\tgenerations\tTTFT p50\tTTFT p99\tITL p50\tITL p99\tTPOT p50\tout tok/s\tstalls\t")
	for _, s := range series {
		fmt.Fprintf(tw, "%s/%s\t%d\t%s\t%s\t%s\t%s\t%s\t%.0f\t%d\t\n", s.Provider, s.Model, s.Generations,
			ms(Quantile(s.TTFT, 0.5)), ms(Quantile(s.TTFT, 0.99)),
			ms(Quantile(s.Gap, 0.5)), ms(Quantile(s.Gap, 0.99)),
			ms(Quantile(s.TPOT, 0.5)), s.OutputTokens/elapsed.Seconds(), s.Stalls)
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
