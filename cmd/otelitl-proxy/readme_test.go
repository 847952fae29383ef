package main

import (
	"bytes"
	"errors"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/otelitl/itl/internal/otlpenv"
	"github.com/otelitl/itl/internal/readme"
)

// TestREADMEFlags: README.md's table of flags is the flags otelitl-proxy defines, as -h prints them
// (parseConfig, with no variable set), each with its environment variable and its default: a flag
// added, removed or renamed, a variable renamed, or a default changed, without the README fails
// here.
func TestREADMEFlags(t *testing.T) {
	var help bytes.Buffer
	if _, err := parseConfig([]string{"-h"}, func(string) string { return "" }, &help); !errors.Is(err, flagHelp) {
		t.Fatalf("-h: %v, want the usage", err)
	}
	type flagDoc struct{ env, def string }
	want := map[string]flagDoc{}
	// PrintDefaults writes "  -name type" (or "  -name" for a bool), then the usage indented by a
	// tab, ending in (default "value") when the default is not empty.
	var name string
	for _, l := range strings.Split(help.String(), "\n") {
		if m := regexp.MustCompile(`^  -([\w-]+)`).FindStringSubmatch(l); m != nil {
			name = m[1]
			want[name] = flagDoc{env: "none", def: "none"}
			continue
		}
		if name == "" || !strings.HasPrefix(l, "    \t") {
			continue
		}
		d := want[name]
		if m := regexp.MustCompile(`\(env ([A-Z0-9_]+)\)`).FindStringSubmatch(l); m != nil {
			d.env = "`" + m[1] + "`"
		}
		if m := regexp.MustCompile(`\(default (.*)\)$`).FindStringSubmatch(l); m != nil {
			v, err := strconv.Unquote(m[1])
			if err != nil {
				v = m[1] // not a string flag
			}
			d.def = readmeDefault(v)
		}
		want[name] = d
	}
	if len(want) < 5 {
		t.Fatalf("found %d flags in -h:\n%s", len(want), help.String())
	}
	got := map[string]flagDoc{}
	for _, r := range readme.Table(t, "README.md", "## Flags") {
		if len(r) < 4 {
			t.Errorf("README.md: flag row %q has %d cells, want flag | environment variable | default | what it does", r, len(r))
			continue
		}
		n := strings.TrimPrefix(strings.Trim(r[0], "`"), "-")
		if _, dup := got[n]; dup {
			t.Errorf("README.md lists -%s twice", n)
		}
		got[n] = flagDoc{env: r[1], def: r[2]}
		if strings.TrimSpace(r[3]) == "" {
			t.Errorf("README.md: -%s says nothing of what it does", n)
		}
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		g, ok := got[n]
		switch {
		case !ok:
			t.Errorf("README.md's table of flags has no -%s (%s, default %s), which otelitl-proxy defines", n, want[n].env, want[n].def)
		case g.env != want[n].env:
			t.Errorf("README.md: -%s reads %s, otelitl-proxy %s", n, g.env, want[n].env)
		case g.def != want[n].def:
			t.Errorf("README.md: -%s defaults to %s, otelitl-proxy to %s", n, g.def, want[n].def)
		}
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			t.Errorf("README.md lists -%s, which otelitl-proxy does not define", n)
		}
	}
}

// TestREADMEOTelVariables: README.md's table of the OpenTelemetry variables names every one the
// proxy's exporter setup reads (otlpenv.Vars, and OTEL_TRACES_SAMPLER, which it checks).
func TestREADMEOTelVariables(t *testing.T) {
	var table strings.Builder
	for _, r := range readme.Table(t, "README.md", "### Where the spans go") {
		table.WriteString(strings.Join(r, " | ") + "\n")
	}
	for _, v := range append(append([]string(nil), otlpenv.Vars...), "OTEL_TRACES_SAMPLER") {
		if !strings.Contains(table.String(), "`"+v+"`") {
			t.Errorf("README.md's table of OpenTelemetry variables does not name `%s`, which the proxy reads", v)
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
