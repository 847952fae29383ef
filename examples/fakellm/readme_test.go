package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/otelitl/itl/internal/otlpenv"
	"github.com/otelitl/itl/internal/readme"
)

// TestREADMEFlags: README.md's table of flags is the flags fakellm defines (defineFlags, on a
// fresh FlagSet), each with its default: a flag added, removed or renamed, or a default changed,
// without the README fails here.
func TestREADMEFlags(t *testing.T) {
	fs := flag.NewFlagSet("fakellm", flag.ContinueOnError)
	defineFlags(fs)
	want := map[string]string{} // flag name: default as the README writes it
	fs.VisitAll(func(f *flag.Flag) { want[f.Name] = readmeDefault(f.DefValue) })
	if len(want) < 5 {
		t.Fatalf("defineFlags registered %d flags: %v", len(want), want)
	}
	rows := readme.Table(t, "README.md", "## Flags")
	got := map[string]string{}
	for _, r := range rows {
		if len(r) < 3 {
			t.Errorf("README.md: flag row %q has %d cells, want flag | default | what it does", r, len(r))
			continue
		}
		name := strings.TrimPrefix(strings.Trim(r[0], "`"), "-")
		if _, dup := got[name]; dup {
			t.Errorf("README.md lists -%s twice", name)
		}
		got[name] = r[1]
		if strings.TrimSpace(r[2]) == "" {
			t.Errorf("README.md: -%s says nothing of what it does", name)
		}
	}
	for _, name := range readme.SortedKeys(want) {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("README.md's table of flags has no -%s (default %s), which fakellm defines", name, want[name])
		case g != want[name]:
			t.Errorf("README.md: -%s defaults to %s, fakellm to %s", name, g, want[name])
		}
	}
	for _, name := range readme.SortedKeys(got) {
		if _, ok := want[name]; !ok {
			t.Errorf("README.md lists -%s, which fakellm does not define", name)
		}
	}
}

// TestREADMERoutes: every route the server registers (server.New's patterns) is in README.md's
// table of endpoints.
func TestREADMERoutes(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("server", "server.go"))
	if err != nil {
		t.Fatal(err)
	}
	routes := regexp.MustCompile(`HandleFunc\("([A-Z]+) (/[^"]*)"`).FindAllStringSubmatch(string(src), -1)
	if len(routes) < 6 {
		t.Fatalf("found %d routes in server/server.go: did its HandleFunc calls change?", len(routes))
	}
	var table strings.Builder
	for _, r := range readme.Table(t, "README.md", "## Endpoints") {
		table.WriteString(strings.Join(r, " | ") + "\n")
	}
	for _, r := range routes {
		if !strings.Contains(table.String(), "`"+r[1]+" "+r[2]+"`") {
			t.Errorf("README.md's table of endpoints has no `%s %s`, which the server registers", r[1], r[2])
		}
	}
}

// TestREADMEOTelVariables: README.md's table of the OpenTelemetry variables names every one
// fakellm's exporter setup reads (otlpenv.Vars, and OTEL_TRACES_SAMPLER, which it checks).
func TestREADMEOTelVariables(t *testing.T) {
	var table strings.Builder
	for _, r := range readme.Table(t, "README.md", "### Environment") {
		table.WriteString(strings.Join(r, " | ") + "\n")
	}
	for _, v := range append(append([]string(nil), otlpenv.Vars...), "OTEL_TRACES_SAMPLER") {
		if !strings.Contains(table.String(), "`"+v+"`") {
			t.Errorf("README.md's table of OpenTelemetry variables does not name `%s`, which fakellm reads", v)
		}
	}
}

// TestREADMELinks: every relative link of README.md names a file that exists and, with an anchor
// into a Markdown file, a heading of that file.
func TestREADMELinks(t *testing.T) { readme.CheckLinks(t, "README.md") }

// readmeDefault is a flag's default as the README's table writes it: `value`, or "none" for an
// empty one.
func readmeDefault(v string) string {
	if v == "" {
		return "none"
	}
	return "`" + v + "`"
}
