package itlprocessor

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/internal/doccheck"
	"github.com/otelitl/itl/itlconv"
)

// TestREADME: the README documents every configuration key, every attribute the processor writes,
// every instrument of its own telemetry and every reason a span is counted as malformed.
func TestREADME(t *testing.T) {
	words := doccheck.Keys(createDefaultConfig())
	set := processortest.NewNopSettings(Type)
	in := &doccheck.Instruments{}
	set.TelemetrySettings.MeterProvider = in
	if _, err := NewFactory().CreateTraces(context.Background(), set, createDefaultConfig(), consumertest.NewNop()); err != nil {
		t.Fatal(err)
	}
	own := 0
	for _, n := range in.Names() {
		if strings.HasPrefix(n, "otelcol_processor_itl_") { // not processorhelper's, which every processor has
			words = append(words, n)
			own++
		}
	}
	if own < 2 {
		t.Fatalf("only %d instruments of its own recorded: %v", own, in.Names())
	}
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
