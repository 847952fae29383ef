package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestReport runs a short ramp against the in-process fakellm and checks the report: a table row
// per level from the derived metrics, and the four charts drawn as SVG.
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
	html, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	page := string(html)
	if n := strings.Count(page, "<svg"); n != 4 {
		t.Errorf("%d charts in the report, want 4", n)
	}
	for _, title := range []string{"Time to first chunk, every generation", "Inter-chunk gaps (ITL), every gap", "Gap percentiles against concurrency", "Cadence of the slowest generation"} {
		if !strings.Contains(page, title) {
			t.Errorf("chart %q missing", title)
		}
	}
	if !strings.Contains(page, "<path") || !strings.Contains(progress.String(), "concurrency   6 [") {
		t.Errorf("the charts have no drawing, or the progress bar is missing")
	}
}

// TestFlags parses the command line as main does, on the flag set that already holds the shared
// -endpoint flag: a clash would panic here.
func TestFlags(t *testing.T) {
	o, err := parseFlags(flag.CommandLine, []string{"-levels", "2,8", "-endpoint", "127.0.0.1:4317", "-max-batch", "3"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(o.levels) != "[2 8]" || o.endpoint != "127.0.0.1:4317" || o.maxBatch != 3 {
		t.Errorf("parsed %+v", o)
	}
	if _, err := parseFlags(flag.NewFlagSet("x", flag.ContinueOnError), []string{"-levels", "0"}); err == nil {
		t.Error("a zero level must be refused")
	}
}
