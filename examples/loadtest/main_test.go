package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelitl/itl/examples/fakellm/engine"
	"github.com/otelitl/itl/examples/internal/demo"
	"github.com/otelitl/itl/internal/refused"
	"github.com/otelitl/itl/itlconv"
)

// titles are the report's charts.
var titles = []string{"Time to first chunk (TTFT), every generation", "Gaps between chunks, every gap",
	"TTFT p50 and p99 against concurrency", "Gap p50 and p99 against concurrency", "Cadence of the generation with the largest gap"}

// checkPage checks a report: the table under the terminal's column names, every chart drawn as
// SVG, and every label of the charts as a reader writes it (no "2500.00").
func checkPage(t *testing.T, page string) {
	t.Helper()
	if !strings.Contains(page, "<tr><th>"+strings.Join(columns, "</th><th>")+"</th></tr>") {
		t.Errorf("the report's table does not have the columns %q", columns)
	}
	if n := strings.Count(page, "<svg"); n != len(titles) {
		t.Errorf("%d charts in the report, want %d", n, len(titles))
	}
	for _, title := range titles {
		if !strings.Contains(page, title) {
			t.Errorf("chart %q missing", title)
		}
	}
	if !strings.Contains(page, "<path") {
		t.Errorf("the charts have no drawing")
	}
	for _, m := range regexp.MustCompile(`<text[^>]*>([^<]*)</text>`).FindAllStringSubmatch(page, -1) {
		if regexp.MustCompile(`^\d+\.\d*0$|\d\.\d{3,}`).MatchString(m[1]) {
			t.Errorf("chart label %q: durations read as ms or s, counts as whole numbers", m[1])
		}
	}
}

// TestReport runs a short ramp against the in-process fakellm and checks the output: a table row
// per level from the derived metrics, under the report's column names, and the report.
func TestReport(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	report := filepath.Join(t.TempDir(), "itl-report.html")
	var out, progress bytes.Buffer
	o := options{levels: []int{1, 6}, duration: 1500 * time.Millisecond, model: "fake-gpt", report: report,
		maxBatch: 4, prefill: 100 * time.Microsecond, stall: 250 * time.Millisecond, seed: 1}
	if err := run(o, &out, &progress); err != nil {
		t.Fatal(err)
	}
	if rows := regexp.MustCompile(`(?m)^\s+(1|6)\s+[1-9]\d*\s+\d`).FindAllString(out.String(), -1); len(rows) != 2 {
		t.Errorf("want a row for each level with generations, got %q in:\n%s", rows, out.String())
	}
	if !regexp.MustCompile(`(?m)^\s*` + strings.Join(columns, `\s+`) + `\s*$`).MatchString(out.String()) {
		t.Errorf("the terminal's table does not have the report's columns %q:\n%s", columns, out.String())
	}
	if regexp.MustCompile(`\d\.\d{4,}`).MatchString(out.String() + progress.String()) {
		t.Errorf("raw seconds in the output:\n%s\n%s", out.String(), progress.String())
	}
	html, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, string(html))
	if !strings.Contains(progress.String(), "concurrency   6 [") {
		t.Errorf("the progress bar is missing:\n%s", progress.String())
	}
}

// TestTableAligned prints levels whose figures differ in width (ms and s, a missing figure) and
// checks that every column lines up.
func TestTableAligned(t *testing.T) {
	var b bytes.Buffer
	printLevels(&b, []levelFigures{
		{Concurrency: 1, Generations: 4, TTFTp50: 0.2433, TTFTp99: 0.3017, GapP50: 0.0135, GapP99: 0.0175, OutputTokensPerSecond: 31},
		{Concurrency: 32, Generations: 1035, TTFTp50: 7.1805, TTFTp99: 14.1045, GapP50: 0.0179, GapP99: 0.3626, Stalls: 1082, OutputTokensPerSecond: 4471},
		{Concurrency: 128, TTFTp50: math.NaN(), TTFTp99: math.NaN(), GapP50: math.NaN(), GapP99: math.NaN()},
	})
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("want a header and 3 rows:\n%s", b.String())
	}
	for _, l := range lines[1:] {
		if utf8.RuneCountInString(l) != utf8.RuneCountInString(lines[0]) {
			t.Errorf("the columns do not line up:\n%s", b.String())
			break
		}
	}
	for _, want := range []string{"14.1 s", "7.18 s", "243 ms", "13.5 ms", "363 ms"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("%q missing:\n%s", want, b.String())
		}
	}
}

// TestCharts draws a report from figures of known shape: gaps of 13 to 18 ms with a few stalls,
// TTFTs of 0.2 to 14 s, and one generation whose first gap is 1.5 s.
func TestCharts(t *testing.T) {
	d := reportData{Stall: 0.25, MaxBatch: 8, Config: "test",
		Levels: []levelFigures{{Concurrency: 1, Generations: 4, TTFTp50: 0.24, TTFTp99: 0.3, GapP50: 0.0135, GapP99: 0.0175},
			{Concurrency: 32, Generations: 35, TTFTp50: 7.2, TTFTp99: 14.1, GapP50: 0.018, GapP99: 0.36, Stalls: 82}}}
	for i := range 5000 {
		d.Gaps = append(d.Gaps, 0.013+0.005*float64(i%100)/100)
	}
	d.Gaps = append(d.Gaps, 0.3, 0.35, 1.5)
	for i := range 40 {
		d.TTFTs = append(d.TTFTs, 0.2*math.Pow(70, float64(i)/39))
	}
	d.Slow = cadence{Concurrency: 32, TraceID: "00", TTFT: 7.2, Gaps: append([]float64{1.5}, d.Gaps[:99]...)}
	var b bytes.Buffer
	if err := writeReport(&b, d); err != nil {
		t.Fatal(err)
	}
	checkPage(t, b.String())
	for _, label := range []string{">10 ms<", ">20 ms<", ">1 s<", ">10 s<", ">1%<", "TTFT 7.20 s", "stall threshold (250 ms)", "batch limit (8)"} {
		if !strings.Contains(b.String(), label) {
			t.Errorf("%q missing from the charts", label)
		}
	}
}

