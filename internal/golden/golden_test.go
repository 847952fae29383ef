package golden

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestCopyMatchesShared fails when the repository's copy of the reference set differs from the
// shared one it was copied from (../shared/golden beside the repository, where that exists): the
// copy must never drift from the reference, and a new reference must be copied in whole.
func TestCopyMatchesShared(t *testing.T) {
	shared := filepath.Join(RepoDir(), "..", "..", "..", "shared", "golden")
	if _, err := os.Stat(shared); err != nil {
		t.Skipf("no shared reference set at %s to compare the copy with (a clone on its own has none): %v", shared, err)
	}
	files := map[string]bool{}
	for _, root := range []string{shared, RepoDir()} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			files[rel] = true
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < 10 {
		t.Fatalf("only %d files in the reference sets: the walk found nothing real", len(files))
	}
	for rel := range files {
		a, errA := os.ReadFile(filepath.Join(shared, rel))
		b, errB := os.ReadFile(filepath.Join(RepoDir(), rel))
		switch {
		case errA != nil:
			t.Errorf("testdata/golden/%s is not in the shared reference set: remove it", rel)
		case errB != nil:
			t.Errorf("%s is in the shared reference set but not in testdata/golden: copy it in (cp -r ../shared/golden testdata/)", rel)
		case !bytes.Equal(a, b):
			t.Errorf("testdata/golden/%s differs from the shared reference: copy it in again, never edit it", rel)
		}
	}
}
