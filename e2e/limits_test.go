package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/stats"

	"github.com/otelitl/itl/otelitl"
)

// shippedConfigFiles returns every collector config in exporter-config, the ocb manifest aside.
func shippedConfigFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot(), "exporter-config", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if filepath.Base(f) != "builder-config.yaml" {
			out = append(out, f)
		}
	}
	if len(out) < 7 {
		t.Fatalf("only %d shipped configs: %v", len(out), out)
	}
	return out
}

// clientSpec is what a client needs to talk to a shipped config's receivers.
type clientSpec struct {
	pool  *x509.CertPool // nil: plain text
	token string         // "": no Authorization header
}

// shippedSetup is a shipped config started against test backends.
type shippedSetup struct {
	name   string
	ports  collectorPorts
	client clientSpec
	env    []string
	scrape string // the prometheus exporter's endpoint
	proc   *proc
}

// shippedEnv returns the environment that runs config against the given backends (OTLP/gRPC, and
// HTTP for OTLP/HTTP, remote write and Prometheus' OTLP intake), every required variable set, on
// fresh loopback ports.
func shippedEnv(t *testing.T, config, grpcBackend, httpBackend string) shippedSetup {
	t.Helper()
	raw, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	s := shippedSetup{name: filepath.Base(config), ports: newCollectorPorts(t), scrape: freePort(t)}
	ca := newPrivateCA(t) // for gateway.yaml's receivers
	certFile, keyFile := ca.server(t, "receivers")
	s.env = append(s.ports.env(),
		"ITL_FLUSH_INTERVAL=1s",
		"OTLP_ENDPOINT="+grpcBackend, "OTLP_INSECURE=true", "OTLP_TOKEN=e2e-token",
		"OTLP_HTTP_URL=http://"+httpBackend,
		"PROMETHEUS_REMOTE_WRITE_URL=http://"+httpBackend+"/api/v1/write",
		"PROMETHEUS_OTLP_URL=http://"+httpBackend+"/api/v1/otlp",
		"PROMETHEUS_ENDPOINT="+s.scrape,
		"TLS_CERT_FILE="+certFile, "TLS_KEY_FILE="+keyFile, "GATEWAY_TOKEN="+gatewayToken,
		"ITL_QUEUE_DIR="+t.TempDir(), "PPROF_ENDPOINT="+freePort(t),
	)
	// What the receivers require, not the exporters: otlp.yaml's exporter names a client
	// cert_file, agent.yaml's an authenticator, and their receivers take plain text on loopback.
	receivers := section(string(raw), "receivers")
	if strings.Contains(receivers, "cert_file:") {
		s.client.pool = ca.pool
	}
	if strings.Contains(receivers, "authenticator:") {
		s.client.token = gatewayToken
	}
	return s
}

// section returns the top-level section name of a config (its key's line and every line under
// it, up to the next top-level key), without comments.
func section(raw, name string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(raw, "\n") {
		if line != "" && line[0] != ' ' && line[0] != '#' {
			in = strings.HasPrefix(line, name+":")
		}
		code, _, _ := strings.Cut(line, " #")
		if in && !strings.HasPrefix(strings.TrimSpace(code), "#") {
			b.WriteString(code + "\n")
		}
	}
	return b.String()
}

// shippedWithBackends starts b over OTLP/gRPC and OTLP/HTTP and returns the environment that runs
// config against them (shippedEnv). A config whose OTLP/gRPC exporter cannot send in plain text
// (it reads OTLP_ENDPOINT and no OTLP_INSECURE: agent.yaml, whose token bearertokenauth sends over
// TLS only) gets a gRPC backend with TLS, and OTLP_CA_FILE names the CA of its certificate; its
// HTTP backend, to which it sends nothing, stays in plain text as the http:// URLs say.
func shippedWithBackends(t *testing.T, config string, b *limitedBackend) shippedSetup {
	t.Helper()
	raw := mustRead(t, config)
	tlsOnly := strings.Contains(raw, "${env:OTLP_ENDPOINT") && !strings.Contains(raw, "${env:OTLP_INSECURE")
	httpBackend := startLimitedHTTP(t, b) // before the certificate: plain text
	var ca *privateCA
	if tlsOnly {
		ca = newPrivateCA(t)
		b.certFile, b.keyFile = ca.server(t, "backend")
	}
	s := shippedEnv(t, config, startLimitedGRPC(t, b), httpBackend)
	if tlsOnly {
		s.env = append(s.env, "OTLP_CA_FILE="+ca.file)
	}
	return s
}

