// Command quickstart shows otelitl end to end in one process, with nothing to install: three
// simulated inference servers (fakellm's engine: continuous batching, queueing, prefill, speculative
// decoding), generations instrumented with otelitl as each step's tokens arrive and exported over
// real OTLP to an embedded collector (OTLP receiver, itl processor, itl_metrics connector), and a
// table of TTFT, inter-token latency, TPOT, throughput and stalls per model, read from the derived
// metrics.
//
//	go run ./examples/quickstart                      # about 15 seconds
//	go run ./examples/quickstart -generations 1000 -concurrency 100
//	go run ./examples/quickstart -serve 127.0.0.1:9464  # keep going; Prometheus scrapes the metrics
//	go run ./examples/quickstart -endpoint host:4317   # send to your own collector instead
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/examples/fakellm/engine"
	"github.com/otelitl/itl/examples/internal/embed"
	"github.com/otelitl/itl/examples/internal/export"
	"github.com/otelitl/itl/examples/internal/view"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
)

type options struct {
	generations int
	concurrency int
	seed        uint64
	serve       string
	endpoint    string
}

func main() {
	o, err := parseFlags(flag.CommandLine, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout, view.Progress(os.Stderr, 5*time.Second)); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// parseFlags defines the quickstart's flags on fs and parses args.
func parseFlags(fs *flag.FlagSet, args []string) (options, error) {
	var o options
	fs.IntVar(&o.generations, "generations", 240, "generations to simulate (ignored with -serve, which runs until interrupted)")
	fs.IntVar(&o.concurrency, "concurrency", 48, "generations streaming at once")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed of the simulated servers and prompts")
	fs.StringVar(&o.serve, "serve", "", "keep generating until interrupted and expose the metrics for Prometheus at this address, e.g. 127.0.0.1:9464 (prometheus.yaml's collector takes 8889)")
	fs.StringVar(&o.endpoint, "endpoint", "", "send spans over OTLP/gRPC, in plain text, to this collector (host:port, its OTLP/gRPC port: 4317 by default) instead of the embedded one")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q (the options are flags, such as -generations 100)", fs.Arg(0))
	}
	return o, nil
}

// run does the quickstart: results go to out, progress to progress.
// The run ends when ctx does (Ctrl-C), or after o.generations without -serve.
func run(ctx context.Context, o options, out, progress io.Writer) error {
	switch {
	case o.generations < 1:
		return fmt.Errorf("-generations %d: simulate at least 1", o.generations)
	case o.concurrency < 1:
		return fmt.Errorf("-concurrency %d: stream at least 1 generation at once", o.concurrency)
	}

	endpoint := o.endpoint
	var col *embed.Collector
	if endpoint == "" {
		var err error
		if col, err = embed.Start(embed.Options{Serve: o.serve}); err != nil {
			return fmt.Errorf("starting the embedded collector: %w", err)
		}
		defer col.Stop()
		endpoint = col.Endpoint
		fmt.Fprintf(out, "embedded collector: OTLP on %s -> itl -> itl_metrics -> in-process sink", endpoint)
		if o.serve != "" {
			fmt.Fprintf(out, " and Prometheus on http://%s/metrics", col.Serve)
		}
		fmt.Fprintln(out)
	}

	exp, err := export.New(ctx, endpoint)
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(200*time.Millisecond)),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("otelitl-quickstart"))),
	)
	defer func() { _ = tp.Shutdown(context.Background()) }() // on the error paths; the end shuts down first
	in := otelitl.New(otelitl.WithTracerProvider(tp))

	engines := make([]*engine.Engine, len(models))
	for i, m := range models {
		cfg := m.cost
		cfg.Seed = o.seed + uint64(i)
		if engines[i], err = engine.New(cfg); err != nil {
			return fmt.Errorf("model %s: %w", m.name, err)
		}
		defer engines[i].Close()
	}
	names := make([]string, len(models))
	for i, m := range models {
		names[i] = m.provider + "/" + m.name
	}
	fmt.Fprintf(out, "simulated servers (fakellm's engine, in real time): %s\n", strings.Join(names, ", "))

	start := time.Now()
	total := o.generations
	if o.serve != "" {
		total = -1
	}
	done := drive(ctx, in, engines, o, total, col, progress)
	elapsed := time.Since(start)
	if err := tp.Shutdown(context.Background()); err != nil {
		return fmt.Errorf("exporting spans: %w", err)
	}
	fmt.Fprintf(progress, "\n%d generations in %s\n\n", done, view.Duration(elapsed.Seconds()))
	if err := exp.Err(); err != nil {
		return err
	}
	if col == nil {
		fmt.Fprintf(out, "spans sent to %s; the collector that runs the itl_metrics connector (that one, or the gateway behind an agent.yaml) derives the metrics and sends them at its next flush (every 15 s in the shipped configs, ITL_FLUSH_INTERVAL): with exporter-config/prometheus.yaml, at http://127.0.0.1:8889/metrics.\n", endpoint)
		return nil
	}
	// Stopping the collector flushes the connector into the sink: the table covers every span.
	col.Stop()
	md, _ := col.Metrics()
	series := view.Collect(md)
	view.Table(out, series, elapsed)
	fmt.Fprintln(out)
	view.GapHistogram(out, series)
	fmt.Fprintf(out, legend, view.Duration(itlconv.DefaultStallThreshold.Seconds()))
	return nil
}

