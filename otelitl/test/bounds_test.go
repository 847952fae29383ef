package test

// Tests of the bounds a generation keeps whatever its caller, its provider or its clock does: the
// chunk cap, impossible timestamps, nil and zero inputs, and absurd values.

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
)

type longType struct{ s string }

func (e longType) Error() string     { return "long" }
func (e longType) ErrorType() string { return e.s }

// TestErrorTypeBounded: error.type is cut to MaxErrorTypeLength bytes on a rune boundary, made valid
// UTF-8, and an ErrorType method returning "" gives the type's name.
func TestErrorTypeBounded(t *testing.T) {
	long := strings.Repeat("ü", itlconv.MaxErrorTypeLength) // twice the bound in bytes
	for _, tc := range []struct {
		err  error
		want string
	}{
		{longType{long}, long[:itlconv.MaxErrorTypeLength]},
		{longType{"a" + long}, "a" + long[:itlconv.MaxErrorTypeLength-2]}, // 127 bytes: no half rune
		{longType{"bad\xffbyte"}, "bad\uFFFDbyte"},
		{longType{""}, "github.com/otelitl/itl/otelitl/test.longType"},
		{fmt.Errorf("ctx: %w", longType{""}), "github.com/otelitl/itl/otelitl/test.longType"},
		{longType{"rate_limited"}, "rate_limited"},
	} {
		got := otelitl.ErrorType(tc.err).Value.AsString()
		if got != tc.want {
			t.Errorf("ErrorType(%#v) = %q, want %q", tc.err, got, tc.want)
		}
		if len(got) > itlconv.MaxErrorTypeLength || !utf8.ValidString(got) {
			t.Errorf("ErrorType = %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
		}
	}
}