// startShipped starts the built collector with a shipped config and waits for its receivers.
//
// A port freePort handed out can still be taken before the collector binds it, by another program
// listening on the machine (freePort keeps the ports out of the range outbound connections take
// theirs from). A collector that exits because a port is in use is started again on new ports, up
// to three times.
func startShipped(t *testing.T, config string, s *shippedSetup) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		s.proc = start(t, fmt.Sprintf("%s-%d", strings.TrimSuffix(s.name, ".yaml"), attempt), s.env, buildCollector(t), "--config", config)
		err := waitListening(s.proc, 30*time.Second, s.ports.grpc, s.ports.http)
		if err == nil {
			return
		}
		if b, _ := os.ReadFile(s.proc.log); attempt < 3 && bytes.Contains(b, []byte("address already in use")) {
			t.Logf("%s: a port was taken before the collector bound it; starting again on new ports", s.name)
			s.newPorts(t)
			continue
		}
		t.Fatal(err)
	}
}

// waitListening waits until every addr accepts connections, and fails early if p, when not nil,
// exits.
func waitListening(p *proc, timeout time.Duration, addrs ...string) error {
	deadline := time.Now().Add(timeout)
	for _, addr := range addrs {
		for {
			c, err := dialTCP(addr)
			if err == nil {
				c.Close()
				break
			}
			if p != nil {
				select {
				case <-p.done:
					return fmt.Errorf("%s exited before listening on %s", p.name, addr)
				default:
				}
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s not listening within %v", addr, timeout)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

// listenerVars are the environment variables of the shipped configs that name a port to listen on.
var listenerVars = []string{"OTLP_GRPC_ENDPOINT", "OTLP_HTTP_ENDPOINT", "GATEWAY_GRPC_ENDPOINT", "GATEWAY_HTTP_ENDPOINT",
	"HEALTH_CHECK_ENDPOINT", "TELEMETRY_PORT", "PROMETHEUS_ENDPOINT", "PPROF_ENDPOINT"}

// newPorts moves every listener of s to a new free port, keeping the rest of its environment.
// Variables that named the same port (OTLP_GRPC_ENDPOINT and GATEWAY_GRPC_ENDPOINT) still do.
func (s *shippedSetup) newPorts(t *testing.T) {
	t.Helper()
	moved := map[string]string{} // old port -> new port
	port := func(old string) string {
		if moved[old] == "" {
			moved[old] = portOf(freePort(t))
		}
		return moved[old]
	}
	addr := func(old string) string {
		host, p, err := net.SplitHostPort(old)
		if err != nil {
			t.Fatalf("%q is not host:port", old)
		}
		return net.JoinHostPort(host, port(p))
	}
	for i, kv := range s.env {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case !slices.Contains(listenerVars, k):
		case k == "TELEMETRY_PORT":
			s.env[i] = k + "=" + port(v)
		default:
			s.env[i] = k + "=" + addr(v)
		}
	}
	s.ports = collectorPorts{grpc: addr(s.ports.grpc), http: addr(s.ports.http), health: addr(s.ports.health), telemetry: addr(s.ports.telemetry)}
	s.scrape = addr(s.scrape)
}

// countingExporter counts the spans its exporter delivered and those it failed to, and keeps the
// first error.
type countingExporter struct {
	sdktrace.SpanExporter
	sent, failed atomic.Int64
	mu           sync.Mutex
	err          error
}

func (c *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := c.SpanExporter.ExportSpans(ctx, spans)
	if err != nil {
		c.failed.Add(int64(len(spans)))
		c.mu.Lock()
		if c.err == nil {
			c.err = err
		}
		c.mu.Unlock()
	} else {
		c.sent.Add(int64(len(spans)))
	}
	return err
}

// requestSizes records the largest request a client sent, before compression.
type requestSizes struct{ max atomic.Int64 }

func (r *requestSizes) observe(n int64) {
	for {
		cur := r.max.Load()
		if n <= cur || r.max.CompareAndSwap(cur, n) {
			return
		}
	}
}

func (r *requestSizes) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (r *requestSizes) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (r *requestSizes) HandleConn(context.Context, stats.ConnStats)                       {}
func (r *requestSizes) HandleRPC(_ context.Context, s stats.RPCStats) {
	if p, ok := s.(*stats.OutPayload); ok {
		r.observe(int64(p.Length))
	}
}

type sizeTransport struct {
	base http.RoundTripper
	r    *requestSizes
}

func (s sizeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	s.r.observe(req.ContentLength)
	return s.base.RoundTrip(req)
}

// sdkSender is an OTel SDK TracerProvider exporting over proto ("grpc" or "http") to addr with the
// batch span processor's defaults (512 spans a batch) unless opts say otherwise.
func sdkSender(t *testing.T, proto, addr string, cs clientSpec, opts ...sdktrace.BatchSpanProcessorOption) (*sdktrace.TracerProvider, *countingExporter, *requestSizes) {
	t.Helper()
	ctx := context.Background()
	sizes := &requestSizes{}
	headers := map[string]string{}
	if cs.token != "" {
		headers["authorization"] = "Bearer " + cs.token
	}
	var exp sdktrace.SpanExporter
	var err error
	switch proto {
	case "grpc":
		o := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(addr), otlptracegrpc.WithHeaders(headers),
			otlptracegrpc.WithDialOption(grpc.WithStatsHandler(sizes))}
		if cs.pool != nil {
			o = append(o, otlptracegrpc.WithTLSCredentials(credentials.NewTLS(&tls.Config{RootCAs: cs.pool, MinVersion: tls.VersionTLS12})))
		} else {
			o = append(o, otlptracegrpc.WithInsecure())
		}
		exp, err = otlptracegrpc.New(ctx, o...)
	case "http":
		tr := http.DefaultTransport.(*http.Transport).Clone()
		o := []otlptracehttp.Option{otlptracehttp.WithEndpoint(addr), otlptracehttp.WithHeaders(headers)}
		if cs.pool != nil {
			tr.TLSClientConfig = &tls.Config{RootCAs: cs.pool, MinVersion: tls.VersionTLS12}
		} else {
			o = append(o, otlptracehttp.WithInsecure())
		}
		o = append(o, otlptracehttp.WithHTTPClient(&http.Client{Transport: sizeTransport{base: tr, r: sizes}, Timeout: time.Minute}))
		exp, err = otlptracehttp.New(ctx, o...)
	default:
		t.Fatalf("unknown protocol %q", proto)
	}
	if err != nil {
		t.Fatal(err)
	}
	ce := &countingExporter{SpanExporter: exp}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(ce, opts...),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("e2e-limits"))))
	return tp, ce, sizes
}