const legend = `
TTFT is the wait for the first chunk (network, queueing, prefill); ITL is every gap between later
chunks, one observation per gap; TPOT is decode time per token (below ITL where chunks carry several
tokens); out tok/s is the aggregate output rate, which can look healthy while stalls (gaps above
%s) make single replies feel choppy.

The servers differ as real ones do: gpt-4o runs a large batch with chunked prefill (short, steady
gaps); claude-sonnet-4-5 decodes speculatively (1 to 4 tokens a chunk, so TPOT is below ITL);
llama-3.1-70b has a batch of 8, so requests queue for a slot (TTFT), and prefills whole prompts,
so a long one admitted into the batch stalls every reply decoding beside it (stalls).
`

// drive runs generations on o.concurrency workers until total are done (total < 0: until ctx ends),
// printing progress, and returns how many finished. Generation i asks model i modulo 3, each served
// by its own engine.
func drive(ctx context.Context, in *otelitl.Instrumentation, engines []*engine.Engine, o options, total int, col *embed.Collector, w io.Writer) int {
	var next, finished, chunks atomic.Int64
	var wg sync.WaitGroup
	for w := range o.concurrency {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(o.seed, uint64(w)))
			for ctx.Err() == nil {
				i := next.Add(1)
				if total >= 0 && i > int64(total) {
					return
				}
				k := int(i) % len(models)
				chunks.Add(int64(generate(ctx, in, models[k], engines[k], rng)))
				finished.Add(1)
			}
		})
	}
	finishedCh := make(chan struct{})
	go func() { wg.Wait(); close(finishedCh) }()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	lastTable := time.Now()
	for {
		select {
		case <-finishedCh:
			progress(w, finished.Load(), chunks.Load(), total)
			return int(finished.Load())
		case <-tick.C:
			progress(w, finished.Load(), chunks.Load(), total)
			if total < 0 && col != nil && time.Since(lastTable) > 15*time.Second {
				lastTable = time.Now()
				if md, n := col.Metrics(); n > 0 {
					fmt.Fprintln(w)
					view.Table(w, view.Collect(md), time.Since(col.Started))
				}
			}
		}
	}
}

func progress(w io.Writer, done, chunks int64, total int) {
	if total < 0 {
		fmt.Fprintf(w, "\r%d generations, %d chunks (Ctrl-C to stop)   ", done, chunks)
		return
	}
	const width = 30
	n := int(done) * width / total
	fmt.Fprintf(w, "\r[%s%s] %d/%d generations, %d chunks   ", strings.Repeat("=", n), strings.Repeat(" ", width-n), done, total, chunks)
}
