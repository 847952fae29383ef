package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelitl/itl/examples/internal/embed"
	"github.com/otelitl/itl/examples/internal/view"
	"github.com/otelitl/itl/internal/syncbuf"
)

// dur is a duration as the examples print it: milliseconds below a second, seconds above.
const dur = `(?:\d+(?:\.\d+)? (?:ms|s))`

// TestQuickstart runs the whole quickstart, small: embedded collector, real OTLP over loopback,
// three simulated servers, and the table read from the derived metrics must account for every
// generation.
func TestQuickstart(t *testing.T) {
	var out, progress bytes.Buffer
	if err := run(context.Background(), options{generations: 12, concurrency: 12, seed: 7}, &out, &progress); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	rows := regexp.MustCompile(`(?m)^\s*(\S+/\S+)\s+(\d+)(?:\s+`+dur+`){5}\s+\d+\s+\d+\s*$`).FindAllStringSubmatch(text, -1)
	if len(rows) != len(models) {
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
	if regexp.MustCompile(`\d\.\d{4,}`).MatchString(text + progress.String()) {
		t.Errorf("raw seconds in the output:\n%s\n%s", text, progress.String())
	}
}

// TestEndpoint sends to a collector of the test's own (-endpoint): every generation arrives as a
// span, and the quickstart says where it sent them instead of printing a table.
func TestEndpoint(t *testing.T) {
	col, err := embed.Start(embed.Options{KeepSpans: true})
	if err != nil {
		t.Fatal(err)
	}
	defer col.Stop()
	var out, progress bytes.Buffer
	if err := run(context.Background(), options{generations: 6, concurrency: 6, seed: 2, endpoint: col.Endpoint}, &out, &progress); err != nil {
		t.Fatal(err)
	}
	col.Stop()
	if n := len(col.Spans()); n != 6 {
		t.Errorf("the collector got %d spans, want 6", n)
	}
	if !strings.Contains(out.String(), "spans sent to "+col.Endpoint) || strings.Contains(out.String(), "TTFT p50") {
		t.Errorf("with -endpoint the quickstart says where the spans went, and prints no table:\n%s", out.String())
	}
}

// TestFlags parses the command line as main does.
func TestFlags(t *testing.T) {
	o, err := parseFlags(flag.NewFlagSet("quickstart", flag.ContinueOnError),
		[]string{"-generations", "30", "-concurrency", "5", "-seed", "9", "-serve", "127.0.0.1:0", "-endpoint", "127.0.0.1:4317"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (options{generations: 30, concurrency: 5, seed: 9, serve: "127.0.0.1:0", endpoint: "127.0.0.1:4317"}); o != want {
		t.Errorf("parsed %+v, want %+v", o, want)
	}
	if o, _ := parseFlags(flag.NewFlagSet("quickstart", flag.ContinueOnError), nil); o.generations != 240 || o.concurrency != 48 || o.seed != 1 {
		t.Errorf("defaults %+v", o)
	}
	if _, err := parseFlags(flag.NewFlagSet("quickstart", flag.ContinueOnError), []string{"100"}); err == nil {
		t.Error("a stray argument must be refused")
	}
	if err := run(context.Background(), options{generations: 0, concurrency: 4}, io.Discard, io.Discard); err == nil {
		t.Error("-generations 0 must be refused")
	}
}

// TestServe keeps generating with -serve and checks that the Prometheus endpoint carries the
// explicit buckets the dashboard's queries need, until the context ends the run. It serves on port
// 0 and scrapes the address the run prints, which is the one that answers.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	out := &syncbuf.Buffer{}
	var progress bytes.Buffer
	go func() {
		errc <- run(ctx, options{generations: 1, concurrency: 8, seed: 3, serve: "127.0.0.1:0"}, out, &progress)
	}()
	announced := regexp.MustCompile(`Prometheus on http://(127\.0\.0\.1:[1-9][0-9]*)/metrics`)
	var addr string
	for wait := time.Now().Add(30 * time.Second); addr == "" && time.Now().Before(wait); time.Sleep(20 * time.Millisecond) {
		if m := announced.FindStringSubmatch(out.String()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		cancel()
		<-errc
		t.Fatalf("the run did not print the Prometheus address it serves on:\n%s", out.String())
	}
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

// Sent to a file or a pipe, the progress line is written as lines of their own, at most one per
// interval, and the last one before other output; the other output passes through, less the newline
// that ends the line on a terminal.
func TestLineProgress(t *testing.T) {
	var buf bytes.Buffer
	p := &view.LineProgress{W: &buf, Every: time.Hour}
	for i := range 5 {
		progress(p, int64(i), int64(10*i), 4)
	}
	fmt.Fprintf(p, "\n%d generations in %s\n\n", 4, "1 s")
	want := "[                              ] 0/4 generations, 0 chunks\n[==============================] 4/4 generations, 40 chunks\n4 generations in 1 s\n\n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
	buf.Reset()
	p = &view.LineProgress{W: &buf}
	progress(p, 1, 10, 4)
	progress(p, 4, 40, 4)
	if n := strings.Count(buf.String(), "\n"); n != 2 || strings.Contains(buf.String(), "\r") {
		t.Errorf("got %q, want two lines and no carriage return", buf.String())
	}
}
