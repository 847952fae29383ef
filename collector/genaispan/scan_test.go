package genaispan

import (
	"strings"
	"testing"
)

// TestKeyOf checks that every field names a distinct attribute, so that fieldOf finds each.
func TestKeyOf(t *testing.T) {
	for f, k := range keyOf {
		if k == "" {
			t.Errorf("field %d has no key", f)
		} else if got := fieldOf(k); got != field(f) {
			t.Errorf("fieldOf(%q) = %d, want %d (two fields share the key?)", k, got, f)
		}
	}
	for _, k := range []string{"", "http.route", "gen_ai", "gen_ai.operation.nam", "gen_ai.request.stream",
		"gen_ai.operation.namE", "gen_ai.request.modeL", "x", strings.Repeat("gen_ai.", 20)} {
		if got := fieldOf(k); got != numFields {
			t.Errorf("fieldOf(%q) = %d, want none", k, got)
		}
	}
}

// TestFieldOfNearKeys checks fieldOf on every key with one byte changed, at every position: each such
// key lands in the slot of a key it is not (or of none), and must be told apart by its comparison.
func TestFieldOfNearKeys(t *testing.T) {
	fields := map[string]field{}
	for f, k := range keyOf {
		fields[k] = field(f)
	}
	for _, k := range keyOf {
		for p := range len(k) {
			for _, b := range []byte{0, '.', '_', 'a', 'e', 'n', 's', 't', 0xff, k[p] + 1} {
				near := []byte(k)
				near[p] = b
				want, ok := fields[string(near)]
				if !ok {
					want = numFields
				}
				if got := fieldOf(string(near)); got != want {
					t.Fatalf("fieldOf(%q) = %d, want %d", near, got, want)
				}
			}
		}
	}
}
