package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/otelitl/itl/otelitl"
)

// startAgent runs a shipped config on fresh loopback ports with env added (and args after its
// --config, such as a yaml: URI that sets a key), and waits for its receivers. A collector that exits because one of its ports was taken since freePort handed it
// out is started again on new ports, up to three times, as startShipped does. Its queue is in a
// directory of its own (agent.yaml's ITL_QUEUE_DIR) unless env sets one: an agent given the
// default would write under /var/lib, and hand what it queued to the next agent started.
func startAgent(t *testing.T, bin, config string, env []string, args ...string) (*proc, collectorPorts) {
	t.Helper()
	env = append([]string{"ITL_QUEUE_DIR=" + t.TempDir()}, env...) // a later ITL_QUEUE_DIR in env wins
	for attempt := 1; ; attempt++ {
		ports := newCollectorPorts(t)
		p := start(t, fmt.Sprintf("agent-%s-%d", strings.TrimSuffix(config, ".yaml"), attempt), append(ports.env(), env...), bin,
			append([]string{"--config", filepath.Join(repoRoot(), "exporter-config", config)}, args...)...)
		err := waitListening(p, 30*time.Second, ports.grpc, ports.http)
		if err == nil {
			return p, ports
		}
		if b, _ := os.ReadFile(p.log); attempt < 3 && bytes.Contains(b, []byte("address already in use")) {
			t.Logf("%s: a port was taken before the collector bound it; starting again on new ports", config)
			continue
		}
		t.Fatal(err)
	}
}

// sendGeneration sends one generation of chunks chunks to the agent's OTLP/gRPC receiver, in
// plain text on loopback, and fails the test if the agent does not take it.
func sendGeneration(t *testing.T, agentGRPC, model string, chunks int) {
	t.Helper()
	sendGenerations(t, agentGRPC, model, 1, chunks)
}

// sendGenerations sends n generations of chunks chunks each, one span each, as sendGeneration.
func sendGenerations(t *testing.T, agentGRPC, model string, n, chunks int) {
	t.Helper()
	ctx := context.Background()
	tp, ce, _ := sdkSender(t, "grpc", agentGRPC, clientSpec{}, sdktrace.WithBatchTimeout(100*time.Millisecond))
	in := otelitl.New(otelitl.WithTracerProvider(tp))
	startAt := time.Now().Add(-time.Minute)
	for range n {
		_, g := in.Start(ctx, otelitl.Request{Provider: "e2e", Model: model, StartTime: startAt})
		at := startAt.Add(200 * time.Millisecond)
		for k := range chunks {
			if k > 0 {
				at = at.Add(20 * time.Millisecond)
			}
			g.ChunkAt(at, 1)
		}
		g.EndAt(at, nil)
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("sending to the agent: %v", err)
	}
	if ce.sent.Load() != int64(n) {
		t.Fatalf("the agent took %d spans (failed %d: %v), want %d", ce.sent.Load(), ce.failed.Load(), ce.err, n)
	}
}

// waitExportFailure waits until p's log holds a line of its exporter's that says an export
// failed and why, containing reason, logs that line, and fails the test if none comes within
// timeout (start prints the log then).
func waitExportFailure(t *testing.T, p *proc, reason string, timeout time.Duration) {
	t.Helper()
	reasons := []string{reason}
	if reason == certificateRequired {
		reasons = noClientCertificate
	}
	var line string
	if !waitFor(timeout, func() bool {
		b, _ := os.ReadFile(p.log)
		for _, l := range strings.Split(string(b), "\n") {
			for _, r := range reasons {
				if strings.Contains(l, "Exporting failed") && strings.Contains(l, r) {
					line = l
					return true
				}
			}
		}
		return false
	}) {
		t.Errorf("%s's log has no export failure that says %q within %v", p.name, reasons, timeout)
		return
	}
	t.Logf("%s: %.700s", p.name, line)
}

// certificateRequired is how a client without a certificate learns that the server wanted one.
const certificateRequired = "certificate required"