// TestConnectorFlushFitsBackendLimit sends 10,000 series (the connector's default cardinality
// limit) through the shipped exporter-config/otlp.yaml into an OTLP/gRPC backend that enforces
// gRPC's default 4 MiB message limit, and counts every histogram data point it receives: each
// series, and each series' latest count, must be there. Before issue 13 each flush was one message
// of every series (about 20 MiB here), refused with ResourceExhausted every time.
func TestConnectorFlushFitsBackendLimit(t *testing.T) {
	requireE2E(t)
	const models = 10000
	const chunks = 10
	b := newLimitedBackend()
	grpcAddr := startLimitedGRPC(t, b)
	cfg := filepath.Join(repoRoot(), "exporter-config", "otlp.yaml")
	s := shippedEnv(t, cfg, grpcAddr, "127.0.0.1:1")
	s.env = append(s.env, "ITL_FLUSH_INTERVAL=2s")
	startShipped(t, cfg, &s)

	tp, ce, _ := sdkSender(t, "grpc", s.ports.grpc, s.client, sdktrace.WithBlocking(), sdktrace.WithMaxQueueSize(20000))
	in := otelitl.New(otelitl.WithTracerProvider(tp))
	ctx := context.Background()
	base := time.Now().Add(-time.Minute)
	for i := range models {
		_, g := in.Start(ctx, otelitl.Request{Provider: "limits", Model: fmt.Sprintf("flush-model-%05d", i), StartTime: base})
		at := base.Add(200 * time.Millisecond)
		for range chunks {
			at = at.Add(20 * time.Millisecond)
			g.ChunkAt(at, 1)
		}
		g.EndAt(at, nil)
	}
	if err := tp.Shutdown(ctx); err != nil || ce.failed.Load() != 0 {
		t.Fatalf("the client could not deliver its spans: %v (%d failed)", err, ce.failed.Load())
	}
	metrics := map[string]uint64{
		"gen_ai.client.operation.time_to_first_chunk":   models,
		"gen_ai.client.operation.time_per_output_chunk": models * (chunks - 1),
		"gen_ai.client.operation.duration":              models,
	}
	done := func() bool {
		for m, want := range metrics {
			if n, c := b.observations(m); n != models || c != want {
				return false
			}
		}
		return true
	}
	ok := waitFor(2*time.Minute, done)
	for m, want := range metrics {
		n, c := b.observations(m)
		if n != models || c != want {
			t.Errorf("%s: the backend holds %d series and %d observations, want %d and %d", m, n, c, models, want)
		}
	}
	b.mu.Lock()
	msgs, maxMsg := len(b.sizes), b.maxMsg
	b.mu.Unlock()
	report := fmt.Sprintf("connector flush of %d series through otlp.yaml into a backend limited to %d bytes: largest flush %d bytes, "+
		"largest message %d bytes, %d metrics messages over the run, %d messages refused for size\n",
		models, backendLimit, b.largestFlush(), maxMsg, msgs, b.refused.Load())
	t.Log("\n" + report)
	writeReport(t, "LIMITS_REPORT", report)
	if !ok || b.refused.Load() != 0 {
		t.Errorf("data lost: %d messages refused by the backend's 4 MiB limit", b.refused.Load())
	}
	if maxMsg >= backendLimit {
		t.Errorf("a message of %d bytes reached the backend, above its limit", maxMsg)
	}
}

