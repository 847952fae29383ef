package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/otelitl"
)

// faultConfig is exporter-config/prometheusremotewrite.yaml's pipeline. The remote-write exporter
// has no file_storage sending queue; its write-ahead log replays, after a restart, samples older than
// those already written, which Prometheus rejects as out of order. What carries the data across an
// outage and a restart is cumulative temporality (the next write holds every total) and the
// connector's flush on shutdown, drained by the exporter's queue before the process exits.
const faultConfig = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
connectors:
  itl_metrics:
    metrics_flush_interval: 1s
exporters:
  prometheus_remote_write:
    endpoint: http://%s/api/v1/write
    retry_on_failure:
      enabled: true
      initial_interval: 200ms
      max_interval: 2s
      max_elapsed_time: 5m
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [itl_metrics]
    metrics:
      receivers: [itl_metrics]
      exporters: [prometheus_remote_write]
`

// rangeSamples returns every sample of the series q (a range selector) selects, by series.
func rangeSamples(t *testing.T, prom, q string) map[string][]float64 {
	t.Helper()
	out := map[string][]float64{}
	for _, s := range promAPI(t, prom, q) {
		k := fmt.Sprint(s.Metric)
		for _, v := range s.Values {
			f, _ := strconv.ParseFloat(v[1].(string), 64)
			out[k] = append(out[k], f)
		}
	}
	return out
}

// totalAcrossResets adds up cumulative series that may have restarted from zero (a collector
// restart): every value before a drop, plus the last.
func totalAcrossResets(series map[string][]float64) float64 {
	var total float64
	for _, vs := range series {
		for i := 1; i < len(vs); i++ {
			if vs[i] < vs[i-1] {
				total += vs[i-1]
			}
		}
		if len(vs) > 0 {
			total += vs[len(vs)-1]
		}
	}
	return total
}

// TestFault sends a steady load through the built collector to a real Prometheus over remote
// write, stops Prometheus for 20 s in the middle (FAULT_OUTAGE) and later restarts the collector
// itself, and checks that Prometheus ends up with exactly what was sent.
func TestFault(t *testing.T) {
	requireE2E(t)
	promBin := prometheusBin(t)
	outage := time.Duration(envInt("FAULT_OUTAGE", 20)) * time.Second
	bin := buildCollector(t)
	promAddr, otlp := freePort(t), freePort(t)
	dir := t.TempDir()
	promCfg := filepath.Join(dir, "prometheus.yml")
	_ = os.WriteFile(promCfg, []byte("global:\n  scrape_interval: 1m\n"), 0o644)
	promArgs := []string{"--config.file=" + promCfg, "--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + promAddr, "--web.enable-remote-write-receiver"}
	prom := "http://" + promAddr
	p := start(t, "prometheus", nil, promBin, promArgs...)
	waitHTTP(t, prom+"/-/ready", 30*time.Second)
	cfgPath := filepath.Join(dir, "fault.yaml")
	_ = os.WriteFile(cfgPath, fmt.Appendf(nil, faultConfig, otlp, promAddr), 0o644)
	col := start(t, "otelcol-itl", nil, bin, "--config", cfgPath)
	waitTCP(t, otlp, 30*time.Second)

	ctx := context.Background()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(otlp), otlptracegrpc.WithInsecure(),
		otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: true, InitialInterval: 100 * time.Millisecond, MaxInterval: time.Second, MaxElapsedTime: 2 * time.Minute}))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBlocking(), sdktrace.WithBatchTimeout(200*time.Millisecond)),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("fault"))))
	in := otelitl.New(otelitl.WithTracerProvider(tp))

	load := startSteadyLoad(ctx, in)

	time.Sleep(5 * time.Second)
	t.Logf("backend outage: Prometheus stopped for %v at %d generations", outage, load.sent.Load())
	p.stop()
	time.Sleep(outage)
	start(t, "prometheus-2", nil, promBin, promArgs...)
	waitHTTP(t, prom+"/-/ready", 60*time.Second)
	time.Sleep(5 * time.Second)
	t.Logf("collector restart at %d generations", load.sent.Load())
	col.stop()
	col = start(t, "otelcol-itl-2", nil, bin, "--config", cfgPath)
	waitTCP(t, otlp, 30*time.Second)
	time.Sleep(5 * time.Second)
	load.stop()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("the sender could not deliver everything: %v", err)
	}
	want := float64(load.sent.Load())
	var got, gotGaps float64
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		got = totalAcrossResets(rangeSamples(t, prom, "gen_ai_client_operation_duration_seconds_count[30m]"))
		gotGaps = totalAcrossResets(rangeSamples(t, prom, "gen_ai_client_operation_time_per_output_chunk_seconds_count[30m]"))
		if got == want && gotGaps == float64(load.gaps.Load()) {
			break
		}
		time.Sleep(time.Second)
	}
	t.Logf("sent %v generations and %d gaps; Prometheus holds %v and %v", want, load.gaps.Load(), got, gotGaps)
	if got != want || gotGaps != float64(load.gaps.Load()) {
		t.Errorf("after the outage and the restart Prometheus holds %v generations and %v gaps, want %v and %d", got, gotGaps, want, load.gaps.Load())
	}
	_ = col
}

// TestFaultPersistentQueue runs the shipped gateway.yaml (delta temporality, a sending queue on
// file_storage) in front of an OTLP/HTTP backend that goes down for FAULT_OUTAGE seconds; during
// the outage the collector itself restarts. Delta data cannot be rebuilt from a later write, so
// every generation reaching the backend in the end proves the queue kept it, on disk across the
// restart.
func TestFaultPersistentQueue(t *testing.T) {
	requireE2E(t)
	outage := time.Duration(envInt("FAULT_OUTAGE", 20)) * time.Second
	bin := buildCollector(t)
	ca := newPrivateCA(t)
	certFile, keyFile := ca.server(t, "gateway")
	hs, backend := startHTTPSink(t)
	queueDir := t.TempDir()
	gw := startGateway(t, bin, "gateway", certFile, keyFile, backend, queueDir)
	tp, in := tlsSender(t, gw.grpcAddr, ca.pool, "fault-queue")

	ctx := context.Background()
	load := startSteadyLoad(ctx, in)
	time.Sleep(5 * time.Second)
	hs.down.Store(true)
	t.Logf("backend down for %v at %d generations", outage, load.sent.Load())
	time.Sleep(outage / 2)
	t.Logf("collector restart at %d generations, backend still down", load.sent.Load())
	gw.stop()
	gw2 := start(t, "gateway-2", gw.env, bin, "--config", filepath.Join(repoRoot(), "exporter-config", "gateway.yaml"))
	waitTCP(t, gw.grpcAddr, 30*time.Second)
	time.Sleep(outage / 2)
	hs.down.Store(false)
	t.Logf("backend back at %d generations", load.sent.Load())
	time.Sleep(5 * time.Second)
	load.stop()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("the sender could not deliver everything: %v", err)
	}
	want := load.sent.Load()
	deadline := time.Now().Add(2 * time.Minute)
	var spans int64
	var ttfts, gapObs uint64
	for time.Now().Before(deadline) {
		hs.mu.Lock()
		spans, ttfts, gapObs = hs.spans, hs.counts["gen_ai.client.operation.time_to_first_chunk"], hs.counts["gen_ai.client.operation.time_per_output_chunk"]
		hs.mu.Unlock()
		if spans >= want && int64(ttfts) >= want && int64(gapObs) >= load.gaps.Load() {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)
	hs.mu.Lock()
	spans, ttfts, gapObs = hs.spans, hs.counts["gen_ai.client.operation.time_to_first_chunk"], hs.counts["gen_ai.client.operation.time_per_output_chunk"]
	hs.mu.Unlock()
	t.Logf("sent %d generations (%d gaps); the backend received %d spans, %d TTFTs, %d gap observations", want, load.gaps.Load(), spans, ttfts, gapObs)
	if spans != want || int64(ttfts) != want || int64(gapObs) != load.gaps.Load() {
		t.Errorf("lost or duplicated across the outage and the restart: spans %d, TTFTs %d, gaps %d; want %d, %d, %d", spans, ttfts, gapObs, want, want, load.gaps.Load())
	}
	_ = gw2
}

// steadyLoad sends 100 generations a second of 30 chunks, counting what it sent, until stopped.
type steadyLoad struct {
	sent, gaps atomic.Int64
	done       chan struct{}
	wg         sync.WaitGroup
}

func startSteadyLoad(ctx context.Context, in *otelitl.Instrumentation) *steadyLoad {
	l := &steadyLoad{done: make(chan struct{})}
	l.wg.Go(func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-l.done:
				return
			case <-tick.C:
			}
			startAt := time.Now().Add(-10 * time.Second)
			_, g := in.Start(ctx, otelitl.Request{Provider: "fault", Model: fmt.Sprintf("m-%d", i%4), StartTime: startAt})
			off := 200 * time.Millisecond
			for k := range 30 {
				if k > 0 {
					off += time.Duration(15+k%5) * time.Millisecond
					l.gaps.Add(1)
				}
				g.ChunkAt(startAt.Add(off), 1)
			}
			g.EndAt(startAt.Add(off), nil)
			l.sent.Add(1)
		}
	})
	return l
}

// stop ends the load and waits for its last generation.
func (l *steadyLoad) stop() {
	close(l.done)
	l.wg.Wait()
}
