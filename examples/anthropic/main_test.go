package main

import "testing"

// TestRun runs the example end to end against an in-process fakellm and an embedded collector.
func TestRun(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "")
	if err := run("fake-claude"); err != nil {
		t.Fatal(err)
	}
}
