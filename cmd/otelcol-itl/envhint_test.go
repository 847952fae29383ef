package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.uber.org/zap"
)

// A setting an operator gets wrong through a variable is explained by the variable, where the
// collector names only the key: ITL_FLUSH_INTERVAL=15 with the shipped prometheus.yaml.
func TestConfigErrorNamesTheVariable(t *testing.T) {
	out, code := otelcolItl(t, []string{"ITL_FLUSH_INTERVAL=15"},
		"validate", "--config", filepath.Join("..", "..", "exporter-config", "prometheus.yaml"))
	if code != 1 {
		t.Fatalf("exit status %d, want 1\n%s", code, out)
	}
	for _, want := range []string{
		"metrics_flush_interval: 15 has no unit",
		`connectors::itl_metrics::metrics_flush_interval is "${env:ITL_FLUSH_INTERVAL:-15s}" in ../../exporter-config/prometheus.yaml: ITL_FLUSH_INTERVAL="15"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n  "); n != 1 {
		t.Errorf("%d keys explained, want 1 (no other key is in the error):\n%s", n, out)
	}
}

// An address taken by another process is traced to the default that chose it, and the variable
// that changes it: the collector's error prints only the address.
func TestBindErrorNamesTheVariable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`
receivers: {otlp: {protocols: {grpc: {endpoint: "127.0.0.1:0"}}}}
exporters: {debug: {}}
extensions: {health_check: {endpoint: "${env:ITL_TEST_HEALTH_ENDPOINT:-%s}"}}
service:
  extensions: [health_check]
  telemetry: {metrics: {level: none}}
  pipelines: {traces: {receivers: [otlp], exporters: [debug]}}
`, l.Addr())), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := otelcolItl(t, nil, "--config", cfg)
	if code != 1 {
		t.Fatalf("exit status %d, want 1\n%s", code, out)
	}
	want := fmt.Sprintf(`extensions::health_check::endpoint is "${env:ITL_TEST_HEALTH_ENDPOINT:-%s}" in %s: ITL_TEST_HEALTH_ENDPOINT is unset, so its default %q applies`, l.Addr(), cfg, l.Addr().String())
	if !strings.Contains(out, "address already in use") || !strings.Contains(out, want) {
		t.Errorf("the output lacks the bind error or %q:\n%s", want, out)
	}
}

// TestInvalidYAMLWithAVariable: a shipped config broken by an edit (a key out of line), which the
// resolver retrieves as one string holding its ${env:...} references, is refused with the YAML
// error, where otelcol-itl panicked (index out of range [-1]) explaining it, at validate and start.
func TestInvalidYAMLWithAVariable(t *testing.T) {
	shipped, err := os.ReadFile(filepath.Join("..", "..", "exporter-config", "debug.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(t.TempDir(), "debug.yaml")
	if err := os.WriteFile(broken, append(shipped, "\n  misplaced: ${env:ITL_FLUSH_INTERVAL}\nnot yaml\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"validate", "--config", broken}, {"--config", broken}} {
		out, code := otelcolItl(t, nil, args...)
		if code != 1 || !strings.Contains(out, "contents are not valid YAML") || strings.Contains(out, "panic") {
			t.Errorf("%v: exit status %d, want 1 with the YAML error and no panic:\n%s", args, code, out)
		}
	}
}

// noted returns the sources the wrapped yaml provider notes of doc.
func noted(t *testing.T, doc string) *envSources {
	t.Helper()
	s := &envSources{}
	p := s.wrap(yamlprovider.NewFactory()).Create(confmap.ProviderSettings{Logger: zap.NewNop()})
	if _, err := p.Retrieve(context.Background(), "yaml:"+doc, nil); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestExplain(t *testing.T) {
	t.Setenv("ITL_TEST_TOKEN", "s3cr3t-value")
	t.Setenv("ITL_TEST_HOST", "127.0.0.1")
	t.Setenv("ITL_TEST_PORT", "abc")
	t.Setenv("ITL_TEST_EMPTY", " ")
	s := noted(t, `{
exporters: {otlp_grpc: {headers: {authorization: "Bearer ${env:ITL_TEST_TOKEN}"}, endpoint: "${ITL_TEST_HOST}:${env:ITL_TEST_PORT}"}},
receivers: {otlp: {protocols: {grpc: {endpoint: "${env:ITL_TEST_EMPTY:-127.0.0.1:4317}"}, http: {endpoint: "$${env:ITL_TEST_ESCAPED}"}}}},
processors: {itl: {stall_threshold: "${env:ITL_TEST_UNSET}"}}}`)
	for _, c := range []struct {
		name, err string
		want      []string // lines of the explanation; none: no explanation
	}{
		{"a secret's value is not shown", `'exporters' error reading configuration for "otlp_grpc": 'headers.authorization' is wrong`,
			[]string{`exporters::otlp_grpc::headers::authorization is "Bearer ${env:ITL_TEST_TOKEN}" in the yaml: configuration given on the command line:`, `ITL_TEST_TOKEN is set (its value is not shown)`}},
		{"two variables in one value, the one without a scheme too", `exporters::otlp_grpc: endpoint: port "abc" is not a number`,
			[]string{`exporters::otlp_grpc::endpoint is "${ITL_TEST_HOST}:${env:ITL_TEST_PORT}"`, `ITL_TEST_HOST="127.0.0.1"; ITL_TEST_PORT="abc"`}},
		{"an empty variable's default, found by value", "listen tcp 127.0.0.1:4317: bind: address already in use",
			[]string{`receivers::otlp::protocols::grpc::endpoint`, `ITL_TEST_EMPTY is empty, so its default "127.0.0.1:4317" applies`}},
		{"an unset variable without a default", "processors::itl: stall_threshold: must be positive",
			[]string{`processors::itl::stall_threshold is "${env:ITL_TEST_UNSET}"`, "ITL_TEST_UNSET is unset"}},
		{"a value inside a longer one is not it", "listen tcp 127.0.0.1:43170: bind: address already in use", nil},
		{"the key under another component is not it", `'exporters' error reading configuration for "debug": 'endpoint' is wrong`, nil},
		{"an error naming the variable already", "environment variable ITL_TEST_UNSET is unset: processors::itl: stall_threshold", nil},
		{"an escaped reference is text, and the grpc endpoint not the http one", `receivers::otlp: protocols: http: endpoint: bad`, nil},
		{"the grpc endpoint named by its path", `receivers::otlp: protocols: grpc: endpoint: bad`,
			[]string{`receivers::otlp::protocols::grpc::endpoint`}},
		{"a secret's value is never matched", "bad token s3cr3t-value", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := s.explain(errors.New(c.err))
			if !checkExplained(t, got, c.want) {
				return
			}
			if strings.Contains(got, "s3cr3t") {
				t.Errorf("the explanation shows a secret:\n%s", got)
			}
			if n := strings.Count(got, "\n  "); n != 1 {
				t.Errorf("%d keys explained, want 1:\n%s", n, got)
			}
		})
	}
}

// TestExplainHostile: the cases an attack on the first version found. A header's value is a secret
// whatever its variable is called; a key is named only where the error names its section, its
// component and its place, whole (not otlphttp inside otlphttp/backup, nor x-honeycomb-team inside
// x-honeycomb-team-v2); references side by side, after an escaped dollar, and inside a default
// are each found.
func TestExplainHostile(t *testing.T) {
	t.Setenv("HONEYCOMB_TEAM", "hcaik_SECRET1")
	t.Setenv("OTLP_TEST_ENDPOINT", "backend.example:4317")
	t.Setenv("PRIMARY_TIMEOUT", "30s")
	t.Setenv("ITL_TEST_A", "5")
	t.Setenv("ITL_TEST_B", "x")
	t.Setenv("ITL_TEST_V", "")
	t.Setenv("ITL_TEST_W", "fallback-value")
	s := noted(t, `{
exporters: {
  otlphttp: {headers: {x-honeycomb-team: "${env:HONEYCOMB_TEAM}"}, timeout: "${env:PRIMARY_TIMEOUT}"},
  otlp: {endpoint: "${env:OTLP_TEST_ENDPOINT}"},
  otlphttp/backup: {timeout: fast}},
receivers: {otlp: {protocols: {grpc: {endpoint: "127.0.0.1:4317"}}}},
processors: {itl: {stall_threshold: "${env:ITL_TEST_A}${env:ITL_TEST_B}", max_chunks: "$$${env:ITL_TEST_A}"}},
connectors: {itl_metrics: {metrics_flush_interval: "${env:ITL_TEST_V:-${env:ITL_TEST_W}}"}}}`)
	for _, c := range []struct {
		name, err string
		want      []string // lines of the explanation; none: no explanation
	}{
		{"a header's value under any name", `'exporters' error reading configuration for "otlphttp": 'headers.x-honeycomb-team' expected a map`,
			[]string{"HONEYCOMB_TEAM is set (its value is not shown)"}},
		{"a longer header's name is not it", `'exporters' error reading configuration for "otlphttp": 'headers.x-honeycomb-team-v2' expected a map`, nil},
		{"a receiver is not an exporter of the same name", `'receivers' error reading configuration for "otlp": 'protocols.grpc.endpoint' expected a string`, nil},
		{"otlphttp/backup is not otlphttp", `'exporters' error reading configuration for "otlphttp/backup": 'timeout' time: invalid duration "fast"`, nil},
		{"two references side by side", `'processors' error reading configuration for "itl": '' stall_threshold: "5x" is not a duration`,
			[]string{`ITL_TEST_A="5"; ITL_TEST_B="x"`}},
		{"a reference after an escaped dollar", `'processors' error reading configuration for "itl": '' max_chunks: "$5" is not a number`,
			[]string{`processors::itl::max_chunks is "$$${env:ITL_TEST_A}"`, `ITL_TEST_A="5"`}},
		{"a reference inside a default", `'connectors' error reading configuration for "itl_metrics": '' metrics_flush_interval: "fallback-value" is not a duration`,
			[]string{`ITL_TEST_V is empty, so its default "${env:ITL_TEST_W}" applies; ITL_TEST_W="fallback-value"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := s.explain(errors.New(c.err))
			if strings.Contains(got, "SECRET1") {
				t.Fatalf("the explanation shows a secret:\n%s", got)
			}
			checkExplained(t, got, c.want)
		})
	}
	// The value as the resolver makes it: escaped dollars halved, a default's references expanded.
	for raw, want := range map[string]string{
		"$$${env:ITL_TEST_A}":                  "$5",
		"$${env:ITL_TEST_A}":                   "${env:ITL_TEST_A}",
		"${ITL_TEST_A}${env:ITL_TEST_B}":       "5x",
		"${env:ITL_TEST_V:-${env:ITL_TEST_W}}": "fallback-value",
		"${env:ITL_TEST_V:-a:b}}":              "a:b}",
		"${file:/etc/x} ${env:ITL_TEST_A}":     "${file:/etc/x} 5",
	} {
		if got := expand(raw); got != want {
			t.Errorf("expand(%q) = %q, want %q", raw, got, want)
		}
	}
}

