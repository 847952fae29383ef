package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// setEnv returns env with each NAME=value of kvs in place of NAME's earlier values; a bare NAME
// (no "=") only removes them.
func setEnv(env []string, kvs ...string) []string {
	out := slices.Clone(env)
	for _, kv := range kvs {
		name, _, set := strings.Cut(kv, "=")
		out = slices.DeleteFunc(out, func(e string) bool { return strings.HasPrefix(e, name+"=") })
		if set {
			out = append(out, kv)
		}
	}
	return out
}

func TestSetEnv(t *testing.T) {
	got := setEnv([]string{"A=1", "B=2", "AB=3", "A=4"}, "A=5", "B", "C=")
	if want := []string{"AB=3", "A=5", "C="}; !slices.Equal(got, want) {
		t.Errorf("setEnv: %q, want %q", got, want)
	}
}

// TestBackendPrivateCA runs the shipped otlp.yaml against an OTLP/gRPC backend, and otlphttp.yaml
// against an OTLP/HTTP backend over https://, each serving a certificate that a private CA signed
// and requiring a client certificate from the same CA (tls.RequireAndVerifyClientCert), as a
// self-hosted backend with mTLS does. Each config runs three times, against a fresh backend, and
// is sent three generations each time:
//   - without OTLP_CA_FILE the collector verifies the backend against the system's roots: its
//     exporter logs that the export failed, "certificate signed by unknown authority", the
//     backend fails the handshake and accepts nothing;
//   - with OTLP_CA_FILE but no OTLP_CLIENT_CERT_FILE and OTLP_CLIENT_KEY_FILE the backend refuses
//     the handshake: the exporter logs the failure, "certificate required", and the backend
//     accepts nothing;
//   - with all three the backend receives the three spans and the connector's points (one series
//     of each histogram, counting the three generations), every message over a connection that
//     presented the collector's client certificate, and fails no handshake; the collector logs
//     no failed export;
//   - otlp.yaml only: the same with OTLP_INSECURE=true as well, as its comments promise that a CA
//     file turns TLS on even then (configtls: insecure applies only without a CA); and
//     OTLP_INSECURE=true without the CA file sends in plain text, which the backend refuses.
func TestBackendPrivateCA(t *testing.T) {
	requireE2E(t)
	const gens, chunks = 3, 12
	ca := newPrivateCA(t)
	srvCert, srvKey := ca.server(t, "backend")
	cliCert, cliKey := ca.client(t, "collector")
	clientPair := []string{"OTLP_CLIENT_CERT_FILE=" + cliCert, "OTLP_CLIENT_KEY_FILE=" + cliKey}
	caFile := "OTLP_CA_FILE=" + ca.file

	for _, c := range []struct{ config, proto string }{{"otlp.yaml", "grpc"}, {"otlphttp.yaml", "http"}} {
		t.Run(c.config, func(t *testing.T) {
			cfg := filepath.Join(repoRoot(), "exporter-config", c.config)
			// run starts a backend with mTLS and the config against it with env added, and sends
			// it gens generations.
			run := func(t *testing.T, env ...string) (*limitedBackend, shippedSetup) {
				t.Helper()
				b := newLimitedBackend()
				b.certFile, b.keyFile, b.clientCAs = srvCert, srvKey, ca.pool
				var s shippedSetup
				switch c.proto {
				case "grpc":
					s = shippedEnv(t, cfg, startLimitedGRPC(t, b), "127.0.0.1:1")
					// shippedEnv sends in plain text (OTLP_INSECURE=true); the config's default
					// is TLS, which without a CA file verifies with the system's roots.
					s.env = setEnv(s.env, "OTLP_INSECURE")
				case "http":
					s = shippedEnv(t, cfg, "127.0.0.1:1", "127.0.0.1:1")
					s.env = setEnv(s.env, "OTLP_HTTP_URL=https://"+startLimitedHTTP(t, b))
				}
				s.env = setEnv(s.env, env...)
				startShipped(t, cfg, &s)
				for range gens {
					sendGeneration(t, s.ports.grpc, "private-ca", chunks)
				}
				return b, s
			}
			// refused checks that the collector logs an export failure that says reason, and that
			// the backend failed a handshake and accepted nothing.
			refused := func(t *testing.T, b *limitedBackend, s shippedSetup, reason string) {
				t.Helper()
				waitExportFailure(t, s.proc, reason, 30*time.Second)
				waitFor(10*time.Second, func() bool { n, _ := b.handshakeFailures(); return n > 0 })
				n, why := b.handshakeFailures()
				if n == 0 {
					t.Error("the backend failed no TLS handshake")
				} else {
					t.Logf("the backend failed %d handshakes: %q", n, why)
				}
				if spans, clients := b.spanCount(), b.clientsOf(); spans != 0 || b.hasMetrics() || len(clients) != 0 {
					t.Errorf("the backend accepted %d spans, metrics %v, messages by client %v; want nothing", spans, b.hasMetrics(), clients)
				}
			}

			t.Run("without the CA", func(t *testing.T) {
				b, s := run(t, clientPair...)
				refused(t, b, s, "certificate signed by unknown authority")
			})
			t.Run("without a client certificate", func(t *testing.T) {
				b, s := run(t, caFile)
				refused(t, b, s, certificateRequired)
			})
			// delivered checks that the backend received the spans and the connector's points, once,
			// every message over a connection with the collector's client certificate, and that the
			// collector failed nothing.
			delivered := func(t *testing.T, b *limitedBackend, s shippedSetup) {
				t.Helper()
				want := map[string]uint64{
					"gen_ai.client.operation.time_to_first_chunk":   gens,
					"gen_ai.client.operation.time_per_output_chunk": gens * (chunks - 1),
					"gen_ai.client.operation.duration":              gens,
				}
				all := func() bool {
					for m, count := range want {
						if series, c := b.observations(m); series != 1 || c != count {
							return false
						}
					}
					return b.spanCount() == gens
				}
				arrived := waitFor(30*time.Second, all)
				time.Sleep(2 * time.Second) // a duplicate span would come now: the connector flushes every second
				if !arrived || b.spanCount() != gens {
					t.Errorf("the backend received %d spans, want %d (arrived within 30s: %v)", b.spanCount(), gens, arrived)
				}
				for m, count := range want {
					if series, c := b.observations(m); series != 1 || c != count {
						t.Errorf("%s: the backend holds %d series counting %d, want 1 counting %d", m, series, c, count)
					}
				}
				clients := b.clientsOf()
				for _, signal := range []string{"traces", "metrics"} {
					if clients[signal]["collector"] == 0 || len(clients[signal]) != 1 {
						t.Errorf("%s messages by the common name of the client certificate they came with (\"\": none): %v, want the collector's only",
							signal, clients[signal])
					}
				}
				if n, why := b.handshakeFailures(); n != 0 {
					t.Errorf("the backend failed %d handshakes of the trusted collector: %q", n, why)
				}
				if failed := telemetry(t, s.ports.telemetry, "otelcol_exporter_send_failed", "")[""]; failed != 0 {
					t.Errorf("the collector's exporter failed to send %v items", failed)
				}
				log, _ := os.ReadFile(s.proc.log)
				for _, bad := range []string{"Exporting failed", "unknown authority", "certificate required", "bad certificate"} {
					if strings.Contains(string(log), bad) {
						t.Errorf("the trusted collector's log says %q", bad)
					}
				}
				t.Logf("%s: %d spans; messages by client certificate %v", c.config, b.spanCount(), clients)
			}
			t.Run("trusted, with a client certificate", func(t *testing.T) {
				b, s := run(t, append([]string{caFile}, clientPair...)...)
				delivered(t, b, s)
			})
			if c.proto == "grpc" {
				// otlp.yaml: "A CA file turns TLS on, even with OTLP_INSECURE=true". Were it plain
				// text, the backend would fail the handshake and receive nothing.
				t.Run("a CA file with OTLP_INSECURE=true", func(t *testing.T) {
					b, s := run(t, append([]string{caFile, "OTLP_INSECURE=true"}, clientPair...)...)
					delivered(t, b, s)
				})
				// And without one it sends in plain text, client certificate or not: the backend
				// fails every handshake ("does not look like a TLS handshake") and accepts nothing.
				t.Run("OTLP_INSECURE=true without a CA file", func(t *testing.T) {
					b, _ := run(t, append([]string{"OTLP_INSECURE=true"}, clientPair...)...)
					const plain = "does not look like a TLS handshake"
					if !waitFor(30*time.Second, func() bool {
						_, why := b.handshakeFailures()
						return slices.ContainsFunc(why, func(w string) bool { return strings.Contains(w, plain) })
					}) {
						_, why := b.handshakeFailures()
						t.Errorf("the backend failed no handshake with %q within 30s: %q", plain, why)
					}
					if spans, clients := b.spanCount(), b.clientsOf(); spans != 0 || b.hasMetrics() || len(clients) != 0 {
						t.Errorf("the backend accepted %d spans, metrics %v, messages by client %v; want nothing", spans, b.hasMetrics(), clients)
					}
				})
			}
		})
	}
}
