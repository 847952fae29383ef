package poolgate

import (
	"testing"

	"go.opentelemetry.io/collector/featuregate"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// The gate is pdata's: importing pdata registers it, under the id the package looks for.
var _ = ptrace.NewTraces

func TestWarnsOnceWhenTheGateIsOn(t *testing.T) {
	r := featuregate.GlobalRegistry()
	if Enabled(r) {
		t.Fatalf("%s is on by default in this build: the warning would be given to every user", ID)
	}
	core, logs := observer.New(zap.WarnLevel)
	logger := zap.New(core)
	Warn(logger)
	if logs.Len() != 0 {
		t.Fatalf("warned with the gate off: %v", logs.All())
	}

	if err := r.Set(ID, true); err != nil {
		t.Fatalf("the gate %s is not registered by pdata: %v", ID, err)
	}
	t.Cleanup(func() { _ = r.Set(ID, false); warned.Store(false) })
	if !Enabled(r) {
		t.Fatal("Enabled is false with the gate on")
	}
	Warn(logger)
	Warn(logger) // a second component: no second warning
	if logs.Len() != 1 {
		t.Fatalf("%d warnings with the gate on, want 1: %v", logs.Len(), logs.All())
	}
	if e := logs.All()[0]; e.Message != Message || e.ContextMap()["feature_gate"] != ID {
		t.Errorf("warning %q %v", e.Message, e.ContextMap())
	}
}

func TestEnabledInARegistryWithoutTheGate(t *testing.T) {
	if Enabled(featuregate.NewRegistry()) {
		t.Error("a registry without the gate has it on")
	}
}