// TestExplainSection: an error about a section as a whole, naming none of its keys, is traced to
// every variable the section takes; configtls refuses a certificate without its key so, where the
// explanation was empty (found by an operator setting OTLP_CLIENT_CERT_FILE alone). The key file's
// path is shown (a path, not a secret: the operator needs it, and found it hidden); another
// section's variables are not named, nor the CA file's, which the error's fields (CertFile, KeyFile)
// leave out.
func TestExplainSection(t *testing.T) {
	t.Setenv("ITL_TEST_CERT", "/etc/agent/cert.pem")
	s := noted(t, `{
exporters: {
  otlp_grpc: {endpoint: "${env:ITL_TEST_ENDPOINT:-gateway:4317}", tls: {ca_file: "${env:ITL_TEST_CA:-}", cert_file: "${env:ITL_TEST_CERT:-}", key_file: "${env:ITL_TEST_KEYFILE:-/etc/agent/key.pem}"}},
  otlp_http: {tls: {cert_file: "${env:ITL_TEST_OTHER_CERT:-}"}}}}`)
	got := s.explain(errors.New("exporters::otlp_grpc::clientconfig::tls: TLS configuration must include both certificate and key (CertFile/CertPem and KeyFile/KeyPem)\n" +
		"exporters::otlp_grpc::clientconfig::tls::config: TLS configuration must include both certificate and key (CertFile/CertPem and KeyFile/KeyPem)"))
	checkExplained(t, got, []string{`exporters::otlp_grpc::tls::cert_file is "${env:ITL_TEST_CERT:-}"`, `ITL_TEST_CERT="/etc/agent/cert.pem"`,
		`exporters::otlp_grpc::tls::key_file is "${env:ITL_TEST_KEYFILE:-/etc/agent/key.pem}"`, `ITL_TEST_KEYFILE is unset, so its default "/etc/agent/key.pem" applies`})
	for _, not := range []string{"ITL_TEST_ENDPOINT", "ITL_TEST_OTHER_CERT", "ITL_TEST_CA"} {
		if strings.Contains(got, not) {
			t.Errorf("the explanation names %s, outside the section:\n%s", not, got)
		}
	}
}

