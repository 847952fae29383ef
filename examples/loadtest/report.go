package main

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/otelitl/itl/examples/internal/view"
)

// levelFigures are one concurrency level's figures, from the derived metrics.
type levelFigures struct {
	Concurrency           int
	Generations           uint64
	TTFTp50, TTFTp99      float64
	GapP50, GapP99        float64
	Stalls                int64
	OutputTokensPerSecond float64
}

// columns are the table's, in the terminal and in the report alike.
var columns = []string{"concurrency", "generations", "TTFT p50", "TTFT p99", "gap p50", "gap p99", "stalls", "output tokens/s"}

// row is l's cells under columns.
func (l levelFigures) row() []string {
	return []string{strconv.Itoa(l.Concurrency), strconv.FormatUint(l.Generations, 10), view.Duration(l.TTFTp50), view.Duration(l.TTFTp99),
		view.Duration(l.GapP50), view.Duration(l.GapP99), strconv.FormatInt(l.Stalls, 10), fmt.Sprintf("%.0f", l.OutputTokensPerSecond)}
}

// cadence is one generation's TTFT and gaps, in chunk order.
type cadence struct {
	Concurrency int
	TraceID     string
	TTFT        float64 // seconds; NaN when the timeline has none
	Gaps        []float64
}

type reportData struct {
	Levels      []levelFigures
	TTFTs, Gaps []float64 // every TTFT and every gap of the run, seconds
	Slow        cadence   // the generation with the largest gap
	Stall       float64   // the stall threshold, seconds
	MaxBatch    int       // the in-process fakellm's batch limit; 0 for another server
	Config      string
}

var (
	blue  = color.RGBA{R: 66, G: 133, B: 244, A: 255}
	red   = color.RGBA{R: 220, G: 60, B: 40, A: 255}
	grey  = color.Gray{Y: 120}
	dash  = []vg.Length{vg.Points(4), vg.Points(4)}
	width = 6.5 * vg.Inch
)

func init() {
	// The page is set in a sans-serif face, and so are its charts. Liberation Sans has Arial's
	// metrics, so the labels gonum places for it sit where they belong in the faces a browser
	// falls back to (sansFamily).
	plot.DefaultFont.Variant = "Sans"
}

// sansFamily is the font-family the charts' text asks for: gonum names only its own face, which a
// browser without it replaced by its default, a serif.
var sansFamily = []byte("font-family:Liberation Sans,Arimo,Arial,Helvetica,sans-serif")