// noClientCertificate are the ways the same refusal reaches the exporter's log: under TLS 1.3 the
// client's handshake is done before the server checks its certificate, and the client's first
// write may find the connection closed before it reads the server's alert (seen in make check: 30 s
// of "broken pipe" and no "certificate required"). The backend's side is checked apart: it
// received nothing.
var noClientCertificate = []string{certificateRequired, "broken pipe", "connection reset by peer"}

// TestAgentTLSToGateway runs the shipped gateway.yaml with a server certificate that a private
// CA signed, requiring client certificates from the same CA (TLS_CLIENT_CA_FILE), and in front of
// it the shipped agent.yaml, each agent sent one generation:
//   - without OTLP_CA_FILE the agent verifies the gateway against the system's roots: its
//     exporter logs that the export failed, "certificate signed by unknown authority";
//   - with the CA but no client certificate the gateway refuses the handshake: the exporter logs
//     the failure, "certificate required";
//   - with the CA and a client certificate but an OTLP_TOKEN that is not the gateway's
//     GATEWAY_TOKEN, the gateway refuses the export: the agent's exporter logs "Unauthenticated",
//     drops the span and counts it failed; the gateway counts the refusal in its own telemetry
//     (otelcol_extension_itl_auth_refused, the itl_auth extension's) and logs one line naming the
//     agent's address and the fix, and accepts, records and exports nothing (gatewayRefused, which
//     also posts OTLP/HTTP without a token);
//   - with OTLP_CA_FILE, OTLP_CLIENT_CERT_FILE and OTLP_CLIENT_KEY_FILE the span reaches the
//     gateway's backend, with the token OTLP_TOKEN sent (the gateway refuses a request without
//     it), and the generation is counted once: the gateway's connector recorded one span, the
//     backend holds one generation with its first chunk and every gap, and the agent sent the
//     span and no metric point.
//
// The failing agents come first and deliver nothing, so that what the backend holds at the end
// is the trusted agent's alone. otlp.yaml and otlphttp.yaml, which ran here before agent.yaml was
// shipped, send to a backend: in front of the gateway they count each generation in both tiers.
func TestAgentTLSToGateway(t *testing.T) {
	requireE2E(t)
	bin := buildCollector(t)
	ca := newPrivateCA(t)
	srvCert, srvKey := ca.server(t, "gateway")
	cliCert, cliKey := ca.client(t, "agent")
	const chunks = 12
	const config = "agent.yaml"

	hs, backend := startHTTPSink(t)
	gw := startGateway(t, bin, "gateway", srvCert, srvKey, backend, t.TempDir(), "TLS_CLIENT_CA_FILE="+ca.file)
	base := []string{"OTLP_ENDPOINT=" + gw.grpcAddr, "OTLP_TOKEN=" + gatewayToken}
	clientPair := []string{"OTLP_CLIENT_CERT_FILE=" + cliCert, "OTLP_CLIENT_KEY_FILE=" + cliKey}

	t.Run("without the CA", func(t *testing.T) {
		agent, ports := startAgent(t, bin, config, append(append([]string{}, base...), clientPair...))
		sendGeneration(t, ports.grpc, "untrusted", chunks)
		waitExportFailure(t, agent, "certificate signed by unknown authority", 30*time.Second)
	})
	t.Run("without a client certificate", func(t *testing.T) {
		agent, ports := startAgent(t, bin, config, append(append([]string{}, base...), "OTLP_CA_FILE="+ca.file))
		sendGeneration(t, ports.grpc, "anonymous", chunks)
		waitExportFailure(t, agent, certificateRequired, 30*time.Second)
	})
	t.Run("a wrong token", func(t *testing.T) {
		env := append(append(setEnv(base, "OTLP_TOKEN="+wrongToken), clientPair...), "OTLP_CA_FILE="+ca.file)
		agent, ports := startAgent(t, bin, config, env)
		sendGeneration(t, ports.grpc, "wrong-token", chunks)
		waitExportFailure(t, agent, "Unauthenticated", 30*time.Second)
		if failed := telemetry(t, ports.telemetry, "otelcol_exporter_send_failed_spans", "")[""]; failed != 1 {
			t.Errorf("the agent's otelcol_exporter_send_failed_spans is %v, want 1", failed)
		}
		gatewayRefused(t, gw, cliCert, cliKey, ca)
	})
	hs.mu.Lock()
	leaked := hs.spans
	hs.mu.Unlock()
	if leaked != 0 {
		t.Errorf("the backend received %d spans from agents the gateway should have refused", leaked)
	}

	t.Run("trusted, with a client certificate", func(t *testing.T) {
		env := append(append(append([]string{}, base...), clientPair...), "OTLP_CA_FILE="+ca.file)
		refusedBefore := telemetry(t, gw.telemetryAddr(t), refusedMetric, "")[""]
		agent, ports := startAgent(t, bin, config, env)
		sendGeneration(t, ports.grpc, "trusted", chunks)
		const ttft, gaps = "gen_ai.client.operation.time_to_first_chunk", "gen_ai.client.operation.time_per_output_chunk"
		arrived := waitFor(30*time.Second, func() bool {
			hs.mu.Lock()
			defer hs.mu.Unlock()
			return hs.spans >= 1 && hs.counts[ttft] >= 1 && hs.counts[gaps] >= chunks-1
		})
		time.Sleep(2 * time.Second) // a duplicate would come now: the gateway flushes every second
		hs.mu.Lock()
		if !arrived || hs.spans != 1 || hs.counts[ttft] != 1 || hs.counts[gaps] != chunks-1 {
			t.Errorf("the gateway's backend has %d spans, %d TTFTs and %d gaps; want 1, 1 and %d (arrived within 30s: %v)",
				hs.spans, hs.counts[ttft], hs.counts[gaps], chunks-1, arrived)
		}
		if hs.badAuth != 0 {
			t.Errorf("%d requests reached the backend without the gateway's token", hs.badAuth)
		}
		hs.mu.Unlock()
		// The gateway's own telemetry: its connector recorded the one span, once.
		if recorded := telemetry(t, gw.telemetryAddr(t), "otelcol_connector_itl_metrics_spans_recorded", "")[""]; recorded != 1 {
			t.Errorf("the gateway's connector recorded %v spans, want 1", recorded)
		}
		// The agent's: its exporter sent the span and no metric point, failing none; it has no
		// connector to count with.
		sent := telemetry(t, ports.telemetry, "otelcol_exporter_sent_spans", "")[""]
		points := telemetry(t, ports.telemetry, "otelcol_exporter_sent_metric_points", "")[""] +
			telemetry(t, ports.telemetry, "otelcol_exporter_send_failed", "")[""]
		own := telemetry(t, ports.telemetry, "otelcol_connector_itl_metrics", "")
		if sent != 1 || points != 0 || len(own) != 0 {
			t.Errorf("the agent's telemetry: %v spans sent (want 1), %v metric points sent or items failed (want 0), the connector's %v (want none)", sent, points, own)
		}
		b, _ := os.ReadFile(agent.log)
		for _, bad := range []string{"unknown authority", "certificate required", "bad certificate", "MetricsService", "Unauthenticated"} {
			if strings.Contains(string(b), bad) {
				t.Errorf("the trusted agent's log says %q", bad)
			}
		}
		// The gateway refused none of the trusted agent's requests.
		if refused := telemetry(t, gw.telemetryAddr(t), refusedMetric, "")[""]; refused != refusedBefore {
			t.Errorf("the gateway counts %v refused requests, %v before the trusted agent", refused, refusedBefore)
		}
	})
}

