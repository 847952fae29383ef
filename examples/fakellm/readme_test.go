package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/otelitl/itl/internal/otlpenv"
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
	rows := readmeTable(t, "README.md", "## Flags")
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
	for _, name := range readmeSortedKeys(want) {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("README.md's table of flags has no -%s (default %s), which fakellm defines", name, want[name])
		case g != want[name]:
			t.Errorf("README.md: -%s defaults to %s, fakellm to %s", name, g, want[name])
		}
	}
	for _, name := range readmeSortedKeys(got) {
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
	for _, r := range readmeTable(t, "README.md", "## Endpoints") {
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
	for _, r := range readmeTable(t, "README.md", "### Environment") {
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
func TestREADMELinks(t *testing.T) { checkREADMELinks(t, "README.md") }

// readmeDefault is a flag's default as the README's table writes it: `value`, or "none" for an
// empty one.
func readmeDefault(v string) string {
	if v == "" {
		return "none"
	}
	return "`" + v + "`"
}

// readmeTable returns the cells of every body row of the first table after the line heading in
// path, trimmed.
func readmeTable(t *testing.T, path, heading string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == heading {
			start = i
			break
		}
	}
	if start < 0 {
		t.Fatalf("%s has no line %q", path, heading)
	}
	var rows [][]string
	inTable := false
	for _, l := range lines[start+1:] {
		if strings.HasPrefix(l, "#") && !inTable {
			break // the next section, with no table in this one
		}
		if !strings.HasPrefix(l, "|") {
			if inTable {
				break
			}
			continue
		}
		if !inTable { // the header row, then the separator
			inTable = true
			continue
		}
		if strings.HasPrefix(l, "| ---") || strings.HasPrefix(l, "|---") {
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(strings.TrimSpace(l), "|"), " | ") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows = append(rows, cells)
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no table under %q", path, heading)
	}
	return rows
}

// checkREADMELinks fails for each relative link in path whose file does not exist, or whose anchor is no
// heading of the Markdown file it points into (by GitHub's rule: lower case, punctuation dropped,
// spaces as hyphens).
func checkREADMELinks(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	links := regexp.MustCompile(`\]\(([^)\s]+)\)`).FindAllStringSubmatch(string(b), -1)
	checked := 0
	for _, l := range links {
		target := l[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		file, anchor, _ := strings.Cut(target, "#")
		if file == "" {
			file = filepath.Base(path)
		}
		file = filepath.Join(filepath.Dir(path), file)
		if _, err := os.Stat(file); err != nil {
			t.Errorf("%s links %s: %v", path, target, err)
			continue
		}
		checked++
		if anchor == "" || !strings.HasSuffix(file, ".md") {
			continue
		}
		if !readmeAnchors(t, file)[anchor] {
			t.Errorf("%s links %s: %s has no heading whose anchor is #%s", path, target, file, anchor)
		}
	}
	if checked < 3 {
		t.Fatalf("%s: only %d relative links checked", path, checked)
	}
}

// readmeAnchors returns the anchors GitHub gives the headings of a Markdown file.
func readmeAnchors(t *testing.T, path string) map[string]bool {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	fence := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(l, "#") {
			continue
		}
		var a strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#"))) {
			switch {
			case r == ' ':
				a.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				a.WriteRune(r)
			}
		}
		anchors[a.String()] = true
	}
	return anchors
}

func readmeSortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
