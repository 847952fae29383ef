package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// heavy are module path prefixes that an application importing only the client library must never
// resolve, and (the LLM SDKs and gonum) that a collector build with our components must never
// resolve either.
var (
	collectorStack = []string{"go.opentelemetry.io/collector", "github.com/open-telemetry/opentelemetry-collector-contrib", "google.golang.org/grpc", "github.com/prometheus/", "gonum.org/"}
	llmSDKs        = []string{"github.com/openai/", "github.com/anthropics/", "github.com/sashabaranov/", "google.golang.org/genai", "github.com/tmc/langchaingo", "github.com/ollama/", "gonum.org/"}
)

// maxBuildModules is the most modules the throwaway client application may build from.
const maxBuildModules = 15

// goIn runs the go command in dir with the workspace off, as a user outside this repository would.
func goIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// replaces returns go.mod replace lines pointing every module of this repository at this checkout.
func replaces(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(repoRoot(), "scripts", "modules.sh")).Output()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range strings.Fields(string(out)) {
		fmt.Fprintf(&b, "replace github.com/otelitl/itl/%s => %s\n", m, filepath.Join(repoRoot(), m))
	}
	return b.String()
}

// throwawayApp writes a program of main.go's text with its own go.mod requiring reqs, resolves it,
// and returns every module `go list -m all` resolves and those its packages are built from.
func throwawayApp(t *testing.T, main string, reqs ...string) (all, build []string) {
	t.Helper()
	dir := t.TempDir()
	gomod := "module example.com/throwaway\n\ngo 1.26.0\n\nrequire (\n"
	for _, r := range reqs {
		gomod += "\t" + r + "\n"
	}
	gomod += ")\n\n" + replaces(t)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	goIn(t, dir, "mod", "tidy")
	goIn(t, dir, "build", "-o", os.DevNull, ".")
	for _, l := range strings.Split(strings.TrimSpace(goIn(t, dir, "list", "-m", "all")), "\n") {
		all = append(all, strings.Fields(l)[0])
	}
	for _, l := range strings.Fields(goIn(t, dir, "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", ".")) {
		if !slices.Contains(build, l) {
			build = append(build, l)
		}
	}
	return all, build
}

func forbidden(mods, prefixes []string) []string {
	var bad []string
	for _, m := range mods {
		for _, p := range prefixes {
			if strings.HasPrefix(m, p) {
				bad = append(bad, m)
			}
		}
	}
	return bad
}

// TestModuleCut builds a throwaway application that imports only the client library, against this
// checkout's modules, and checks what it resolves: nothing of the collector, gRPC, Prometheus,
// gonum or an LLM SDK, and no module beyond the OpenTelemetry API's own but ours.
func TestModuleCut(t *testing.T) {
	requireE2E(t)
	all, build := throwawayApp(t, `package main

import (
	"context"

	"github.com/otelitl/itl/otelitl"
)

func main() {
	in := otelitl.New()
	_, g := in.Start(context.Background(), otelitl.Request{Provider: "openai", Model: "gpt-4o"})
	g.Chunk(1)
	g.Chunk(2)
	g.End(nil)
}
`, "github.com/otelitl/itl/otelitl v0.1.0")
	t.Logf("an application importing only otelitl: go list -m all resolves %d modules (main module included), its build uses %d: %v", len(all), len(build), build)
	if len(all) < 5 || len(build) < 3 {
		t.Fatalf("too few modules to be a real resolution: %v / %v", all, build)
	}
	if bad := forbidden(all, append(collectorStack, llmSDKs...)); len(bad) > 0 {
		t.Errorf("an application importing only otelitl resolves %v", bad)
	}
	if len(build) > maxBuildModules {
		t.Errorf("an application importing only otelitl builds from %d modules, more than %d: %v", len(build), maxBuildModules, build)
	}

	// The floor: the same application on the OpenTelemetry API alone (what otelitl imports of it).
	apiAll, _ := throwawayApp(t, `package main

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"
)

func main() {
	_, s := otel.Tracer("x").Start(context.Background(), "x", trace.WithSpanKind(trace.SpanKindClient))
	s.End()
	_, _ = genaiconv.NewClientOperationDuration(otel.Meter("x"), metric.WithExplicitBucketBoundaries(1))
}
`, "go.opentelemetry.io/otel v1.47.0")
	t.Logf("the same application on the OpenTelemetry API alone resolves %d modules", len(apiAll))
	var extra []string
	for _, m := range all {
		if !slices.Contains(apiAll, m) && m != "example.com/throwaway" {
			extra = append(extra, m)
		}
	}
	for _, m := range extra {
		if !strings.HasPrefix(m, "github.com/otelitl/itl/") {
			t.Errorf("otelitl adds %s to an application's module graph beyond the OpenTelemetry API's own", m)
		}
	}
	t.Logf("otelitl adds %v", extra)
}

