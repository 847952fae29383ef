package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/internal/loadgen"
	"github.com/otelitl/itl/otelitl"
)

// loadConfig is the collector of the load test: the itl processor and the itl_metrics connector
// (delta, so that the sink can add up every flush) in front of an OTLP sink. Its placeholders are
// the receiver's endpoint, the flush interval, the cardinality limit line and the sink's endpoint.
// The exporter cuts requests to 3 MiB as the shipped configs do: the sink keeps gRPC's default
// 4 MiB limit, and a flush of thousands of series is larger.
const loadConfig = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
        max_recv_msg_size_mib: 64
processors:
  itl:
  batch:
    send_batch_size: 2048
    timeout: 200ms
connectors:
  itl_metrics:
    aggregation_temporality: delta
    metrics_flush_interval: %s
%s
exporters:
  otlp_grpc/sink:
    endpoint: %s
    tls:
      insecure: true
    timeout: 30s
    sending_queue:
      enabled: true
      queue_size: 20000
      batch:
        sizer: bytes
        max_size: 3145728
        flush_timeout: 200ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [itl, batch]
      exporters: [itl_metrics, otlp_grpc/sink]
    metrics:
      receivers: [itl_metrics]
      exporters: [otlp_grpc/sink]
`

type loadResult struct {
	spans, chunks, gaps, stalls int64
	elapsed                     time.Duration
	cpu                         float64
	peak                        int64
	rss                         []int64 // sampled once a second
	// statsErr says why cpu, peak and rss are missing: procStats reads /proc, which Linux has and
	// macOS does not. The checks of memory are then not made, and the reports say so.
	statsErr error
}

// loadOptions shape a load: rate generations per second, each of chunks chunks, for seconds, the
// model named model(i); the connector flushing every flush (default 2s) with the cardinality limit
// cardinality (0: the connector's default).
type loadOptions struct {
	rate, chunks, seconds, cardinality int
	flush                              time.Duration
	model                              func(i int64) string
}

// runLoad starts the collector with loadConfig and sends the load; it returns what was sent and how
// the collector fared. Arrivals are replayed with ChunkAt, so the sender costs little CPU.
func runLoad(t *testing.T, o loadOptions) (*sink, loadResult) {
	t.Helper()
	rate, chunks, seconds, model := o.rate, o.chunks, o.seconds, o.model
	if o.flush == 0 {
		o.flush = 2 * time.Second
	}
	limit := "" // the connector's default
	if o.cardinality > 0 {
		limit = fmt.Sprintf("    aggregation_cardinality_limit: %d", o.cardinality)
	}
	bin := buildCollector(t)
	sk, sinkAddr := startSink(t)
	otlp := freePort(t)
	cfgPath := filepath.Join(t.TempDir(), "load.yaml")
	if err := os.WriteFile(cfgPath, fmt.Appendf(nil, loadConfig, otlp, o.flush, limit, sinkAddr), 0o644); err != nil {
		t.Fatal(err)
	}
	col := start(t, "otelcol-itl", nil, bin, "--config", cfgPath)
	waitTCP(t, otlp, 30*time.Second)

	ctx := context.Background()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(otlp), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithBlocking(), sdktrace.WithMaxQueueSize(50000), sdktrace.WithMaxExportBatchSize(1000), sdktrace.WithBatchTimeout(100*time.Millisecond)),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("loadtest"))))
	in := otelitl.New(otelitl.WithTracerProvider(tp))

	var res loadResult
	var next atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// Sampling the collector's memory once a second.
	wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, rss, _, err := procStats(col.cmd.Process.Pid); err == nil {
					res.rss = append(res.rss, rss)
				}
			}
		}
	})
	begin := time.Now()
	total := int64(rate * seconds)
	const workers = 2
	var gaps, stalls atomic.Int64
	var senders sync.WaitGroup
	for range workers {
		senders.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= total {
					return
				}
				// Pace: generation i is due at begin + i/rate.
				if d := time.Until(begin.Add(time.Duration(i) * time.Second / time.Duration(rate))); d > 0 {
					time.Sleep(d)
				}
				g, st := loadgen.Generation(ctx, in, otelitl.Request{Provider: "load", Model: model(i)}, i, time.Now().Add(-30*time.Second), chunks)
				gaps.Add(g)
				stalls.Add(st)
			}
		})
	}
	senders.Wait()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("the sender could not export everything: %v", err)
	}
	res.elapsed = time.Since(begin)
	res.spans, res.chunks, res.gaps, res.stalls = total, total*int64(chunks), gaps.Load(), stalls.Load()

	// Drain: everything sent must reach the sink, spans and metrics alike.
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		spans, g, _ := sk.snapshot()
		if spans >= res.spans && int64(g) >= res.gaps {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	time.Sleep(3 * time.Second) // one more flush: nothing extra may arrive either
	close(stop)
	wg.Wait()
	res.cpu, _, res.peak, res.statsErr = procStats(col.cmd.Process.Pid)
	if res.statsErr != nil {
		t.Logf("no CPU or RSS figures for the collector, and no checks of its memory: %v", res.statsErr)
	}
	return sk, res
}

func waitTCP(t *testing.T, addr string, timeout time.Duration) {
	t.Helper()
	if err := waitListening(nil, timeout, addr); err != nil {
		t.Fatal(err)
	}
}

// TestLoad sends a sustained load over OTLP on loopback to the built otelcol-itl and reports spans
// sent against received (zero loss), metric counts against chunks sent (exact), CPU seconds per
// million chunks and peak RSS, which must plateau. LOAD_RATE, LOAD_CHUNKS and LOAD_SECONDS set the
// load (defaults 1000 generations/s of 200 chunks for 60 s, as `make loadtest` runs it).
func TestLoad(t *testing.T) {
	requireE2E(t)
	rate, chunks, seconds := envInt("LOAD_RATE", 1000), envInt("LOAD_CHUNKS", 200), envInt("LOAD_SECONDS", 60)
	sk, r := runLoad(t, loadOptions{rate: rate, chunks: chunks, seconds: seconds, cardinality: 10000,
		model: func(i int64) string { return fmt.Sprintf("model-%d", i%8) }})
	spans, gaps, stalls := sk.snapshot()
	sk.mu.Lock()
	ttfts := sk.counts["gen_ai.client.operation.time_to_first_chunk"]
	sk.mu.Unlock()
	if spans != r.spans {
		t.Errorf("spans: sent %d, received downstream %d", r.spans, spans)
	}
	if int64(gaps) != r.gaps || int64(ttfts) != r.spans || stalls != r.stalls {
		t.Errorf("metrics: %d gap observations for %d gaps sent, %d TTFTs for %d spans, %d stalls for %d", gaps, r.gaps, ttfts, r.spans, stalls, r.stalls)
	}
	n := len(r.rss)
	var mid, last int64
	for i, v := range r.rss {
		switch {
		case i >= n/3 && i < 2*n/3:
			mid = max(mid, v)
		case i >= 2*n/3:
			last = max(last, v)
		}
	}
	report := fmt.Sprintf("load: %d generations/s x %d chunks for %ds (achieved %.0f/s)\n"+
		"spans sent %d, received downstream %d; gaps sent %d, gap observations %d; stalls %d/%d\n",
		rate, chunks, seconds, float64(r.spans)/r.elapsed.Seconds(), r.spans, spans, r.gaps, gaps, stalls, r.stalls)
	if r.statsErr != nil {
		report += fmt.Sprintf("collector CPU and RSS unavailable, and RSS growth not checked: %v\n", r.statsErr)
	} else {
		report += fmt.Sprintf("collector CPU %.1f s = %.2f CPU s per million chunks; peak RSS %.0f MiB; RSS middle third %.0f MiB, last third %.0f MiB\n",
			r.cpu, r.cpu/(float64(r.chunks)/1e6), float64(r.peak)/(1<<20), float64(mid)/(1<<20), float64(last)/(1<<20))
	}
	t.Log("\n" + report)
	if p := os.Getenv("LOAD_REPORT"); p != "" {
		_ = os.WriteFile(p, []byte(report), 0o644)
	}
	if n >= 6 && float64(last) > 1.25*float64(mid)+32<<20 {
		t.Errorf("RSS keeps growing: %d MiB in the middle third, %d MiB in the last", mid>>20, last>>20)
	}
}
