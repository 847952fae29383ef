package readme

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestRepositoryLinks checks the relative links of every Markdown file of the repository (outside
// node_modules and .git), as CheckLinks does one README: the top-level README, BENCHMARKS.md, the
// components' and examples' READMEs, docs/ and the specification link into each other by heading,
// and a heading renamed or a file moved would leave a reader at a dead link.
func TestRepositoryLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatalf("the repository root is not %s: %v", root, err)
	}
	files, links := 0, 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if !d.IsDir() && filepath.Ext(path) == ".md" {
			files++
			links += checkLinks(t, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 || links < 100 {
		t.Fatalf("%d Markdown files and %d relative links checked; the repository has more", files, links)
	}
	t.Logf("%d Markdown files, %d relative links", files, links)
}