// TestFlags parses the command line as main does, on a flag set that holds every flag the
// program's flag.CommandLine holds, the shared -endpoint among them: a clash would panic here. A copy
// rather than flag.CommandLine itself, so that the test can run again in one process (-count).
func TestFlags(t *testing.T) {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	flag.CommandLine.VisitAll(func(f *flag.Flag) { fs.Var(f.Value, f.Name, f.Usage) })
	if fs.Lookup("endpoint") == nil {
		t.Fatal("flag.CommandLine holds no -endpoint: demo no longer shares it, and this test checks nothing")
	}
	o, err := parseFlags(fs, []string{"-levels", "2,8", "-endpoint", "127.0.0.1:4317", "-max-batch", "3"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(o.levels) != "[2 8]" || o.endpoint != "127.0.0.1:4317" || o.maxBatch != 3 {
		t.Errorf("parsed %+v", o)
	}
	for args, want := range map[string]string{
		"-levels 0":                   `-levels: "0" is not a positive number`,
		"-duration 0s":                "-duration 0s: give each level some time",
		"-duration -1s":               "-duration -1s: give each level some time",
		"-stall 0s":                   "-stall 0s: give the gap above which a gap is a stall",
		"-report /nonexistent/r.html": "-report /nonexistent/r.html: its directory /nonexistent does not exist",
		"-levels 1 extra":             `unexpected argument "extra"`,
	} {
		_, err := parseFlags(flag.NewFlagSet("x", flag.ContinueOnError), strings.Fields(args))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", args, err, want)
		}
	}
}

// TestConnectionRefused: against an address where nothing listens the load test stops at the
// first refused connection, with the hint, instead of spinning through every level.
func TestConnectionRefused(t *testing.T) {
	base := "http://" + refused.Addr(t) + "/v1"
	t.Setenv("OPENAI_BASE_URL", base)
	began := time.Now()
	var out, progress bytes.Buffer
	err := run(options{levels: []int{1, 2}, duration: 30 * time.Second, model: "fake-gpt", stall: 250 * time.Millisecond, seed: 1}, &out, &progress)
	if err == nil || !strings.Contains(err.Error(), "nothing listens at "+base) {
		t.Errorf("error %v, want the hint that nothing listens at %s", err, base)
	}
	if d := time.Since(began); d > 15*time.Second {
		t.Errorf("took %v: the run went on after the first refused connection", d)
	}
}

// TestEveryGenerationFailed: against a server that answers every request with an error, the load
// test says so, with a hint, instead of drawing a report of nothing.
func TestEveryGenerationFailed(t *testing.T) {
	u, stop, err := demo.Fakellm(engine.DefaultConfig(), "fake-gpt")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	t.Setenv("OPENAI_BASE_URL", u) // the API root lacks /v1
	report := filepath.Join(t.TempDir(), "itl-report.html")
	o := options{levels: []int{2}, duration: 300 * time.Millisecond, model: "fake-gpt", report: report, stall: 250 * time.Millisecond, seed: 1}
	err = run(o, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "every generation failed") || !strings.Contains(err.Error(), "which ends in /v1") {
		t.Errorf("error %v, want every generation failed, with a hint about /v1", err)
	}
	if _, err := os.Stat(report); err == nil {
		t.Error("a report was written")
	}
}

// TestLevelWithoutTimelines: a level whose generations have no TTFT or gap (they all failed) has
// "-" figures, not a crash.
func TestLevelWithoutTimelines(t *testing.T) {
	md := pmetric.NewMetrics()
	m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName(itlconv.Duration.Name)
	dp := m.SetEmptyExponentialHistogram().DataPoints().AppendEmpty()
	dp.SetCount(3)
	dp.Attributes().PutInt(levelKey, 4)
	levels := figuresByLevel(md, map[int]time.Duration{4: time.Second})
	if len(levels) != 1 || levels[0].Generations != 3 || !math.IsNaN(levels[0].TTFTp50) || !math.IsNaN(levels[0].GapP99) {
		t.Errorf("figures %+v", levels)
	}
}

// TestStallsCountOnlyStalls: a level's stalls are the stalls counter's, not every counter's (the
// connector counts generations in a sum too, and the column showed their count as stalls).
func TestStallsCountOnlyStalls(t *testing.T) {
	md := pmetric.NewMetrics()
	ms := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics()
	dur := ms.AppendEmpty()
	dur.SetName(itlconv.Duration.Name)
	dp := dur.SetEmptyExponentialHistogram().DataPoints().AppendEmpty()
	dp.SetCount(5)
	dp.Attributes().PutInt(levelKey, 2)
	for _, c := range []struct {
		name string
		n    int64
	}{{itlconv.Generations.Name, 5}, {itlconv.Stalls.Name, 1}} {
		m := ms.AppendEmpty()
		m.SetName(c.name)
		p := m.SetEmptySum().DataPoints().AppendEmpty()
		p.SetIntValue(c.n)
		p.Attributes().PutInt(levelKey, 2)
	}
	levels := figuresByLevel(md, map[int]time.Duration{2: time.Second})
	if len(levels) != 1 || levels[0].Generations != 5 || levels[0].Stalls != 1 {
		t.Errorf("figures %+v, want 5 generations and 1 stall", levels)
	}
}
