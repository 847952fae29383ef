// Command verify checks the capture fixtures: every NAME.otlp.json must load with the collector's
// ptrace.JSONUnmarshaler and hold at least one span, and every NAME.truth.json must parse and name
// its scenario. It is its own module (GOWORK=off go run . DIR) so that the repository's modules do
// not depend on it.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

type truth struct {
	Scenario string `json:"scenario"`
	Requests []struct {
		Chunks   []int64 `json:"chunk_unix_nano"`
		Arrivals []int64 `json:"fakellm_arrivals_unix_nano"`
	} `json:"requests"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: verify DIR")
		os.Exit(2)
	}
	files, err := filepath.Glob(filepath.Join(os.Args[1], "*.otlp.json"))
	if err != nil || len(files) == 0 {
		fmt.Fprintln(os.Stderr, "verify: no *.otlp.json in", os.Args[1])
		os.Exit(1)
	}
	sort.Strings(files)
	failed := 0
	for _, f := range files {
		if err := check(f); err != nil {
			fmt.Fprintln(os.Stderr, "verify:", err)
			failed++
		}
	}
	fmt.Printf("%d passed, %d failed\n", len(files)-failed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}

func check(otlpFile string) error {
	name := strings.TrimSuffix(filepath.Base(otlpFile), ".otlp.json")
	raw, err := os.ReadFile(otlpFile)
	if err != nil {
		return err
	}
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", otlpFile, err)
	}
	if td.SpanCount() == 0 {
		return fmt.Errorf("%s: no span", otlpFile)
	}
	var names []string
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		sss := rss.At(i).ScopeSpans()
		for j := range sss.Len() {
			spans := sss.At(j).Spans()
			for k := range spans.Len() {
				s := spans.At(k)
				if s.TraceID().IsEmpty() || s.SpanID().IsEmpty() {
					return fmt.Errorf("%s: span %q has an empty id", otlpFile, s.Name())
				}
				if s.EndTimestamp() < s.StartTimestamp() || s.StartTimestamp() == 0 {
					return fmt.Errorf("%s: span %q has bad times", otlpFile, s.Name())
				}
				names = append(names, fmt.Sprintf("%s(%s)", s.Name(), s.Kind()))
			}
		}
	}
	traw, err := os.ReadFile(strings.TrimSuffix(otlpFile, ".otlp.json") + ".truth.json")
	if err != nil {
		return err
	}
	var t truth
	if err := json.Unmarshal(traw, &t); err != nil {
		return fmt.Errorf("%s truth: %w", name, err)
	}
	if t.Scenario != name || len(t.Requests) == 0 || len(t.Requests[0].Chunks) == 0 || len(t.Requests[0].Arrivals) == 0 {
		return fmt.Errorf("%s truth: scenario %q, %d requests, or no chunks or arrivals", name, t.Scenario, len(t.Requests))
	}
	fmt.Printf("%s: %d spans: %s\n", name, td.SpanCount(), strings.Join(names, " "))
	return nil
}
