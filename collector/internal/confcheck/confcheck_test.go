package confcheck

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"
)

// TestWhole: a count given as text says what to write: without quotes, without the separators of
// prose, or a number at all; the decoder said "expected type 'int', got unconvertible type
// 'string'" of the last two. So does a count given as true or false, a list or a map.
func TestWhole(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string // the error; "": none
	}{
		{100000, ""},
		{100000.0, ""},
		{"100000", `n: "100000" is in quotes; write the number without them, as 100000`},
		{"100,000", `n: "100,000" is not a number as written; write it without separators, as 100000`},
		{"100_000", `n: "100_000" is not a number as written; write it without separators, as 100000`},
		{"100 000", `n: "100 000" is not a number as written; write it without separators, as 100000`},
		{"abc", `n: "abc" is not a number; write a whole number, without quotes`},
		{"", `n: "" is not a number; write a whole number, without quotes`},
		{"1,5x", `n: "1,5x" is not a number; write a whole number, without quotes`},
		{2.5, `n: 2.5 is not a whole number; write a whole number, such as 3`},
		{1e20, `n: 1e+20 is far beyond any value the setting takes`},
		{nil, ""},
		// Not a number at all: the decoder said "expected type 'int', got unconvertible type 'bool'".
		{true, `n: true is not a number; write a whole number`},
		{[]any{100}, `n: [100] is not a number; write one whole number, not a list`},
		{map[string]any{"max": 100}, `n: map[max:100] is not a number; write one whole number, not a section`},
	} {
		err := Whole(confmap.NewFromStringMap(map[string]any{"n": c.v}), "n")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%#v: refused: %v", c.v, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%#v: error %v, want %q", c.v, err, c.want)
		}
	}
}