// render draws p as inline SVG; legend, when it has entries, goes in a margin right of the plot,
// where it covers no data.
func render(p *plot.Plot, legend *plot.Legend, w, h vg.Length) (template.HTML, error) {
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	if legend != nil {
		legend.Padding = vg.Points(4)
		lw := legend.Rectangle(dc).Size().X + vg.Points(24)
		p.Draw(draw.Crop(dc, 0, -lw, 0, 0))
		legend.Top, legend.Left = true, true
		legend.Draw(draw.Crop(dc, w-lw+vg.Points(12), 0, 0, -vg.Points(28)))
	} else {
		p.Draw(dc)
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	out := b.Bytes()
	if i := bytes.Index(out, []byte("<svg")); i > 0 {
		out = out[i:] // drop the XML prolog: the SVG goes inline in the page
	}
	out = bytes.ReplaceAll(out, []byte("font-family:Liberation Sans"), sansFamily)
	return template.HTML(out), nil //nolint:gosec // drawn by gonum/plot from numbers
}

// durationTicks marks a logarithmic axis of seconds at 1, 2 and 5 times each power of ten, labelled
// as a reader writes durations ("20 ms", "1 s"); over more than three decades only the powers of
// ten carry a label.
type durationTicks struct{}

func (durationTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	sparse := hi/lo > 2000
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v < lo*0.999 || v > hi*1.001 {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || !sparse {
				t.Label = tickDuration(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// tickDuration labels a round duration: "0.5 ms", "20 ms", "1 s", "2.5 s".
func tickDuration(seconds float64) string {
	if seconds < 1 {
		return strconv.FormatFloat(math.Round(seconds*1e6)/1e3, 'f', -1, 64) + " ms"
	}
	return strconv.FormatFloat(math.Round(seconds*1e3)/1e3, 'f', -1, 64) + " s"
}

// percentTicks marks a logarithmic axis of percentages at each power of ten.
type percentTicks struct{}

func (percentTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Ceil(math.Log10(lo)); e <= math.Floor(math.Log10(hi)); e++ {
		v := math.Pow(10, e)
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64) + "%"})
	}
	return ticks
}

// countTicks marks an axis of whole numbers, such as chunk numbers, at round steps: 1, 2 or 5 times
// a power of ten, about eight to the axis.
type countTicks struct{}

func (countTicks) Ticks(lo, hi float64) []plot.Tick {
	step := 1.0
	for _, m := range []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000} {
		if step = m; (hi-lo)/m <= 8 {
			break
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	return ticks
}

// fixedTicks marks exactly the given values, such as the concurrency levels.
type fixedTicks []float64

func (f fixedTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for _, v := range f {
		if v >= lo && v <= hi {
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
		}
	}
	return ticks
}

// logBins counts vs into bins evenly spaced on a logarithmic axis, perDecade to a power of ten,
// from the power of ten at or below the smallest value to the one at or above the largest.
// Weights are counts, or percentages of len(vs) when percent is set.
func logBins(vs []float64, perDecade int, percent bool) []plotter.HistogramBin {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		if v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		return nil
	}
	first, last := math.Floor(math.Log10(lo)*float64(perDecade)), math.Ceil(math.Log10(hi)*float64(perDecade))
	if last == first {
		last++
	}
	bins := make([]plotter.HistogramBin, int(last-first))
	for i := range bins {
		bins[i].Min = math.Pow(10, (first+float64(i))/float64(perDecade))
		bins[i].Max = math.Pow(10, (first+float64(i)+1)/float64(perDecade))
	}
	for _, v := range vs {
		if v <= 0 {
			continue
		}
		i := int(math.Floor(math.Log10(v)*float64(perDecade)) - first)
		bins[min(max(i, 0), len(bins)-1)].Weight++
	}
	if percent {
		for i := range bins {
			bins[i].Weight *= 100 / float64(len(vs))
		}
	}
	return bins
}

// durationHistogram is a histogram of durations (seconds) on a logarithmic axis, which shows the
// typical values and the tail alike.
func durationHistogram(title, xlabel string, vs []float64, perDecade int, percent bool) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = "generations"
	bins := logBins(vs, perDecade, percent)
	if len(bins) == 0 {
		return p
	}
	h := &plotter.Histogram{Bins: bins, FillColor: blue, LineStyle: plotter.DefaultLineStyle, LogY: percent}
	h.LineStyle.Width = vg.Points(0.5)
	p.Add(h)
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, durationTicks{}
	if percent {
		// The share is in the title: gonum/plot centres an axis label on the linear midpoint of
		// the range, near the top of a logarithmic axis, and shrinks the plot to fit a long one.
		p.Title.Text += ": share of gaps in each bin"
		p.Y.Label.Text = ""
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, percentTicks{}
		p.Y.Max = 100
	}
	return p
}

// vline draws a dashed vertical line at x across p's current y range, for a threshold.
func vline(p *plot.Plot, x float64) (*plotter.Line, error) {
	l, err := plotter.NewLine(plotter.XYs{{X: x, Y: p.Y.Min}, {X: x, Y: p.Y.Max}})
	if err != nil {
		return nil, err
	}
	l.Color, l.Dashes = grey, dash
	return l, nil
}

// byConcurrency charts the p50 and p99 of a duration against concurrency, both on logarithmic axes,
// with the batch limit marked.
func byConcurrency(title, what string, levels []levelFigures, maxBatch int, p50, p99 func(levelFigures) float64) (*plot.Plot, *plot.Legend, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "concurrent generations"
	p.Y.Label.Text = what
	legend := plot.NewLegend()
	plotted := false
	for _, s := range []struct {
		name string
		f    func(levelFigures) float64
		c    color.Color
	}{{what + " p50", p50, blue}, {what + " p99", p99, red}} {
		var xys plotter.XYs
		for _, l := range levels {
			if v := s.f(l); v > 0 && !math.IsNaN(v) {
				xys = append(xys, plotter.XY{X: float64(l.Concurrency), Y: v})
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, nil, err
		}
		l.Color, pts.Color = s.c, s.c
		p.Add(l, pts)
		legend.Add(s.name, l, pts)
		plotted = true
	}
	if !plotted {
		return p, nil, nil
	}
	var xs fixedTicks
	for _, l := range levels {
		xs = append(xs, float64(l.Concurrency))
	}
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, xs
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, durationTicks{}
	// Pad the ranges so that the first and last points are not on the frame.
	p.X.Min, p.X.Max = p.X.Min/1.2, p.X.Max*1.2
	p.Y.Min, p.Y.Max = p.Y.Min/1.5, p.Y.Max*1.5
	if maxBatch > 0 && float64(maxBatch) > p.X.Min && float64(maxBatch) < p.X.Max {
		l, err := vline(p, float64(maxBatch))
		if err != nil {
			return nil, nil, err
		}
		p.Add(l)
		legend.Add(fmt.Sprintf("batch limit (%d)", maxBatch), l)
	}
	return p, &legend, nil
}

// cadenceStrip charts the gaps of one generation, in chunk order, on a logarithmic axis that shows
// the steady gaps and the stalls alike. Its TTFT, the wait before the first chunk, is not a gap
// between chunks: the title gives it.
func cadenceStrip(s cadence, stall float64) (*plot.Plot, *plot.Legend, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Cadence of the generation with the largest gap (concurrency %d, TTFT %s, trace %s)",
		s.Concurrency, view.Duration(s.TTFT), s.TraceID)
	p.X.Label.Text = "chunk number: each point is the gap since the chunk before (chunk 1 came at the TTFT)"
	p.Y.Label.Text = "gap"
	legend := plot.NewLegend()
	if len(s.Gaps) == 0 {
		return p, nil, nil
	}
	var line, stalls plotter.XYs
	for i, g := range s.Gaps {
		xy := plotter.XY{X: float64(i + 2), Y: math.Max(g, 1e-4)} // gap i comes before chunk i+2; a log axis has no 0
		line = append(line, xy)
		if g > stall {
			stalls = append(stalls, xy)
		}
	}
	l, err := plotter.NewLine(line)
	if err != nil {
		return nil, nil, err
	}
	l.Color = blue
	p.Add(l)
	legend.Add("gap", l)
	p.X.Tick.Marker = countTicks{}
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, durationTicks{}
	p.Y.Min, p.Y.Max = math.Min(p.Y.Min, stall)/1.5, math.Max(p.Y.Max, stall)*1.5
	thr, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: stall}, {X: p.X.Max, Y: stall}})
	if err != nil {
		return nil, nil, err
	}
	thr.Color, thr.Dashes = grey, dash
	p.Add(thr)
	legend.Add("stall threshold ("+view.Duration(stall)+")", thr)
	if len(stalls) > 0 {
		sc, err := plotter.NewScatter(stalls)
		if err != nil {
			return nil, nil, err
		}
		sc.GlyphStyle.Color, sc.GlyphStyle.Radius, sc.GlyphStyle.Shape = red, vg.Points(3.5), draw.CircleGlyph{}
		p.Add(sc)
		legend.Add(fmt.Sprintf("stall (%d)", len(stalls)), sc)
	}
	return p, &legend, nil
}

