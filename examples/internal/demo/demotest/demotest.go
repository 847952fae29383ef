// Package demotest checks, in the examples' tests, what demo.Telemetry.Finish prints.
package demotest

import (
	"regexp"
	"testing"
)

var (
	ttftMillis   = regexp.MustCompile(`(?m)^  gen_ai\.response\.time_to_first_chunk +\d+(\.\d+)? ms$`)
	p99Millis    = regexp.MustCompile(`(?m)^  otelitl\.chunk\.gap\.p99 +\d+(\.\d+)? ms$`)
	longFraction = regexp.MustCompile(`\d\.\d{4,}`)
)

// CheckOutput checks what an example printed: spans generation spans named "chat <model>", each
// with its TTFT and gap figures in milliseconds.
func CheckOutput(t *testing.T, out, model string, spans int) {
	t.Helper()
	if n := len(regexp.MustCompile(`(?m)^span "chat `+regexp.QuoteMeta(model)+`"`).FindAllString(out, -1)); n != spans {
		t.Errorf("%d spans of %s described, want %d:\n%s", n, model, spans, out)
	}
	if n := len(ttftMillis.FindAllString(out, -1)); n != spans {
		t.Errorf("%d TTFTs in milliseconds, want %d:\n%s", n, spans, out)
	}
	if !p99Millis.MatchString(out) || longFraction.MatchString(out) {
		t.Errorf("the gaps are not in milliseconds:\n%s", out)
	}
}