// wrongToken is a client token the gateway does not accept.
const wrongToken = "e2e-wrong-token"

// refusedMetric counts the requests the gateway's itl_auth extension saw bearertokenauth refuse.
const refusedMetric = "otelcol_extension_itl_auth_refused"

// refusedLine starts the gateway's log line about a refused request.
const refusedLine = "Refused a request: its credentials are not ones the authenticator accepts"

// gatewayRefused checks what the gateway shows after an agent's export with a wrong token was
// refused: the refusal counted once, as gRPC with an invalid token, in its own telemetry; one
// warning that names the agent's address (on loopback) and the fix, and holds no token; and
// nothing accepted, recorded or exported. It then posts OTLP/HTTP without a token (with the client
// certificate the gateway requires): counted as HTTP with the token missing, and not logged again
// within the minute of log_interval.
func gatewayRefused(t *testing.T, gw *gateway, cliCert, cliKey string, ca *privateCA) {
	t.Helper()
	addr := gw.telemetryAddr(t)
	byReason := func() map[string]float64 { return telemetry(t, addr, refusedMetric, "reason") }
	byProtocol := func() map[string]float64 { return telemetry(t, addr, refusedMetric, "protocol") }
	if got := byReason(); !maps.Equal(got, map[string]float64{"invalid": 1}) || !maps.Equal(byProtocol(), map[string]float64{"grpc": 1}) {
		t.Errorf("the gateway's %s by reason: %v, by protocol: %v; want 1 invalid over grpc", refusedMetric, got, byProtocol())
	}
	for _, m := range []string{"otelcol_receiver_accepted_spans", "otelcol_connector_itl_metrics_spans_recorded", "otelcol_exporter_sent_spans"} {
		if n := telemetry(t, addr, m, "")[""]; n != 0 {
			t.Errorf("the gateway's %s is %v after the refused export, want 0", m, n)
		}
	}
	lines := refusedLines(t, gw.proc)
	if len(lines) != 1 {
		t.Fatalf("the gateway's log has %d lines %q, want 1", len(lines), refusedLine)
	}
	t.Logf("gateway: %s", lines[0])
	for _, want := range []string{`"remote": "127.0.0.1:`, `"protocol": "grpc"`, `"reason": "invalid"`, `"authenticator": "bearertokenauth/clients"`, "GATEWAY_TOKEN", "OTLP_TOKEN"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the gateway's line does not say %s", want)
		}
	}
	b, _ := os.ReadFile(gw.log)
	for _, token := range []string{wrongToken, gatewayToken} {
		if strings.Contains(string(b), token) {
			t.Errorf("the gateway's log holds a token, %q", token)
		}
	}

	pair, err := tls.LoadX509KeyPair(cliCert, cliKey)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: ca.pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12,
	}}}
	body, _ := ptraceotlp.NewExportRequest().MarshalProto()
	resp, err := hc.Post("https://"+gw.httpAddr+"/v1/traces", "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("OTLP/HTTP without a token: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("OTLP/HTTP without a token: status %d, want 401", resp.StatusCode)
	}
	if got := byReason(); !maps.Equal(got, map[string]float64{"invalid": 1, "missing": 1}) || !maps.Equal(byProtocol(), map[string]float64{"grpc": 1, "http": 1}) {
		t.Errorf("the gateway's %s by reason: %v, by protocol: %v; want 1 invalid and 1 missing, 1 over grpc and 1 over http", refusedMetric, got, byProtocol())
	}
	if n := len(refusedLines(t, gw.proc)); n != 1 {
		t.Errorf("the gateway's log has %d lines %q after the second refusal within log_interval, want 1", n, refusedLine)
	}
}

// refusedLines returns the lines of p's log about a refused request.
func refusedLines(t *testing.T, p *proc) []string {
	t.Helper()
	b, _ := os.ReadFile(p.log)
	var out []string
	for l := range strings.Lines(string(b)) {
		if strings.Contains(l, refusedLine) {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// telemetryAddr returns where the gateway serves its own metrics (TELEMETRY_PORT, on loopback).
func (g *gateway) telemetryAddr(t *testing.T) string {
	t.Helper()
	for _, kv := range slices.Backward(g.env) {
		if port, ok := strings.CutPrefix(kv, "TELEMETRY_PORT="); ok {
			return net.JoinHostPort("127.0.0.1", port)
		}
	}
	t.Fatal("the gateway has no TELEMETRY_PORT")
	return ""
}