// TestExplainSharedVariable: keys written alike in one document, from one variable (gateway.yaml's
// two receivers' client_ca_file), are one line naming both, where each had its line, the same
// variable and value in each; keys written otherwise keep a line each.
func TestExplainSharedVariable(t *testing.T) {
	t.Setenv("ITL_TEST_CA", "/etc/ca.txt")
	t.Setenv("ITL_TEST_OTHER_CA", "/etc/other-ca.pem")
	s := noted(t, `{receivers: {otlp: {protocols: {
grpc: {tls: {client_ca_file: "${env:ITL_TEST_CA:-}"}},
http: {tls: {client_ca_file: "${env:ITL_TEST_CA:-}"}}}}},
exporters: {otlp_grpc: {tls: {ca_file: "${env:ITL_TEST_OTHER_CA}"}}}}`)
	got := s.explain(errors.New(`receivers::otlp::protocols::grpc::tls::client_ca_file and receivers::otlp::protocols::http::tls::client_ca_file: "/etc/ca.txt" is not a PEM certificate`))
	want := "Set from environment variables (change the variable, not the file):\n" +
		`  receivers::otlp::protocols::grpc::tls::client_ca_file and receivers::otlp::protocols::http::tls::client_ca_file are "${env:ITL_TEST_CA:-}" in the yaml: configuration given on the command line: ITL_TEST_CA="/etc/ca.txt"`
	if got != want {
		t.Errorf("explanation\n%s\nwant\n%s", got, want)
	}
	got = s.explain(errors.New(`receivers::otlp::protocols::grpc::tls::client_ca_file: bad` + "\n" + `exporters::otlp_grpc::tls::ca_file: bad`))
	if n := strings.Count(got, "\n  "); n != 2 || strings.Contains(got, " are ") {
		t.Errorf("%d lines, want one a key:\n%s", n, got)
	}
}

