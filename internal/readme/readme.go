// Package readme checks a command's README.md against the program: the rows of its tables, its
// relative links and their anchors, so that a flag, a converter or a heading changed on one side
// only fails a test. The commands' readme_test.go files share it.
package readme

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// Compare fails for each key of want (what program has) not in got (what README.md lists) or with
// another value, and for each key of got not in want; what names the kind of key (flag, scheme).
func Compare(t testing.TB, program, what string, want, got map[string]string) {
	t.Helper()
	for _, k := range SortedKeys(want) {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("README.md has no %s %s, which %s has", what, k, program)
		case g != want[k]:
			t.Errorf("README.md: %s %s has default %s, %s %s", what, k, g, program, want[k])
		}
	}
	for _, k := range SortedKeys(got) {
		if _, ok := want[k]; !ok {
			t.Errorf("README.md lists %s %s, which %s does not have", what, k, program)
		}
	}
}

// Text returns the file at path.
func Text(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Table returns the cells of every body row of the first table after the line heading in
// path, trimmed.
func Table(t testing.TB, path, heading string) [][]string {
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

// CheckLinks fails for each relative link in path whose file does not exist, or whose anchor is no
// heading of the Markdown file it points into (by GitHub's rule: lower case, punctuation dropped,
// spaces as hyphens).
func CheckLinks(t testing.TB, path string) {
	t.Helper()
	if checked := checkLinks(t, path); checked < 3 {
		t.Fatalf("%s: only %d relative links checked", path, checked)
	}
}

// checkLinks is CheckLinks without its floor: it returns how many relative links it checked.
func checkLinks(t testing.TB, path string) int {
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
		if !Anchors(t, file)[anchor] {
			t.Errorf("%s links %s: %s has no heading whose anchor is #%s", path, target, file, anchor)
		}
	}
	return checked
}

// Anchors returns the anchors GitHub gives the headings of a Markdown file.
func Anchors(t testing.TB, path string) map[string]bool {
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

// SortedKeys returns the keys of m in order.
func SortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
