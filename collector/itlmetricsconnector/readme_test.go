package itlmetricsconnector

import (
	"strings"
	"testing"

	"github.com/otelitl/itl/collector/internal/doccheck"
	"github.com/otelitl/itl/itlconv"
)

// TestREADME: the README documents every configuration key and every metric the connector emits.
func TestREADME(t *testing.T) {
	var words []string
	for _, k := range doccheck.Keys(createDefaultConfig()) {
		if strings.HasPrefix(k, "histogram.explicit.buckets.") {
			continue // documented as histogram.explicit.buckets.<metric>, with every metric's key
		}
		words = append(words, k)
	}
	for _, m := range metricDefs {
		words = append(words, m.Name, m.key)
	}
	words = append(words, itlconv.Stalls.Name, itlconv.Generations.Name, itlconv.TimingKey)
	if len(words) < 30 {
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
