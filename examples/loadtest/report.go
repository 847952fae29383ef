package main

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
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

// cadence is one generation's gaps, in chunk order.
type cadence struct {
	Concurrency int
	TraceID     string
	Gaps        []float64
}

type reportData struct {
	Levels      []levelFigures
	TTFTs, Gaps []float64 // every TTFT and every gap of the run, seconds
	Slow        cadence   // the generation with the largest gap
	Stall       float64   // the stall threshold, seconds
	Config      string
}

func svg(p *plot.Plot, w, h vg.Length) (template.HTML, error) {
	wt, err := p.WriterTo(w, h, "svg")
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return "", err
	}
	out := b.String()
	if i := bytes.Index(b.Bytes(), []byte("<svg")); i > 0 {
		out = out[i:] // drop the XML prolog: the SVG goes inline in the page
	}
	return template.HTML(out), nil //nolint:gosec // drawn by gonum/plot from numbers
}

func ms(vs []float64) plotter.Values {
	out := make(plotter.Values, len(vs))
	for i, v := range vs {
		out[i] = v * 1000
	}
	return out
}

// clip keeps the values up to the q-quantile, so that one outlier does not squash a histogram.
func clip(vs []float64, q float64) []float64 {
	if len(vs) == 0 {
		return vs
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	limit := s[int(q*float64(len(s)-1))]
	out := vs[:0:0]
	for _, v := range vs {
		if v <= limit {
			out = append(out, v)
		}
	}
	return out
}

func histogram(title, xlabel string, vs []float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = "count"
	if len(vs) == 0 {
		return p, nil
	}
	h, err := plotter.NewHist(ms(vs), 40)
	if err != nil {
		return nil, err
	}
	h.FillColor = color.RGBA{R: 66, G: 133, B: 244, A: 255}
	p.Add(h)
	return p, nil
}

// writeReport draws the four charts with gonum/plot and writes the HTML page.
func writeReport(w io.Writer, d reportData) error {
	ttft, err := histogram("Time to first chunk, every generation", "TTFT (ms)", clip(d.TTFTs, 0.995))
	if err != nil {
		return err
	}
	gaps, err := histogram("Inter-chunk gaps (ITL), every gap", "gap (ms)", clip(d.Gaps, 0.995))
	if err != nil {
		return err
	}

	byLevel := plot.New()
	byLevel.Title.Text = "Gap percentiles against concurrency"
	byLevel.X.Label.Text = "concurrent generations"
	byLevel.Y.Label.Text = "gap (ms)"
	byLevel.X.Scale = plot.LogScale{}
	byLevel.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p50, p99 := make(plotter.XYs, len(d.Levels)), make(plotter.XYs, len(d.Levels))
	for i, l := range d.Levels {
		p50[i] = plotter.XY{X: float64(l.Concurrency), Y: l.GapP50 * 1000}
		p99[i] = plotter.XY{X: float64(l.Concurrency), Y: l.GapP99 * 1000}
	}
	for _, s := range []struct {
		name string
		xys  plotter.XYs
		c    color.Color
	}{{"gap p50", p50, color.RGBA{G: 130, B: 200, A: 255}}, {"gap p99", p99, color.RGBA{R: 220, G: 60, B: 40, A: 255}}} {
		l, pts, err := plotter.NewLinePoints(s.xys)
		if err != nil {
			return err
		}
		l.Color, pts.Color = s.c, s.c
		byLevel.Add(l, pts)
		byLevel.Legend.Add(s.name, l, pts)
	}
	byLevel.Legend.Top = true
	byLevel.Legend.Left = true
	byLevel.Legend.XOffs = vg.Points(10)

	strip := plot.New()
	strip.Title.Text = fmt.Sprintf("Cadence of the slowest generation (concurrency %d, trace %s)", d.Slow.Concurrency, d.Slow.TraceID)
	strip.X.Label.Text = "chunk index"
	strip.Y.Label.Text = "gap before the chunk (ms)"
	var line, stalls plotter.XYs
	for i, g := range d.Slow.Gaps {
		line = append(line, plotter.XY{X: float64(i + 1), Y: g * 1000})
		if g > d.Stall {
			stalls = append(stalls, plotter.XY{X: float64(i + 1), Y: g * 1000})
		}
	}
	if len(line) > 0 {
		l, err := plotter.NewLine(line)
		if err != nil {
			return err
		}
		strip.Add(l)
		thr, _ := plotter.NewLine(plotter.XYs{{X: 1, Y: d.Stall * 1000}, {X: float64(len(line)), Y: d.Stall * 1000}})
		thr.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
		thr.Color = color.Gray{Y: 120}
		strip.Add(thr)
		strip.Legend.Add(fmt.Sprintf("stall threshold %.0f ms", d.Stall*1000), thr)
	}
	if len(stalls) > 0 {
		sc, err := plotter.NewScatter(stalls)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color = color.RGBA{R: 220, A: 255}
		sc.GlyphStyle.Radius = vg.Points(4)
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		strip.Add(sc)
		strip.Legend.Add("stall", sc)
	}
	strip.Legend.Top = true
	strip.Legend.XOffs = -vg.Points(20)

	var charts []template.HTML
	for _, p := range []struct {
		p    *plot.Plot
		w, h vg.Length
	}{{ttft, 6 * vg.Inch, 3.5 * vg.Inch}, {gaps, 6 * vg.Inch, 3.5 * vg.Inch}, {byLevel, 6 * vg.Inch, 3.5 * vg.Inch}, {strip, 12 * vg.Inch, 3.5 * vg.Inch}} {
		s, err := svg(p.p, p.w, p.h)
		if err != nil {
			return err
		}
		charts = append(charts, s)
	}
	return page.Execute(w, struct {
		reportData
		Charts []template.HTML
	}{d, charts})
}

func msf(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f ms", v*1000)
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{"ms": msf}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>otelitl load test report</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 10px;text-align:right}figure{display:inline-block;margin:1em 1em 0 0}</style>
</head><body>
<h1>otelitl load test</h1>
<p>{{.Config}}. Figures per level come from the itl_metrics connector's metrics; the charts from the generation spans' timelines.</p>
<table><tr><th>concurrency</th><th>generations</th><th>TTFT p50</th><th>TTFT p99</th><th>gap p50</th><th>gap p99</th><th>stalls</th><th>output tokens/s</th></tr>
{{range .Levels}}<tr><td>{{.Concurrency}}</td><td>{{.Generations}}</td><td>{{ms .TTFTp50}}</td><td>{{ms .TTFTp99}}</td><td>{{ms .GapP50}}</td><td>{{ms .GapP99}}</td><td>{{.Stalls}}</td><td>{{printf "%.0f" .OutputTokensPerSecond}}</td></tr>
{{end}}</table>
{{range $i, $c := .Charts}}<figure class="chart" id="chart-{{$i}}">{{$c}}</figure>
{{end}}
</body></html>
`))
