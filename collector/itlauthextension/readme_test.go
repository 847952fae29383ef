package itlauthextension

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/extension/extensiontest"

	"github.com/otelitl/itl/collector/internal/doccheck"
)

// TestREADME: the README documents every configuration key, the instrument of its own telemetry
// and every value of its attributes.
func TestREADME(t *testing.T) {
	// authenticator is a component.ID, a struct the key walk goes into.
	words := append(doccheck.Keys(createDefaultConfig()), "authenticator")
	set := extensiontest.NewNopSettings(Type)
	in := &doccheck.Instruments{}
	set.MeterProvider = in
	if _, err := NewFactory().Create(context.Background(), set, createDefaultConfig()); err != nil {
		t.Fatal(err)
	}
	if len(in.Names()) != 1 {
		t.Fatalf("want one instrument, got %v", in.Names())
	}
	words = append(words, in.Names()...)
	words = append(words, protocolGRPC, protocolHTTP, reasonMissing, reasonInvalid, "remote", "refused_since_last_line", "hint")
	missing, err := doccheck.Missing("README.md", words)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range missing {
		t.Errorf("README.md does not mention `%s`", w)
	}
}
