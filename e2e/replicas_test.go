package e2e

import (
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"google.golang.org/grpc/credentials"

	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/otelitl"
)

// httpSink is an OTLP/HTTP backend: it checks the bearer token, and records every metric point
// with the replica (collector.instance.id) that wrote it.
type httpSink struct {
	mu      sync.Mutex
	spans   int64
	counts  map[string]uint64          // metric -> summed delta count
	writers map[string]map[string]bool // series (attributes without the instance id) -> instance ids
	series  map[string]bool            // full attribute sets
	badAuth int
	down    atomic.Bool // the backend is out: every request gets 503
}

func (h *httpSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.down.Load() {
		http.Error(w, "backend down", http.StatusServiceUnavailable)
		return
	}
	if r.Header.Get("Authorization") != "Bearer e2e-token" {
		h.mu.Lock()
		h.badAuth++
		h.mu.Unlock()
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, _ := io.ReadAll(body)
	h.mu.Lock()
	defer h.mu.Unlock()
	switch r.URL.Path {
	case "/v1/traces":
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(raw); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.spans += int64(req.Traces().SpanCount())
		out, _ := ptraceotlp.NewExportResponse().MarshalProto()
		_, _ = w.Write(out)
	case "/v1/metrics":
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalProto(raw); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.record(req.Metrics())
		out, _ := pmetricotlp.NewExportResponse().MarshalProto()
		_, _ = w.Write(out)
	default:
		http.NotFound(w, r)
	}
}

// startHTTPSink serves an httpSink on a free loopback port until the test ends.
func startHTTPSink(t *testing.T) (*httpSink, string) {
	t.Helper()
	hs := &httpSink{counts: map[string]uint64{}, writers: map[string]map[string]bool{}, series: map[string]bool{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: hs, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return hs, l.Addr().String()
}

func (h *httpSink) record(md pmetric.Metrics) {
	pwalk.Metrics(md, func(m pmetric.Metric) {
		if m.Type() != pmetric.MetricTypeHistogram {
			return
		}
		dps := m.Histogram().DataPoints()
		for d := range dps.Len() {
			dp := dps.At(d)
			h.counts[m.Name()] += dp.Count()
			attrs := dp.Attributes().AsRaw()
			h.series[m.Name()+"|"+attrKey(attrs)] = true
			inst := toString(attrs["collector.instance.id"])
			delete(attrs, "collector.instance.id")
			key := m.Name() + "|" + attrKey(attrs)
			if h.writers[key] == nil {
				h.writers[key] = map[string]bool{}
			}
			h.writers[key][inst] = true
		}
	})
}

// gatewayToken is the token the gateway's receivers require of clients (GATEWAY_TOKEN).
const gatewayToken = "e2e-client-token"

// gateway is one otelcol-itl running exporter-config/gateway.yaml.
type gateway struct {
	*proc
	grpcAddr, httpAddr string
	env                []string
}

// startGateway runs the shipped gateway.yaml on loopback ports with TLS and the client token,
// sending to the OTLP/HTTP backend at backend and queueing in queueDir; extra adds variables
// (NAME=value) to its environment.
func startGateway(t *testing.T, bin, name, certFile, keyFile, backend, queueDir string, extra ...string) *gateway {
	t.Helper()
	grpcAddr, httpAddr, health := freePort(t), freePort(t), freePort(t)
	env := []string{
		"GATEWAY_GRPC_ENDPOINT=" + grpcAddr, "GATEWAY_HTTP_ENDPOINT=" + httpAddr,
		"TLS_CERT_FILE=" + certFile, "TLS_KEY_FILE=" + keyFile,
		"OTLP_HTTP_URL=http://" + backend, "OTLP_TOKEN=e2e-token", "GATEWAY_TOKEN=" + gatewayToken,
		"ITL_QUEUE_DIR=" + queueDir, "ITL_FLUSH_INTERVAL=1s",
		"HEALTH_CHECK_ENDPOINT=" + health, "PPROF_ENDPOINT=" + freePort(t), "TELEMETRY_PORT=" + portOf(freePort(t)),
	}
	env = append(env, extra...)
	p := start(t, name, env, bin, "--config", filepath.Join(repoRoot(), "exporter-config", "gateway.yaml"))
	waitHTTP(t, "http://"+health+"/", 30*time.Second)
	return &gateway{proc: p, grpcAddr: grpcAddr, httpAddr: httpAddr, env: env}
}

// tlsSender is an otelitl Instrumentation exporting over OTLP/gRPC with TLS to endpoint, retrying
// while the collector is away.
func tlsSender(t *testing.T, endpoint string, pool *x509.CertPool, service string) (*sdktrace.TracerProvider, *otelitl.Instrumentation) {
	t.Helper()
	exp, err := otlptracegrpc.New(context.Background(), otlptracegrpc.WithEndpoint(endpoint),
		otlptracegrpc.WithHeaders(map[string]string{"authorization": "Bearer " + gatewayToken}),
		otlptracegrpc.WithTLSCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})),
		otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: true, InitialInterval: 100 * time.Millisecond, MaxInterval: time.Second, MaxElapsedTime: 2 * time.Minute}))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBlocking(), sdktrace.WithBatchTimeout(200*time.Millisecond)),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(service))))
	return tp, otelitl.New(otelitl.WithTracerProvider(tp))
}