// TestExplainBarePort: a bare port given where a listen address belongs is traced to its variable,
// where values under 6 bytes were never matched (found by an operator giving
// GATEWAY_GRPC_ENDPOINT=14317); the same port elsewhere in an error is not it.
func TestExplainBarePort(t *testing.T) {
	t.Setenv("ITL_TEST_GRPC", "14317")
	s := noted(t, `{receivers: {otlp: {protocols: {grpc: {endpoint: "${env:ITL_TEST_GRPC}"}}}}}`)
	checkExplained(t, s.explain(errors.New("failed to start \"otlp\" receiver: listen tcp: address 14317: missing port in address")),
		[]string{`receivers::otlp::protocols::grpc::endpoint is "${env:ITL_TEST_GRPC}"`, `ITL_TEST_GRPC="14317"`})
	checkExplained(t, s.explain(errors.New("dial tcp 127.0.0.1:14317: connect: connection refused")), nil)
}

// TestExplainTelemetryAndTypos: a busy telemetry port, whose host and port are set apart, is
// traced to both variables; a misspelled key gets no variable trailer (the fix is in the file).
// Found by a newcomer running two shipped configs at once.
func TestExplainTelemetryAndTypos(t *testing.T) {
	s := noted(t, `{
service: {telemetry: {metrics: {readers: [{pull: {exporter: {prometheus: {host: "${env:ITL_TEST_THOST:-127.0.0.1}", port: "${env:ITL_TEST_TPORT:-8888}"}}}}]}}},
connectors: {itl_metrics: {metrics_flush_intervall: "${env:ITL_FLUSH_INTERVAL}"}}}`)
	got := s.explain(errors.New("failed to create meter provider: binding address 127.0.0.1:8888 for Prometheus exporter: listen tcp 127.0.0.1:8888: bind: address already in use"))
	for _, w := range []string{`prometheus::host is "${env:ITL_TEST_THOST:-127.0.0.1}"`, `prometheus::port is "${env:ITL_TEST_TPORT:-8888}"`, `ITL_TEST_TPORT is unset, so its default "8888" applies`} {
		if !strings.Contains(got, w) {
			t.Errorf("explanation lacks %q:\n%s", w, got)
		}
	}
	if got := s.explain(errors.New("'connectors' error reading configuration for \"itl_metrics\": '' metrics_flush_intervall: not a setting; did you mean metrics_flush_interval?")); got != "" {
		t.Errorf("a misspelled key explained as a variable's:\n%s", got)
	}
	// The collector's own words for a misspelt key of a component we did not write: its variable's
	// line said "change the variable, not the file", where the fix is the key in the file.
	s = noted(t, `{
exporters: {otlp_grpc: {tls: {insecur: "${env:ITL_TEST_INSECURE:-false}"}}},
extensions: {health_check: {endpont: "${env:ITL_TEST_HEALTH:-127.0.0.1:13133}"}},
service: {telemetry: {metrics: {readers: [{pull: {exporter: {prometheus: {hots: "${env:ITL_TEST_THOST:-127.0.0.1}"}}}}]}}}}`)
	for _, msg := range []string{
		"'exporters' error reading configuration for \"otlp_grpc\": decoding failed due to the following error(s):\n\n'tls' has invalid keys: insecur",
		"'extensions' error reading configuration for \"health_check\": decoding failed due to the following error(s):\n\n'healthcheck.Config' has invalid keys: endpont",
		"'service.telemetry.metrics' decoding failed due to the following error(s):\n\n'readers[0].pull.exporter.prometheus' has invalid keys: hots",
	} {
		if got := s.explain(errors.New(msg)); got != "" {
			t.Errorf("a misspelled key explained as a variable's:\n%s\n%s", msg, got)
		}
	}
}

