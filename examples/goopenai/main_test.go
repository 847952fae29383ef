package main

import "testing"

// TestRun runs the example end to end against an in-process fakellm and an embedded collector.
func TestRun(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	if err := run("fake-gpt"); err != nil {
		t.Fatal(err)
	}
}