// writeReport appends a report to the file the environment variable names, if set.
func writeReport(t *testing.T, env, report string) {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		return
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Errorf("writing %s: %v", env, err)
		return
	}
	defer f.Close()
	_, _ = f.WriteString(report)
}

// TestLongRepliesThroughEveryConfig sends 512 generations of 5,000 chunks each (the compact encoding,
// written by otelitl through the OTel SDK's batch span processor with its defaults: one export of
// 512 spans, about 19 MiB) over OTLP/gRPC and again over OTLP/HTTP into every shipped config, and
// checks that nothing is lost: the client's exports succeed, the receiver accepts every span and
// refuses none, and where the config forwards spans, a backend with a 4 MiB limit receives them
// all; a config with the connector counts each generation once, one without it (agent.yaml) sends
// no metrics. Before issue 13 the receivers' 4 MiB (gRPC) and 20 MiB (HTTP) limits refused the
// whole batch.
func TestLongRepliesThroughEveryConfig(t *testing.T) {
	requireE2E(t)
	const gens, chunks = 512, 5000
	for _, cfg := range shippedConfigFiles(t) {
		t.Run(filepath.Base(cfg), func(t *testing.T) {
			b := newLimitedBackend()
			s := shippedWithBackends(t, cfg, b)
			startShipped(t, cfg, &s)
			var largest int64
			for _, proto := range []string{"grpc", "http"} {
				addr := s.ports.grpc
				if proto == "http" {
					addr = s.ports.http
				}
				tp, ce, sizes := sdkSender(t, proto, addr, s.client)
				in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(otelitl.EncodingCompact))
				ctx := context.Background()
				base := time.Now().Add(-5 * time.Minute)
				for i := range gens {
					_, g := in.Start(ctx, otelitl.Request{Provider: "limits", Model: "long-" + proto, StartTime: base})
					at := base.Add(300 * time.Millisecond)
					for k := range chunks {
						at = at.Add(time.Duration(12+(i+k)%17) * time.Millisecond)
						g.ChunkAt(at, 1)
					}
					g.EndAt(at, nil)
				}
				err := tp.Shutdown(ctx)
				largest = max(largest, sizes.max.Load())
				if err != nil || ce.sent.Load() != gens || ce.failed.Load() != 0 {
					t.Errorf("%s: the client delivered %d spans and failed %d of %d (largest request %d bytes): %v %v",
						proto, ce.sent.Load(), ce.failed.Load(), gens, sizes.max.Load(), err, ce.err)
				}
			}
			accepted := map[string]float64{}
			waitFor(time.Minute, func() bool {
				accepted = telemetry(t, s.ports.telemetry, "otelcol_receiver_accepted_spans", "transport")
				return accepted["grpc"] >= gens && accepted["http"] >= gens
			})
			refused := telemetry(t, s.ports.telemetry, "otelcol_receiver_refused_spans", "transport")
			if accepted["grpc"] != gens || accepted["http"] != gens || refused["grpc"]+refused["http"] != 0 {
				t.Errorf("the receiver accepted %v and refused %v spans by transport, want %d accepted on each and none refused", accepted, refused, gens)
			}
			if forwardsSpans.MatchString(mustRead(t, cfg)) {
				if !waitFor(2*time.Minute, func() bool { return b.spanCount() >= 2*gens }) || b.spanCount() != 2*gens || b.refused.Load() != 0 {
					t.Errorf("the backend received %d spans of %d (%d messages refused for size)", b.spanCount(), 2*gens, b.refused.Load())
				}
			}
			// An agent, without the connector, counts nothing: the backend (the gateway, in two
			// tiers) has the spans and no metrics of it, and its telemetry has no connector's.
			if !runsConnector.MatchString(mustRead(t, cfg)) {
				own := telemetry(t, s.ports.telemetry, "otelcol_connector_itl_metrics", "")
				if b.hasMetrics() || len(own) != 0 {
					t.Errorf("a config without the connector sent metrics (%v) or has the connector's telemetry %v", b.hasMetrics(), own)
				}
				t.Logf("%s: the largest client request was %d bytes; %v spans accepted; no connector; the backend received %d spans, its largest message %d bytes",
					s.name, largest, accepted, b.spanCount(), b.maxMsg)
				writeReport(t, "LIMITS_REPORT", fmt.Sprintf("%s: %d generations x %d chunks per protocol: largest client request %d bytes; accepted %v; backend spans %d, largest message %d bytes\n",
					s.name, gens, chunks, largest, accepted, b.spanCount(), b.maxMsg))
				return
			}
			// The connector saw every span too: its duration count, where the metrics are readable
			// as cumulative totals (the scrape endpoint, or an OTLP backend without delta).
			var durations float64
			switch {
			case strings.Contains(mustRead(t, cfg), "exporters: [prometheus]"):
				waitFor(time.Minute, func() bool {
					durations = scrapeSum(t, s.scrape, "gen_ai_client_operation_duration_seconds_count")
					return durations >= 2*gens
				})
			case b.hasMetrics() && !strings.Contains(mustRead(t, cfg), "aggregation_temporality: delta"):
				waitFor(time.Minute, func() bool {
					_, c := b.observations("gen_ai.client.operation.duration")
					durations = float64(c)
					return durations >= 2*gens
				})
			default:
				durations = -1 // not readable here (remote write, delta, the log)
			}
			if durations != -1 && durations != 2*gens {
				t.Errorf("the connector counted %v generations, want %d", durations, 2*gens)
			}
			// Its own telemetry says so in every config, delta and remote write included: every
			// span recorded, into the two series of the two models (with delta temporality, a
			// series no span fed in a whole interval is dropped at its flush), none bounded.
			var recorded float64
			waitFor(time.Minute, func() bool {
				recorded = telemetry(t, s.ports.telemetry, "otelcol_connector_itl_metrics_spans_recorded", "")[""]
				return recorded >= 2*gens
			})
			series := telemetry(t, s.ports.telemetry, "otelcol_connector_itl_metrics_series_held", "")[""]
			bounded := telemetry(t, s.ports.telemetry, "otelcol_connector_itl_metrics_values_bounded", "")[""]
			wantSeries := "2"
			if strings.Contains(mustRead(t, cfg), "aggregation_temporality: delta") {
				wantSeries = "2 at most"
			}
			if recorded != 2*gens || series > 2 || wantSeries == "2" && series != 2 || bounded != 0 {
				t.Errorf("the connector's own telemetry: %v spans recorded (want %d), %v series (want %s), %v values bounded (want 0)", recorded, 2*gens, series, wantSeries, bounded)
			}
			t.Logf("%s: the largest client request was %d bytes; %v spans accepted; the connector counted %v generations (-1: not readable here); the backend received %d spans, its largest message %d bytes",
				s.name, largest, accepted, durations, b.spanCount(), b.maxMsg)
			writeReport(t, "LIMITS_REPORT", fmt.Sprintf("%s: %d generations x %d chunks per protocol: largest client request %d bytes; accepted %v; backend spans %d, largest message %d bytes\n",
				s.name, gens, chunks, largest, accepted, b.spanCount(), b.maxMsg))
		})
	}
}

