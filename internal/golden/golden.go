// Package golden loads the reference generation spans for tests: each case's OTLP/JSON trace and
// the figures expected.json gives for it. The repository keeps them in testdata/golden, a verbatim
// copy of the project's shared reference set (see testdata/golden/README.md for the rules they
// follow).
package golden

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Expected holds one case's figures; a nil pointer means "not defined: record nothing".
type Expected struct {
	Description      string    `json:"description"`
	Model            string    `json:"model"`
	ChunksSeen       int       `json:"chunks_seen"`
	TimelineValid    bool      `json:"timeline_valid"`
	TimelineComplete bool      `json:"timeline_complete"`
	GenAI            bool      `json:"genai"`
	DurationS        float64   `json:"duration_s"`
	ErrorType        string    `json:"error_type"`
	TTFTS            *float64  `json:"ttft_s"`
	TPOTS            *float64  `json:"tpot_s"`
	GapsS            []float64 `json:"gaps_s"`
	GapP50S          *float64  `json:"gap_p50_s"`
	GapP90S          *float64  `json:"gap_p90_s"`
	GapP99S          *float64  `json:"gap_p99_s"`
	MaxGapS          *float64  `json:"max_gap_s"`
	OutputTokens     *int64    `json:"output_tokens"`
	Stalls           int       `json:"stalls"`
}

// Case is one reference span.
type Case struct {
	Name     string
	Traces   ptrace.Traces
	Expected Expected
}

// Span returns the case's only span.
func (c Case) Span() ptrace.Span {
	return c.Traces.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
}

// Set is every case with the stall threshold the expectations were computed with.
type Set struct {
	Cases           []Case
	StallThresholdS float64
}

// Dir returns the golden directory: $OTELITL_GOLDEN_DIR when set (to try a new reference set),
// else the repository's testdata/golden.
func Dir() string {
	if d := os.Getenv("OTELITL_GOLDEN_DIR"); d != "" {
		return d
	}
	return RepoDir()
}

// RepoDir returns the repository's copy of the reference set, testdata/golden.
func RepoDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "golden")
}

// Load reads every case. A missing directory fails the test, never skips it: the golden files are
// the specification, and a run without them proves nothing.
func Load(t testing.TB) Set {
	t.Helper()
	dir := Dir()
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatalf("reading the golden expectations (the repository keeps them in testdata/golden; OTELITL_GOLDEN_DIR overrides it): %v", err)
	}
	var doc struct {
		Cases           map[string]Expected `json:"cases"`
		StallThresholdS float64             `json:"stall_threshold_s"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("expected.json: %v", err)
	}
	set := Set{StallThresholdS: doc.StallThresholdS}
	for name, exp := range doc.Cases {
		td, err := ReadTraces(filepath.Join(dir, "cases", name+".otlp.json"))
		if err != nil {
			t.Fatal(err)
		}
		set.Cases = append(set.Cases, Case{Name: name, Traces: td, Expected: exp})
	}
	sort.Slice(set.Cases, func(i, j int) bool { return set.Cases[i].Name < set.Cases[j].Name })
	if len(set.Cases) == 0 {
		t.Fatalf("no golden cases in %s", dir)
	}
	return set
}

// ReadTraces reads one OTLP/JSON file.
func ReadTraces(path string) (ptrace.Traces, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return ptrace.Traces{}, err
	}
	var u ptrace.JSONUnmarshaler
	td, err := u.UnmarshalTraces(b)
	if err != nil {
		return ptrace.Traces{}, fmt.Errorf("%s: %w", path, err)
	}
	if td.SpanCount() != 1 {
		return ptrace.Traces{}, fmt.Errorf("%s: want one span, got %d", path, td.SpanCount())
	}
	return td, nil
}
