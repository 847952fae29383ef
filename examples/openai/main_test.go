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
	t.Setenv("OPENAI_BASE_URL", "")
	var out bytes.Buffer
	if err := run("fake-gpt", &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "no OPENAI_BASE_URL set: asking a fakellm started inside this example") {
		t.Errorf("the example does not say which server it asks:\n%s", out.String())
	}
	demotest.CheckOutput(t, out.String(), "fake-gpt", 2)
}

// TestStandalone runs the example as the README does against `go run ./examples/fakellm`: a server
// of its own, named by OPENAI_BASE_URL.
func TestStandalone(t *testing.T) {
	u, stop, err := demo.Fakellm(engine.DefaultConfig(), demo.FakellmModels...)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	t.Setenv("OPENAI_BASE_URL", u+"/v1")
	t.Setenv("OPENAI_API_KEY", "x")
	var out bytes.Buffer
	if err := run("fake-gpt", &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "OPENAI_BASE_URL="+u+"/v1: asking that server") {
		t.Errorf("the example does not say which server it asks:\n%s", out.String())
	}
	demotest.CheckOutput(t, out.String(), "fake-gpt", 2)
}

// TestMistakes: the usual mistakes of pointing the example at a server end with a hint.
func TestMistakes(t *testing.T) {
	u, stop, err := demo.Fakellm(engine.DefaultConfig(), demo.FakellmModels...)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	dead := refused.Addr(t)
	closed := "http://" + dead + "/v1"
	for _, c := range []struct{ base, model, want string }{
		{u, "fake-gpt", "OPENAI_BASE_URL is the API root, which ends in /v1 (" + u + "/v1 for this server)"},
		{strings.TrimPrefix(u, "http://") + "/v1", "fake-gpt", "OPENAI_BASE_URL=" + strings.TrimPrefix(u, "http://") + "/v1: give the base URL with its scheme and host"},
		{u + "/v1", "gpt-4o", "does not exist or you do not have access to it.\n  hint: the server does not serve the model \"gpt-4o\""},
		{closed, "fake-gpt", "hint: nothing listens at " + closed + ": start a fakellm there (go run ./examples/fakellm -addr " + dead + ")"},
	} {
		t.Setenv("OPENAI_BASE_URL", c.base)
		var out bytes.Buffer
		err := run(c.model, &out)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("OPENAI_BASE_URL=%s -model %s: error %v, want one with %q", c.base, c.model, err, c.want)
		}
	}
}