// TestReplicas runs two collectors with the shipped exporter-config/gateway.yaml (TLS receivers,
// delta temporality with the instance-id dimension, a file_storage queue, a token to the backend),
// feeds them round-robin, and checks that the totals are those of the generations sent and that
// every series comes from exactly one replica.
func TestReplicas(t *testing.T) {
	requireE2E(t)
	bin := buildCollector(t)
	ca := newPrivateCA(t)
	certFile, keyFile := ca.server(t, "replica")
	hs, backend := startHTTPSink(t)

	var endpoints []string
	for i := range 2 {
		r := startGateway(t, bin, fmt.Sprintf("replica-%d", i), certFile, keyFile, backend, t.TempDir())
		endpoints = append(endpoints, r.grpcAddr)
	}

	ctx := context.Background()
	var tps []*sdktrace.TracerProvider
	var ins []*otelitl.Instrumentation
	for _, ep := range endpoints {
		tp, in := tlsSender(t, ep, ca.pool, "replicas")
		tps = append(tps, tp)
		ins = append(ins, in)
	}
	const gens, chunks = 600, 50
	var gaps int64
	startAt := time.Now().Add(-time.Minute)
	for i := range gens {
		_, g := ins[i%2].Start(ctx, otelitl.Request{Provider: "p", Model: fmt.Sprintf("m-%d", i%3), StartTime: startAt})
		off := 100 * time.Millisecond
		for k := range chunks {
			if k > 0 {
				off += time.Duration(10+k%7) * time.Millisecond
				gaps++
			}
			g.ChunkAt(startAt.Add(off), 1)
		}
		g.EndAt(startAt.Add(off), nil)
	}
	for _, tp := range tps {
		if err := tp.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		hs.mu.Lock()
		done := hs.spans >= gens && hs.counts["gen_ai.client.operation.time_per_output_chunk"] >= uint64(gaps)
		hs.mu.Unlock()
		if done {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)

	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.spans != gens || hs.counts["gen_ai.client.operation.time_to_first_chunk"] != gens ||
		hs.counts["gen_ai.client.operation.time_per_output_chunk"] != uint64(gaps) {
		t.Errorf("totals: %d spans, %d TTFTs, %d gaps; want %d, %d, %d (a single collector's totals)",
			hs.spans, hs.counts["gen_ai.client.operation.time_to_first_chunk"], hs.counts["gen_ai.client.operation.time_per_output_chunk"], gens, gens, gaps)
	}
	if hs.badAuth != 0 {
		t.Errorf("%d requests without the token", hs.badAuth)
	}
	shared := 0
	for key, insts := range hs.writers {
		if insts[""] {
			t.Errorf("a point without collector.instance.id: %s", key)
		}
		if len(insts) == 2 {
			shared++ // the same model on both replicas: kept apart by the instance id
		}
	}
	if shared == 0 {
		t.Error("no model reached both replicas: the test would prove nothing")
	}
	// Every full series (instance id included) has exactly one writer by construction of its key;
	// what must hold is that the instance ids are two, one per replica.
	ids := map[string]bool{}
	for _, insts := range hs.writers {
		for id := range insts {
			ids[id] = true
		}
	}
	if len(ids) != 2 {
		t.Errorf("%d distinct collector.instance.id values, want one per replica: %v", len(ids), ids)
	}
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
