package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/otelitl/itl/otelitl"
)

// TestRunTogether runs the harness for real: the built otelcol-itl, three configurations at once
// on a small load (the A/A control among them), as -together runs a round. Every collector must
// get the whole load and deliver it, each measured on its own, over the same stretch of time.
func TestRunTogether(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the collector")
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "otelcol-itl")
	if err := build(filepath.Join(root, "cmd", "otelcol-itl"), bin); err != nil {
		t.Fatal(err)
	}
	ld, err := generate(200, 20, 2, 20, otelitl.EncodingCompact, true)
	if err != nil {
		t.Fatal(err)
	}
	ld.name = "figures-compact-20"
	o := options{rate: 200, compression: "gzip", flush: 15 * time.Second, out: filepath.Join(dir, "report.txt")}
	cs := []config{mustConfig(t, "full"), mustConfig(t, "passthrough"), mustConfig(t, "passthrough_twin")}
	rs, err := runTogether(bin, ld, cs, o, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != len(cs) {
		t.Fatalf("%d results for %d configurations", len(rs), len(cs))
	}
	var lastBegan, firstEnded time.Time
	for i, r := range rs {
		if r.config != cs[i].name || r.load != ld.name || r.round != 0 {
			t.Errorf("result %d is of %s on %s, round %d", i, r.config, r.load, r.round)
		}
		if len(r.problems) > 0 {
			t.Errorf("%s: %s", r.config, strings.Join(r.problems, "; "))
		}
		if r.counts.spans != ld.spans {
			t.Errorf("%s: %d of %d spans", r.config, r.counts.spans, ld.spans)
		}
		if r.cpu <= 0 || r.cpuTotal < r.cpu || r.peakRSS <= 0 {
			t.Errorf("%s: CPU %v of %v in all, peak RSS %d", r.config, r.cpu, r.cpuTotal, r.peakRSS)
		}
		if r.sent < time.Second { // 400 generations at 200 a second, paced
			t.Errorf("%s: the replay took %v", r.config, r.sent)
		}
		if r.began.After(lastBegan) {
			lastBegan = r.began
		}
		if firstEnded.IsZero() || r.ended.Before(firstEnded) {
			firstEnded = r.ended
		}
	}
	if !lastBegan.Before(firstEnded) {
		t.Errorf("the runs were not together: the last began at %v, the first ended at %v", lastBegan, firstEnded)
	}
	if g := rs[0].counts.gapObs; int64(g) != ld.gaps {
		t.Errorf("full: %d gap observations for %d gaps", g, ld.gaps)
	}
	for _, r := range rs[1:] {
		if r.counts.points != 0 {
			t.Errorf("%s: %d metric points", r.config, r.counts.points)
		}
	}
}

// TestRunTogetherFails: when one collector of a round cannot start, the round fails with an error
// that names the configuration and the collector's kept log, and none of the round's collectors is
// left running.
func TestRunTogetherFails(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "otelcol-itl")
	// Listens nowhere, and says why, as a collector refusing its configuration does.
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho 'Error: invalid configuration: exporters::otlp/sink' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ld := &load{name: "compact-20", spans: 1, chunks: 20, reqs: [][]byte{{}}, reqSpans: []int{1}}
	o := options{rate: 200, compression: "gzip", flush: 15 * time.Second, out: filepath.Join(dir, "report.txt")}
	_, err := runTogether(bin, ld, []config{mustConfig(t, "passthrough"), mustConfig(t, "full")}, o, 2, "")
	if err == nil {
		t.Fatal("a round whose collector exits at start ran")
	}
	for _, want := range []string{"passthrough:", "exited at start", "invalid configuration", "report-round3-compact-20-passthrough.collector.log"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if _, err := runTogether(bin, ld, []config{mustConfig(t, "passthrough"), mustConfig(t, "full")}, o, 0, filepath.Join(dir, "p.pprof")); err == nil || !strings.Contains(err.Error(), "alone") {
		t.Errorf("a profile of two configurations together: %v", err)
	}
}
