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
	for _, k := range []string{"", "http.route", "gen_ai", "gen_ai.operation.nam",
		"gen_ai.operation.namE", "gen_ai.request.modeL", "x", strings.Repeat("gen_ai.", 20)} {
		if got := fieldOf(k); got != numFields {
			t.Errorf("fieldOf(%q) = %d, want none", k, got)
		}
	}
}
