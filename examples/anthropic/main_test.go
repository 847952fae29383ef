package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/otelitl/itl/examples/fakellm/engine"
	"github.com/otelitl/itl/examples/internal/demo"
	"github.com/otelitl/itl/examples/internal/demo/demotest"
	"github.com/otelitl/itl/internal/refused"
)

// TestRun runs the example end to end against a fakellm inside it and an embedded collector.
func TestRun(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "")
	var out bytes.Buffer
	if err := run("fake-claude", &out); err != nil {
		t.Fatal(err)
	}
	demotest.CheckOutput(t, out.String(), "fake-claude", 1)
}

// TestStandalone runs the example as the README does against `go run ./examples/fakellm`: a server
// of its own, named by ANTHROPIC_BASE_URL (its root: the SDK adds /v1/messages).
func TestStandalone(t *testing.T) {
	u, stop, err := demo.Fakellm(engine.DefaultConfig(), demo.FakellmModels...)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	t.Setenv("ANTHROPIC_BASE_URL", u)
	var out bytes.Buffer
	if err := run("fake-claude", &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "ANTHROPIC_BASE_URL="+u+": asking that server") {
		t.Errorf("the example does not say which server it asks:\n%s", out.String())
	}
	demotest.CheckOutput(t, out.String(), "fake-claude", 1)
}

// TestMistakes: the usual mistakes of pointing the example at a server end with a hint.
func TestMistakes(t *testing.T) {
	u, stop, err := demo.Fakellm(engine.DefaultConfig(), demo.FakellmModels...)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	closed := "http://" + refused.Addr(t)
	for _, c := range []struct{ base, model, want string }{
		{u + "/v1", "fake-claude", "ANTHROPIC_BASE_URL is the server's root, without /v1"},
		{u, "claude-sonnet-4-5", "hint: the server does not serve the model \"claude-sonnet-4-5\""},
		{closed, "fake-claude", "hint: nothing listens at " + closed},
	} {
		t.Setenv("ANTHROPIC_BASE_URL", c.base)
		var out bytes.Buffer
		err := run(c.model, &out)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ANTHROPIC_BASE_URL=%s -model %s: error %v, want one with %q", c.base, c.model, err, c.want)
		}
	}
}