// ocbModules generates a throwaway ocb distribution (sources and go.mod, not compiled) from the
// manifest entries given, against this checkout's modules, and returns what `go list -m all`
// resolves for it.
func ocbModules(t *testing.T, builder, entries string) []string {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "dist")
	manifest := fmt.Sprintf("dist:\n  name: throwaway\n  output_path: %s\n%s\nreplaces:\n", out, entries)
	for _, l := range strings.Split(strings.TrimSpace(replaces(t)), "\n") {
		manifest += "  - " + strings.TrimPrefix(l, "replace ") + "\n"
	}
	path := filepath.Join(dir, "manifest.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(builder, "--config", path, "--skip-compilation")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ocb: %v\n%s", err, b)
	}
	var all []string
	for _, l := range strings.Split(strings.TrimSpace(goIn(t, out, "list", "-m", "all")), "\n") {
		all = append(all, strings.Fields(l)[0])
	}
	return all
}

// TestModuleCutCollector generates a throwaway ocb distribution with the two components, the OTLP
// receiver and the debug exporter, against this checkout's collector module, and the same
// distribution without our components, and checks that ours add no LLM SDK and no gonum, nor
// anything else but our own modules, collector modules and the exponential histogram library.
// (gonum itself is in every collector's module graph: the collector's service builds its pipeline
// graph with gonum, and its go.mod and gRPC's name gonum's plot and tools modules too.)
func TestModuleCutCollector(t *testing.T) {
	requireE2E(t)
	builder := filepath.Join(repoRoot(), ".bin", "builder")
	if _, err := os.Stat(builder); err != nil {
		t.Fatalf("no ocb at %s: run `make e2e`, which installs it (scripts/install-ocb.sh)", builder)
	}
	const base = `receivers:
  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver v0.165.0
exporters:
  - gomod: go.opentelemetry.io/collector/exporter/debugexporter v0.165.0
providers:
  - gomod: go.opentelemetry.io/collector/confmap/provider/fileprovider v1.71.0`
	ours := ocbModules(t, builder, base+`
processors:
  - gomod: github.com/otelitl/itl/collector v0.1.0
    import: github.com/otelitl/itl/collector/itlprocessor
connectors:
  - gomod: github.com/otelitl/itl/collector v0.1.0
    import: github.com/otelitl/itl/collector/itlmetricsconnector`)
	without := ocbModules(t, builder, base)
	t.Logf("the throwaway distribution resolves %d modules with the otelitl components, %d without", len(ours), len(without))
	if !slices.Contains(ours, "github.com/otelitl/itl/collector") || !slices.Contains(ours, "go.opentelemetry.io/collector/receiver/otlpreceiver") {
		t.Fatalf("the distribution does not resolve the components it was given: %v", ours)
	}
	if bad := forbidden(ours, llmSDKs[:len(llmSDKs)-1]); len(bad) > 0 {
		t.Errorf("a collector with the otelitl components resolves %v", bad)
	}
	var added []string
	for _, m := range ours {
		if slices.Contains(without, m) {
			continue
		}
		added = append(added, m)
		if !strings.HasPrefix(m, "github.com/otelitl/itl/") && !strings.HasPrefix(m, "go.opentelemetry.io/collector/") && m != "github.com/lightstep/go-expohisto" {
			t.Errorf("the otelitl components add %s to a collector's module graph", m)
		}
	}
	t.Logf("the otelitl components add %v", added)
	if bad := forbidden(added, []string{"gonum.org/"}); len(bad) > 0 {
		t.Errorf("the otelitl components add %v", bad)
	}
}