// forwardsSpans matches a config whose traces pipeline exports spans over OTLP.
var forwardsSpans = regexp.MustCompile(`(?m)^    traces:.*\n(?:      .*\n)*?      exporters: \[[^\]]*otlp_(grpc|http)[\],]`)

// runsConnector matches a config with the itl_metrics connector in a pipeline (all but agent.yaml).
var runsConnector = regexp.MustCompile(`(?m)^      exporters: \[[^\]]*\bitl_metrics\b`)

// scrapeSum reads a Prometheus scrape endpoint and adds up the samples of a metric.
func scrapeSum(t *testing.T, addr, metric string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	return sumSamples(resp.Body, metric, "")[""]
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newPorts moves every listener to a new port and leaves everything else as it was. It runs
// without the end-to-end switch: it starts nothing.
func TestNewPorts(t *testing.T) {
	s := shippedEnv(t, filepath.Join(repoRoot(), "exporter-config", "gateway.yaml"), "127.0.0.1:1", "127.0.0.1:2")
	s.env = append(s.env, "ITL_FLUSH_INTERVAL=2s")
	before := slices.Clone(s.env)
	old := s.ports
	s.newPorts(t)
	get := func(env []string, k string) string {
		for _, kv := range slices.Backward(env) { // the last one wins, as in a process's environment
			if key, v, _ := strings.Cut(kv, "="); key == k {
				return v
			}
		}
		t.Fatalf("no %s", k)
		return ""
	}
	if len(s.env) != len(before) {
		t.Fatalf("%d variables, %d before", len(s.env), len(before))
	}
	for i, kv := range s.env {
		k, v, _ := strings.Cut(kv, "=")
		_, was, _ := strings.Cut(before[i], "=")
		if moved := slices.Contains(listenerVars, k); moved == (v == was) {
			t.Errorf("%s: %q, was %q", k, v, was)
		}
	}
	if get(s.env, "OTLP_GRPC_ENDPOINT") != s.ports.grpc || get(s.env, "GATEWAY_GRPC_ENDPOINT") != s.ports.grpc ||
		get(s.env, "OTLP_HTTP_ENDPOINT") != s.ports.http || get(s.env, "HEALTH_CHECK_ENDPOINT") != s.ports.health ||
		get(s.env, "TELEMETRY_PORT") != portOf(s.ports.telemetry) || get(s.env, "PROMETHEUS_ENDPOINT") != s.scrape {
		t.Errorf("the ports and the environment disagree: %+v, %q\n%v", s.ports, s.scrape, s.env)
	}
	if s.ports.grpc == old.grpc || s.ports.http == old.http || get(s.env, "ITL_FLUSH_INTERVAL") != "2s" {
		t.Errorf("ports %+v, were %+v", s.ports, old)
	}
}

// The client a shipped config's receivers want: TLS and the token where they listen beyond
// loopback (gateway.yaml), plain text and no token elsewhere, whatever the exporters name (a
// client certificate in otlp.yaml, an authenticator in agent.yaml); and which configs send to a
// gRPC backend over TLS only. It runs without the end-to-end switch: it starts no collector.
func TestShippedEnvClient(t *testing.T) {
	tlsBackends := 0
	for _, cfg := range shippedConfigFiles(t) {
		raw := mustRead(t, cfg)
		exposed := false
		for _, ep := range endpointDefault.FindAllStringSubmatch(raw, -1) {
			host, _, _ := net.SplitHostPort(ep[1])
			if ip := net.ParseIP(host); ip != nil && !ip.IsLoopback() {
				exposed = true
			}
		}
		s := shippedWithBackends(t, cfg, newLimitedBackend())
		if (s.client.pool != nil) != exposed || (s.client.token != "") != exposed {
			t.Errorf("%s: receivers beyond loopback %v, but the client has TLS %v and a token %v", s.name, exposed, s.client.pool != nil, s.client.token != "")
		}
		if slices.ContainsFunc(s.env, func(kv string) bool { return strings.HasPrefix(kv, "OTLP_CA_FILE=") }) {
			tlsBackends++
		}
	}
	if tlsBackends == 0 {
		t.Error("no shipped config sends over gRPC with TLS only: agent.yaml moved, or reads OTLP_INSECURE?")
	}
}

// A collector that cannot bind a port, taken since freePort handed it out, is started again on new
// ports.
func TestStartShippedTakenPort(t *testing.T) {
	requireE2E(t)
	cfg := filepath.Join(repoRoot(), "exporter-config", "prometheus.yaml")
	s := shippedEnv(t, cfg, "127.0.0.1:1", "127.0.0.1:2")
	l, err := net.Listen("tcp", s.scrape) // the prometheus exporter's port, taken
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := s.scrape
	startShipped(t, cfg, &s)
	if s.scrape == taken {
		t.Fatalf("started on the taken port %s", taken)
	}
	waitHTTP(t, "http://"+s.scrape+"/metrics", 30*time.Second)
}
