// Command quickstart shows otelitl end to end in one process, with nothing to install: simulated
// streaming models, generations instrumented with otelitl and exported over real OTLP to an
// embedded collector (OTLP receiver, itl processor, itl_metrics connector), and a table of TTFT,
// inter-token latency, TPOT, throughput and stalls per model, read from the derived metrics.
//
//	go run ./examples/quickstart                      # about 15 seconds
//	go run ./examples/quickstart -generations 1000 -concurrency 100
//	go run ./examples/quickstart -serve 127.0.0.1:8889  # keep going; Prometheus scrapes the metrics
//	go run ./examples/quickstart -endpoint host:4317   # send to your own collector instead
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusexporter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/examples/internal/sim"
	"github.com/otelitl/itl/examples/internal/view"
	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/processor/itlmetricsconnector"
	"github.com/otelitl/itl/processor/itlprocessor"
)

type options struct {
	generations int
	concurrency int
	seed        uint64
	serve       string
	endpoint    string
}

func main() {
	var o options
	flag.IntVar(&o.generations, "generations", 240, "generations to simulate (ignored with -serve, which runs until interrupted)")
	flag.IntVar(&o.concurrency, "concurrency", 48, "generations streaming at once")
	flag.Uint64Var(&o.seed, "seed", 1, "random seed of the simulated cadence")
	flag.StringVar(&o.serve, "serve", "", "keep generating until interrupted and expose the metrics for Prometheus at this address, e.g. 127.0.0.1:8889")
	flag.StringVar(&o.endpoint, "endpoint", "", "send spans over OTLP/gRPC to this collector (host:port) instead of the embedded one")
	flag.Parse()
	if err := run(o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run does the quickstart: results go to out, progress to progress.
func run(o options, out, progress io.Writer) error {
	if o.generations < 1 || o.concurrency < 1 {
		return errors.New("-generations and -concurrency must be at least 1")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	endpoint := o.endpoint
	var col *embedded
	if endpoint == "" {
		var err error
		if col, err = startCollector(o.serve); err != nil {
			return fmt.Errorf("starting the embedded collector: %w", err)
		}
		defer col.stop()
		endpoint = col.endpoint
		fmt.Fprintf(out, "embedded collector: OTLP on %s -> itl -> itl_metrics -> in-process sink", endpoint)
		if o.serve != "" {
			fmt.Fprintf(out, " and Prometheus on http://%s/metrics", o.serve)
		}
		fmt.Fprintln(out)
	}

	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure())
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(200*time.Millisecond)),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("otelitl-quickstart"))),
	)
	in := otelitl.New(otelitl.WithTracerProvider(tp))

	start := time.Now()
	total := o.generations
	if o.serve != "" {
		total = -1
	}
	done := drive(ctx, in, o, total, col, progress)
	elapsed := time.Since(start)
	if err := tp.Shutdown(context.Background()); err != nil {
		return fmt.Errorf("exporting spans: %w", err)
	}
	fmt.Fprintf(progress, "\n%d generations in %.1fs\n\n", done, elapsed.Seconds())
	if col == nil {
		fmt.Fprintf(out, "spans sent to %s; its itl_metrics connector derives the metrics.\n", endpoint)
		return nil
	}
	// Stopping the collector flushes the connector into the sink: the table covers every span.
	col.stop()
	md, _ := col.sink.snapshot()
	series := view.Collect(md)
	view.Table(out, series, elapsed)
	fmt.Fprintln(out)
	view.GapHistogram(out, series)
	fmt.Fprintln(out, `
TTFT is the wait for the first chunk (queueing, prefill); ITL is every gap between later chunks,
one observation per gap; TPOT is decode time per token (below ITL where chunks carry several
tokens); out tok/s is the aggregate output rate, which can look healthy while stalls (gaps above
250 ms) make single replies feel choppy.`)
	return nil
}

// drive runs generations on o.concurrency workers until total are done (total < 0: until ctx ends),
// printing progress, and returns how many finished.
func drive(ctx context.Context, in *otelitl.Instrumentation, o options, total int, col *embedded, w io.Writer) int {
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
				p := sim.Profiles[int(i)%len(sim.Profiles)]
				r := sim.Run(ctx, in, p, rng)
				chunks.Add(int64(r.Chunks))
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
				if md, n := col.sink.snapshot(); n > 0 {
					fmt.Fprintln(w)
					view.Table(w, view.Collect(md), time.Since(col.started))
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

type embedded struct {
	col      *otelcol.Collector
	sink     *sink
	endpoint string
	started  time.Time
	errc     chan error
	once     sync.Once
}

// startCollector runs a collector in this process: OTLP receiver on a free loopback port, the itl
// processor, the itl_metrics connector with exponential histograms (fine quantiles), the sink, and
// a Prometheus exporter when serve is set.
func startCollector(serve string) (*embedded, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	endpoint := l.Addr().String()
	_ = l.Close()

	e := &embedded{sink: &sink{}, endpoint: endpoint, started: time.Now(), errc: make(chan error, 1)}
	metricsExporters := "[quickstart_sink]"
	promExporter := ""
	if serve != "" {
		metricsExporters = "[quickstart_sink, prometheus]"
		promExporter = fmt.Sprintf("\n  prometheus:\n    endpoint: %q\n    enable_open_metrics: true", serve)
	}
	cfg := fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %q
processors:
  itl:
connectors:
  itl_metrics:
    metrics_flush_interval: 1s
    histogram:
      exponential:
        max_size: 160
exporters:
  quickstart_sink:%s
service:
  telemetry:
    logs:
      level: warn
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [itl]
      exporters: [itl_metrics]
    metrics:
      receivers: [itl_metrics]
      exporters: %s
`, endpoint, promExporter, metricsExporters)

	factories := func() (otelcol.Factories, error) {
		var f otelcol.Factories
		var err error
		if f.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory()); err != nil {
			return f, err
		}
		if f.Processors, err = otelcol.MakeFactoryMap[processor.Factory](itlprocessor.NewFactory()); err != nil {
			return f, err
		}
		if f.Connectors, err = otelcol.MakeFactoryMap[connector.Factory](itlmetricsconnector.NewFactory()); err != nil {
			return f, err
		}
		f.Telemetry = otelconftelemetry.NewFactory()
		f.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](e.sink.factory(), prometheusexporter.NewFactory())
		return f, err
	}
	e.col, err = otelcol.NewCollector(otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{Command: "quickstart", Version: otelitl.Version},
		Factories: factories,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			URIs:              []string{"yaml:" + cfg},
			ProviderFactories: []confmap.ProviderFactory{yamlprovider.NewFactory()},
		}},
		SkipSettingGRPCLogger: true,
	})
	if err != nil {
		return nil, err
	}
	go func() { e.errc <- e.col.Run(context.Background()) }()
	deadline := time.Now().Add(10 * time.Second)
	for e.col.GetState() != otelcol.StateRunning {
		select {
		case err := <-e.errc:
			return nil, err
		default:
		}
		if time.Now().After(deadline) {
			return nil, errors.New("the collector did not start within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return e, nil
}

func (e *embedded) stop() {
	e.once.Do(func() {
		e.col.Shutdown()
		<-e.errc
	})
}
