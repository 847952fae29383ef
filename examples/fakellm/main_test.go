package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/otelitl/itl/internal/syncbuf"
)

// TestServeAndShutDownOnSIGINT builds fakellm, serves a streaming request, and checks that SIGINT
// stops it cleanly (exit status 0).
func TestServeAndShutDownOnSIGINT(t *testing.T) {
	bin := build(t)
	// Port 0, and the address fakellm announces: a port picked here and closed could be taken
	// before fakellm binds it.
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-models", "m1,m2", "-max-batch", "2", "-step-base", "2ms")
	logs := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	announced := regexp.MustCompile(`serving \[m1 m2\] on http://(127\.0\.0\.1:[1-9][0-9]*) `)
	var addr string
	for deadline := time.Now().Add(10 * time.Second); addr == ""; time.Sleep(20 * time.Millisecond) {
		if m := announced.FindStringSubmatch(logs.String()); m != nil {
			addr = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("fakellm announced no address within 10 s:\n%s", logs.String())
		}
	}
	if resp, err := http.Get("http://" + addr + "/healthz"); err != nil {
		t.Fatalf("the announced address %s does not answer: %v\n%s", addr, err, logs.String())
	} else {
		resp.Body.Close()
	}
	resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m2","stream":true,"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "data: [DONE]") || resp.Header.Get("X-Fakellm-Request-Id") == "" {
		t.Errorf("stream %q", body)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("fakellm exited with %v after SIGINT:\n%s", err, logs.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("fakellm did not stop on SIGINT")
	}
	if !strings.Contains(logs.String(), "shutting down") {
		t.Errorf("no shutdown line:\n%s", logs.String())
	}
}

// TestModelsWithSpaces: -models "m1, m2", a list as people write it, serves m2, and the log names
// the models as they are served, without the space (which made " m2" a model no request named).
func TestModelsWithSpaces(t *testing.T) {
	bin := build(t)
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-models", " m1, m2 ", "-step-base", "2ms")
	logs := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	announced := regexp.MustCompile(`serving \[(.*)\] on http://(127\.0\.0\.1:[1-9][0-9]*) `)
	var m []string
	for deadline := time.Now().Add(10 * time.Second); m == nil; time.Sleep(20 * time.Millisecond) {
		if m = announced.FindStringSubmatch(logs.String()); m == nil && time.Now().After(deadline) {
			t.Fatalf("fakellm announced no address within 10 s:\n%s", logs.String())
		}
	}
	if m[1] != "m1 m2" {
		t.Errorf("fakellm announced models [%s], want [m1 m2]", m[1])
	}
	for _, model := range []string{"m1", "m2"} {
		resp, err := http.Post("http://"+m[2]+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"`+model+`","max_tokens":2,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("model %s: %s %s", model, resp.Status, body)
		}
	}
}

// build builds fakellm into a temporary directory and returns its path.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fakellm")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// TestRefusals: a busy address, one that is not host:port or has a port beyond 65535, an empty
// -models or model name, an argument that is not a flag, a flag
// out of its range and a traces exporter other than otlp or none each stop fakellm at start with
// the setting and what to give, and nothing is announced before. OTEL_SDK_DISABLED=true is said at start, before the busy
// address stops it, and no span is exported to the endpoint set beside it.
func TestRefusals(t *testing.T) {
	bin := build(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct {
		args []string
		env  []string
		code int
		want string
	}{
		{[]string{"-addr", busy.Addr().String()}, nil, 1, "-addr " + busy.Addr().String() + ": listen tcp"},
		{[]string{"-addr", "8000"}, nil, 1, `-addr "8000": want host:port, such as 127.0.0.1:8000 (or :8000 for every interface)`},
		{[]string{"-addr", "localhost"}, nil, 1, `-addr "localhost": want host:port, such as 127.0.0.1:8000`},
		{[]string{"-addr", "127.0.0.1:80000"}, nil, 1, `-addr "127.0.0.1:80000": port 80000 is outside 0 to 65535; give one within, such as 127.0.0.1:8000 (0: any free port, announced at start)`},
		{[]string{"-addr", "127.0.0.1:0", "extra"}, nil, 2, `unexpected argument "extra": every setting is a flag`},
		{[]string{"-addr", "127.0.0.1:0", "-spec-tokens", "0"}, nil, 1, "-spec-tokens 0: give 1 (no speculative decoding) or more"},
		{[]string{"-addr", "127.0.0.1:0", "-models", ""}, nil, 1, `-models "": give at least one model name, such as -models fake-gpt,fake-claude`},
		{[]string{"-addr", "127.0.0.1:0", "-models", "m1,,m2"}, nil, 1, `-models "m1,,m2": name 2 of 3 is empty: give comma-separated model names, such as -models fake-gpt,fake-claude`},
		{[]string{"-addr", "127.0.0.1:0", "-models", "m1,"}, nil, 1, `-models "m1,": name 2 of 2 is empty`},
		{[]string{"-addr", "127.0.0.1:0"}, []string{"OTEL_TRACES_EXPORTER=Zipkin"}, 1, `OTEL_TRACES_EXPORTER="Zipkin": the exporters supported are otlp (the default) and none`},
		{[]string{"-addr", busy.Addr().String()}, []string{"OTEL_SDK_DISABLED=TRUE", "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318"}, 1, `not recording spans: OTEL_SDK_DISABLED="TRUE" turns tracing off`},
	} {
		// A fakellm that does not refuse serves until it is killed.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, bin, c.args...)
		cmd.Env = append(os.Environ(), c.env...)
		out, err := cmd.CombinedOutput()
		cancel()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != c.code || !strings.Contains(string(out), c.want) || strings.Contains(string(out), "fakellm serving") {
			t.Errorf("fakellm %v: %v\n%s\nwant exit status %d and %q, nothing served", c.args, err, out, c.code, c.want)
		}
	}
}
