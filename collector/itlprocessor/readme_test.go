package itlprocessor

import (
	"testing"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/internal/doccheck"
	"github.com/otelitl/itl/itlconv"
)

// TestREADME: the README documents every configuration key, every attribute the processor writes
// and every reason a span is counted as malformed.
func TestREADME(t *testing.T) {
	words := doccheck.Keys(createDefaultConfig())
	words = append(words, string(itlconv.TTFTSourceKey), string(itlconv.TPOTKey), string(itlconv.GapMaxKey),
		string(itlconv.StallsKey), string(itlconv.TimelineSkippedKey), string(itlconv.ChunkCountKey))
	for _, r := range genaispan.Reasons {
		words = append(words, string(r))
	}
	if len(words) < 20 {
		t.Fatalf("only %d words to look for: the key walk found too little", len(words))
	}
	missing, err := doccheck.Missing("README.md", words)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range missing {
		t.Errorf("README.md does not mention `%s`", w)
	}
}
