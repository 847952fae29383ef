package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README's table of shipped configs names, for each, every variable the config requires
// (${env:NAME:?message}, outside comments): a newcomer who sets what the table lists can start it.
func TestREADMENamesRequiredVariables(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`\[\x60(\w[\w-]*\.yaml)\x60\]\(exporter-config/(\w[\w-]*\.yaml)\)`)
	required := regexp.MustCompile(`\$\{env:(\w+):\?`)
	rows := 0
	for _, line := range strings.Split(string(readme), "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		rows++
		cfg, err := os.ReadFile(filepath.Join(repoRoot(), "exporter-config", m[2]))
		if err != nil {
			t.Fatalf("README.md links %s: %v", m[2], err)
		}
		for _, l := range strings.Split(string(cfg), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "#") {
				continue
			}
			for _, v := range required.FindAllStringSubmatch(l, -1) {
				if !strings.Contains(line, "\x60"+v[1]+"\x60") {
					t.Errorf("README.md's row for %s does not name %s, which the config requires", m[2], v[1])
				}
			}
		}
	}
	if rows < 5 {
		t.Fatalf("found %d rows of shipped configs in README.md; the table moved?", rows)
	}
}