// writeReport draws the charts with gonum/plot and writes the HTML page.
func writeReport(w io.Writer, d reportData) error {
	type chart struct {
		p      *plot.Plot
		legend *plot.Legend
		w, h   vg.Length
	}
	var charts []chart

	ttft := durationHistogram("Time to first chunk (TTFT), every generation", "TTFT (log scale)", d.TTFTs, 10, false)
	charts = append(charts, chart{ttft, nil, width, 3.5 * vg.Inch})

	// The threshold line is named in the axis title: a legend beside this chart would take a third
	// of its width from 20 bins a decade.
	gaps := durationHistogram("Gaps between chunks, every gap", "gap (log scale); dashed: stall threshold ("+view.Duration(d.Stall)+")", d.Gaps, 20, true)
	if len(d.Gaps) > 0 {
		l, err := vline(gaps, d.Stall)
		if err != nil {
			return err
		}
		gaps.Add(l)
	}
	charts = append(charts, chart{gaps, nil, width, 3.5 * vg.Inch})

	for _, c := range []struct {
		title, what string
		p50, p99    func(levelFigures) float64
	}{
		{"TTFT p50 and p99 against concurrency", "TTFT", func(l levelFigures) float64 { return l.TTFTp50 }, func(l levelFigures) float64 { return l.TTFTp99 }},
		{"Gap p50 and p99 against concurrency", "gap", func(l levelFigures) float64 { return l.GapP50 }, func(l levelFigures) float64 { return l.GapP99 }},
	} {
		p, legend, err := byConcurrency(c.title, c.what, d.Levels, d.MaxBatch, c.p50, c.p99)
		if err != nil {
			return err
		}
		charts = append(charts, chart{p, legend, width, 3.5 * vg.Inch})
	}

	strip, legend, err := cadenceStrip(d.Slow, d.Stall)
	if err != nil {
		return err
	}
	charts = append(charts, chart{strip, legend, 2 * width, 3.5 * vg.Inch})

	type figure struct {
		SVG  template.HTML
		Wide bool // scrolls in a narrow window, where shrinking would make its labels unreadable
	}
	var figures []figure
	for _, c := range charts {
		s, err := render(c.p, c.legend, c.w, c.h)
		if err != nil {
			return err
		}
		figures = append(figures, figure{s, c.w > width})
	}
	rows := make([][]string, len(d.Levels))
	for i, l := range d.Levels {
		rows[i] = l.row()
	}
	return page.Execute(w, struct {
		reportData
		Columns []string
		Rows    [][]string
		Charts  []figure
	}{d, columns, rows, figures})
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{"duration": view.Duration}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>otelitl load test report</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1300px}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 10px;text-align:right;white-space:nowrap}th{white-space:normal}.scroll{overflow-x:auto;max-width:100%}figure{display:inline-block;margin:1em 1em 0 0;max-width:100%}figure svg{max-width:100%;height:auto}figure.wide{display:block}figure.wide svg{max-width:none;min-width:900px;width:100%}dt{font-weight:bold;display:inline}dd{display:inline;margin:0 1.5em 0 .3em}@media (max-width:900px){body{margin:1em}td,th{padding:4px 6px}}</style>
</head><body>
<h1>otelitl load test</h1>
<p>{{.Config}}. The table comes from the itl_metrics connector's metrics; the charts from the generation spans' timelines.</p>
<dl><dt>TTFT</dt><dd>time to first chunk: queueing and prefill</dd><dt>gap</dt><dd>time between two chunks (inter-token latency), one per gap</dd><dt>stalls</dt><dd>gaps above {{duration .Stall}}</dd></dl>
<div class="scroll"><table><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table></div>
{{range $i, $c := .Charts}}{{if $c.Wide}}<div class="scroll"><figure class="chart wide" id="chart-{{$i}}">{{$c.SVG}}</figure></div>{{else}}<figure class="chart" id="chart-{{$i}}">{{$c.SVG}}</figure>{{end}}
{{end}}
</body></html>
`))
