package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestQuickstart runs the whole quickstart, small: embedded collector, real OTLP over loopback,
// simulated streams, and the table read from the derived metrics must account for every generation.
func TestQuickstart(t *testing.T) {
	var out, progress bytes.Buffer
	if err := run(context.Background(), options{generations: 12, concurrency: 12, seed: 7}, &out, &progress); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	rows := regexp.MustCompile(`(?m)^\s*(\S+/\S+)\s+(\d+)\s+\d+ ms\s+\d+ ms\s+\d+ ms\s+\d+ ms\s+\d+ ms\s+\d+\s+\d+\s*$`).FindAllStringSubmatch(text, -1)
	if len(rows) != 3 {
		t.Fatalf("want a row per simulated model, got %d:\n%s", len(rows), text)
	}
	total := 0
	for _, r := range rows {
		n, _ := strconv.Atoi(r[2])
		total += n
	}
	if total != 12 {
		t.Errorf("the table counts %d generations, want 12:\n%s", total, text)
	}
	if !strings.Contains(text, "inter-chunk gaps (ITL)") || !strings.Contains(progress.String(), "12/12 generations") {
		t.Errorf("missing the gap histogram or the progress:\n%s\n%s", text, progress.String())
	}
}

// TestServe keeps generating with -serve and checks that the Prometheus endpoint carries the
// explicit buckets the dashboard's queries need, until the context ends the run.
func TestServe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	var out, progress bytes.Buffer
	go func() {
		errc <- run(ctx, options{generations: 1, concurrency: 8, seed: 3, serve: addr}, &out, &progress)
	}()
	deadline := time.Now().Add(30 * time.Second)
	var body string
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			if strings.Contains(body, `gen_ai_client_operation_time_per_output_chunk_seconds_bucket{`) && strings.Contains(body, `le="0.025"`) {
				break
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, `le="0.025"`) {
		t.Fatalf("no explicit gap buckets on the Prometheus endpoint:\n%.2000s", body)
	}
}