// checkExplained checks an explanation: none when want is empty, else one holding every line of
// want. It reports whether there was one to check further.
func checkExplained(t *testing.T, got string, want []string) bool {
	t.Helper()
	if len(want) == 0 {
		if got != "" {
			t.Errorf("explanation %q, want none", got)
		}
		return false
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("explanation lacks %q:\n%s", w, got)
		}
	}
	return true
}

// TestBindErrorNamesOnlyTheFailingPart: an agent whose receiver cannot bind its address names the
// receiver's variable, not OTLP_ENDPOINT, which holds the same address (the gateway it sends to
// on the same host) and which the error was matched to by value alone (found by an operator
// running agent.yaml beside gateway.yaml with OTLP_GRPC_ENDPOINT left at the gateway's address).
func TestBindErrorNamesOnlyTheFailingPart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr := l.Addr().String()
	out, code := otelcolItl(t, []string{"OTLP_ENDPOINT=" + addr, "OTLP_TOKEN=t", "OTLP_GRPC_ENDPOINT=" + addr,
		"OTLP_HTTP_ENDPOINT=127.0.0.1:0", "HEALTH_CHECK_ENDPOINT=127.0.0.1:0", "TELEMETRY_PORT=0", "ITL_QUEUE_DIR=" + t.TempDir()},
		"--config", filepath.Join("..", "..", "exporter-config", "agent.yaml"))
	if code != 1 || !strings.Contains(out, "address already in use") {
		t.Fatalf("exit status %d, want 1 and a bind error:\n%s", code, out)
	}
	if want := `receivers::otlp::protocols::grpc::endpoint is "${env:OTLP_GRPC_ENDPOINT:-127.0.0.1:4317}"`; !strings.Contains(out, want) {
		t.Errorf("the output lacks %q:\n%s", want, out)
	}
	if strings.Contains(out, "OTLP_ENDPOINT=") || strings.Contains(out, "exporters::otlp_grpc::endpoint") {
		t.Errorf("the exporter's endpoint is named as a suspect of the receiver's bind error:\n%s", out)
	}
}

// TestExplainValueInTheFailingPart: a value found in an error names the keys of the part the error
// says failed (a receiver, the extensions, the collector's telemetry), not another key holding the
// same value; an error naming no part names every key holding it, as before.
func TestExplainValueInTheFailingPart(t *testing.T) {
	t.Setenv("ITL_TEST_SAME", "127.0.0.1:24317")
	s := noted(t, `{
receivers: {otlp: {protocols: {grpc: {endpoint: "${env:ITL_TEST_SAME}"}}}},
exporters: {otlp_grpc: {endpoint: "${env:ITL_TEST_SAME}"}},
extensions: {health_check: {endpoint: "${env:ITL_TEST_SAME}"}}}`)
	const bind = "listen tcp 127.0.0.1:24317: bind: address already in use"
	for _, c := range []struct {
		err       string
		want, not []string
	}{
		{`cannot start pipelines: failed to start "otlp" receiver: ` + bind,
			[]string{"receivers::otlp::protocols::grpc::endpoint"}, []string{"exporters::", "extensions::"}},
		{"failed to start extensions: failed to bind to address 127.0.0.1:24317: " + bind,
			[]string{"extensions::health_check::endpoint"}, []string{"exporters::", "receivers::"}},
		{`failed to start "otlp_grpc/other" exporter: ` + bind, nil, nil},
		{bind, []string{"receivers::", "exporters::", "extensions::"}, nil},
	} {
		got := s.explain(errors.New(c.err))
		checkExplained(t, got, c.want)
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("%s: the explanation names %s:\n%s", c.err, n, got)
			}
		}
	}
}
