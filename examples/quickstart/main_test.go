package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestQuickstart runs the whole quickstart, small: embedded collector, real OTLP over loopback,
// simulated streams, and the table read from the derived metrics must account for every generation.
func TestQuickstart(t *testing.T) {
	var out, progress bytes.Buffer
	if err := run(options{generations: 12, concurrency: 12, seed: 7}, &out, &progress); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	rows := regexp.MustCompile(`(?m)^\s*(\S+/\S+)\s+(\d+)\s+\d+ ms\s+\d+ ms\s+\d+ ms\s+\d+ ms\s+\d+ ms\s+\d+\s+\d+\s*$`).FindAllStringSubmatch(text, -1)
	if len(rows) != 3 {
		t.Fatalf("want a row per simulated model, got %d:\n%s", len(rows), text)
	}
	total := 0
	for _, r := range rows {
		n, _ := strconv.Atoi(r[2])
		total += n
	}
	if total != 12 {
		t.Errorf("the table counts %d generations, want 12:\n%s", total, text)
	}
	if !strings.Contains(text, "inter-chunk gaps (ITL)") || !strings.Contains(progress.String(), "12/12 generations") {
		t.Errorf("missing the gap histogram or the progress:\n%s\n%s", text, progress.String())
	}
}
