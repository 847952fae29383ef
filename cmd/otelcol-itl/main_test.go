package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/otelcol"
	"gopkg.in/yaml.v3"
)

// shippedConfigs returns every collector configuration in exporter-config, the builder manifest
// aside.
func shippedConfigs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "exporter-config", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if filepath.Base(f) != "builder-config.yaml" {
			out = append(out, f)
		}
	}
	if len(out) < 6 {
		t.Fatalf("found only %d configs in exporter-config: %v", len(out), out)
	}
	return out
}

// setConfigEnv sets the variables the shipped configs take endpoints and secrets from.
func setConfigEnv(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	cert, key := writeCertKey(t, dir, "gateway") // a certificate and its key (settingFiles reads them)
	for k, v := range map[string]string{
		"OTLP_ENDPOINT":               "127.0.0.1:14317",
		"OTLP_TOKEN":                  "test-token",
		"OTLP_HTTP_URL":               "http://127.0.0.1:14318",
		"PROMETHEUS_REMOTE_WRITE_URL": "http://127.0.0.1:19090/api/v1/write",
		"PROMETHEUS_OTLP_URL":         "http://127.0.0.1:19090/api/v1/otlp",
		"GATEWAY_TOKEN":               "test-gateway-token",
		"TLS_CERT_FILE":               cert,
		"TLS_KEY_FILE":                key,
		"ITL_QUEUE_DIR":               filepath.Join(dir, "queue"),
	} {
		t.Setenv(k, v)
	}
}

func dryRun(t *testing.T, uri string) error {
	t.Helper()
	set := Settings()
	set.ConfigProviderSettings.ResolverSettings.URIs = []string{uri}
	col, err := otelcol.NewCollector(set)
	if err != nil {
		return err
	}
	return col.DryRun(context.Background())
}

// TestShippedConfigsValidate loads every shipped configuration into the distribution and validates
// it, as `otelcol-itl validate` does.
func TestShippedConfigsValidate(t *testing.T) {
	setConfigEnv(t)
	for _, f := range shippedConfigs(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if err := dryRun(t, "file:"+f); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestBadConfigNamesTheField(t *testing.T) {
	cfg := `
receivers: {otlp: {protocols: {grpc: {endpoint: 127.0.0.1:4317}}}}
processors: {itl: {stall_threshold: 0s}}
connectors: {itl_metrics: {aggregation_temporality: sideways}}
exporters: {debug: {}}
service:
  pipelines:
    traces: {receivers: [otlp], processors: [itl], exporters: [itl_metrics]}
    metrics: {receivers: [itl_metrics], exporters: [debug]}
`
	err := dryRun(t, "yaml:"+cfg)
	if err == nil {
		t.Fatal("want a validation error")
	}
	for _, want := range []string{"stall_threshold: 0s is outside [1ms, 1h0m0s]; the default is 250ms", `aggregation_temporality: "sideways" is not known`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestComponents(t *testing.T) {
	f, err := Components()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"receivers":  {"otlp"},
		"processors": {"memory_limiter", "batch", "itl", "deltatocumulative"},
		"connectors": {"itl_metrics", "span_metrics"},
		"exporters":  {"debug", "otlp_grpc", "otlp_http", "prometheus", "prometheus_remote_write"},
		"extensions": {"health_check", "file_storage", "pprof", "bearertokenauth", "itl_auth"},
	}
	have := map[string]map[string]bool{"receivers": {}, "processors": {}, "connectors": {}, "exporters": {}, "extensions": {}}
	for k := range f.Receivers {
		have["receivers"][k.String()] = true
	}
	for k := range f.Processors {
		have["processors"][k.String()] = true
	}
	for k := range f.Connectors {
		have["connectors"][k.String()] = true
	}
	for k := range f.Exporters {
		have["exporters"][k.String()] = true
	}
	for k := range f.Extensions {
		have["extensions"][k.String()] = true
	}
	for kind, names := range want {
		for _, n := range names {
			if !have[kind][n] {
				t.Errorf("%s: %s missing (have %v)", kind, n, have[kind])
			}
		}
	}
}

var envRef = regexp.MustCompile(`\$\{env:[A-Z0-9_]+(?::-([^}]*))?\}`)

// TestReceiversStayOnLoopbackOrUseTLS fails when a shipped configuration makes a receiver listen
// beyond localhost without TLS. Endpoints from the environment are judged by their default.
func TestReceiversStayOnLoopbackOrUseTLS(t *testing.T) {
	for _, f := range shippedConfigs(t) {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct {
			Receivers map[string]struct {
				Protocols map[string]struct {
					Endpoint string         `yaml:"endpoint"`
					TLS      map[string]any `yaml:"tls"`
				} `yaml:"protocols"`
			} `yaml:"receivers"`
		}
		if err := yaml.Unmarshal(raw, &cfg); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		checked := 0
		for name, r := range cfg.Receivers {
			for proto, p := range r.Protocols {
				checked++
				ep := envRef.ReplaceAllString(p.Endpoint, "$1")
				host, _, err := net.SplitHostPort(ep)
				if err != nil {
					t.Errorf("%s: receiver %s/%s: endpoint %q has no host:port default", f, name, proto, p.Endpoint)
					continue
				}
				loopback := host == "localhost" || (net.ParseIP(host) != nil && net.ParseIP(host).IsLoopback())
				if !loopback && p.TLS["cert_file"] == nil {
					t.Errorf("%s: receiver %s/%s listens on %q without TLS", f, name, proto, ep)
				}
			}
		}
		if checked == 0 {
			t.Errorf("%s: no receiver endpoint found to check", f)
		}
	}
}

// runMain is the variable that makes the test binary run main with the arguments it holds (split
// at newlines) instead of the tests: see TestMain.
const runMain = "OTELCOL_ITL_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if args := os.Getenv(runMain); args != "" {
		os.Args = append([]string{"otelcol-itl"}, strings.Split(args, "\n")...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// otelcolItl runs main with args in a child process of the test binary, with env added to the
// environment, and returns what it printed and its exit status.
func otelcolItl(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	out, _, code := run(t, env, true, args...)
	return out, code
}

// otelcolItlStreams is otelcolItl with what main printed on stdout and on stderr apart.
func otelcolItlStreams(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return run(t, env, false, args...)
}

func run(t *testing.T, env []string, combined bool, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), runMain+"="+strings.Join(args, "\n")), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if combined {
		cmd.Stderr = &stdout
	}
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), 0
}

// A bad configuration is printed once, and otelcol-itl exits with status 1.
func TestConfigErrorPrintedOnce(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(cfg, []byte(`
receivers: {otlp: {protocols: {grpc: {endpoint: 127.0.0.1:4317}}}}
processors: {itl: {stall_threshold: 0s}}
exporters: {debug: {}}
service: {pipelines: {traces: {receivers: [otlp], processors: [itl], exporters: [debug]}}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := otelcolItl(t, nil, "validate", "--config", cfg)
	if code != 1 {
		t.Fatalf("exit status %d, want 1\n%s", code, out)
	}
	if n := strings.Count(out, "stall_threshold: 0s is outside"); n != 1 || !strings.HasPrefix(out, "Error: ") {
		t.Errorf("the error is printed %d times, want once, after \"Error: \":\n%s", n, out)
	}
}

// An empty name in excluded_scopes, which would exclude no span, is refused by validate with the
// component, the key's index and the fix, for the processor and the connector alike: the
// distribution runs both components' checks of the setting.
func TestValidateRefusesEmptyExcludedScope(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "scopes.yaml")
	if err := os.WriteFile(cfg, []byte(`
receivers: {otlp: {protocols: {grpc: {endpoint: 127.0.0.1:4317}}}}
processors: {itl: {excluded_scopes: [""]}}
connectors: {itl_metrics: {excluded_scopes: [app.llm.instrumentation, ""]}}
exporters: {debug: {}}
service:
  pipelines:
    traces: {receivers: [otlp], processors: [itl], exporters: [itl_metrics]}
    metrics: {receivers: [itl_metrics], exporters: [debug]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := otelcolItl(t, nil, "validate", "--config", cfg)
	if code != 1 {
		t.Errorf("exit status %d, want 1\n%s", code, out)
	}
	const fix = "a scope name must not be empty; write the instrumentation scope's name as its spans carry it, such as @traceloop/instrumentation-openai"
	for _, want := range []string{"processors::itl: excluded_scopes[0]: " + fix, "connectors::itl_metrics: excluded_scopes[1]: " + fix} {
		if !strings.Contains(out, want) {
			t.Errorf("validate printed no %q:\n%s", want, out)
		}
	}
}

// A component's own decoding error follows the component's name, without the empty name (two single quotes) the
// collector's decoder put between them. A misspelt key's error is a list the decoder puts on lines
// of their own ("decoding failed due to the following error(s):"), and the first of them began with
// the two quotes too, before "stall_treshold: not a setting; did you mean stall_threshold?".
func TestConfigErrorKeyFollowsComponent(t *testing.T) {
	for _, tc := range []struct{ itl, want string }{
		{"{stall_threshold: 250}", `reading configuration for "itl": stall_threshold: 250 has no unit`},
		{"{stall_treshold: 300ms}", "\nstall_treshold: not a setting; did you mean stall_threshold?"},
		{"{stall_treshold: 300ms, max_chunk: 5}", "\nmax_chunk: not a setting; did you mean max_chunks?\nstall_treshold: not a setting; did you mean stall_threshold?"},
	} {
		cfg := filepath.Join(t.TempDir(), "bad.yaml")
		if err := os.WriteFile(cfg, []byte(`
receivers: {otlp: {protocols: {grpc: {endpoint: 127.0.0.1:4317}}}}
processors: {itl: `+tc.itl+`}
exporters: {debug: {}}
service: {pipelines: {traces: {receivers: [otlp], processors: [itl], exporters: [debug]}}}
`), 0o644); err != nil {
			t.Fatal(err)
		}
		out, code := otelcolItl(t, nil, "validate", "--config", cfg)
		if code != 1 || !strings.Contains(out, tc.want) || strings.Contains(out, "''") {
			t.Errorf("itl: %s: exit status %d; the key does not follow the component, or two quotes are left:\n%s", tc.itl, code, out)
		}
	}
}

// TestValidateShowsProviderLog: validate prints what the env provider logs while resolving (here,
// that an empty variable's default took over), which the collector holds until its own logger
// starts, which validate never does; then, as for a config without such a line, that the
// configuration is valid, where it printed nothing. Cobra takes the flags before the subcommand too.
// The log is on stderr, the success line on stdout alone (it was on stderr, where a script that
// treats anything there as a failure took it for one).
func TestValidateShowsProviderLog(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(`
receivers: {otlp: {protocols: {grpc: {endpoint: "${env:ITL_TEST_GRPC_ENDPOINT:-127.0.0.1:4317}"}}}}
exporters: {debug: {}}
service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	const logged = `its default is used, as in a shell	{"name": "ITL_TEST_GRPC_ENDPOINT", "default": "127.0.0.1:4317"}`
	for _, c := range []struct {
		value string
		args  []string
		log   string // what stderr holds; "": nothing
	}{
		{"", []string{"validate", "--config", cfg}, logged},
		{"", []string{"--config", cfg, "validate"}, logged},
		{"127.0.0.1:4317", []string{"validate", "--config", cfg}, ""},
	} {
		stdout, stderr, code := otelcolItlStreams(t, []string{"ITL_TEST_GRPC_ENDPOINT=" + c.value}, c.args...)
		if code != 0 {
			t.Fatalf("ITL_TEST_GRPC_ENDPOINT=%q, %v: exit status %d\n%s%s", c.value, c.args, code, stdout, stderr)
		}
		if strings.TrimSpace(stdout) != validated {
			t.Errorf("ITL_TEST_GRPC_ENDPOINT=%q, %v: stdout is\n%s\nwant %q alone", c.value, c.args, stdout, validated)
		}
		if c.log == "" && stderr != "" || !strings.Contains(stderr, c.log) || strings.Contains(stderr, validated) {
			t.Errorf("ITL_TEST_GRPC_ENDPOINT=%q, %v: stderr is\n%s\nwant %q and not the success line", c.value, c.args, stderr, c.log)
		}
	}
}

// TestValidateHelp: validate's help validates nothing, and so says nothing of a configuration.
func TestValidateHelp(t *testing.T) {
	for _, args := range [][]string{{"validate", "-h"}, {"validate", "--help"}, {"--config", "x.yaml", "validate", "-h"}, {"help", "validate"}} {
		stdout, stderr, code := otelcolItlStreams(t, nil, args...)
		if code != 0 || !strings.Contains(stdout, "Usage:") || strings.Contains(stdout+stderr, validated) {
			t.Errorf("%v: exit status %d, want 0; stdout:\n%s\nstderr:\n%s\nwant the usage and no success line", args, code, stdout, stderr)
		}
	}
}

// TestValidateErrorOnStderr: a configuration validate refuses prints its error on stderr and
// nothing on stdout, with exit status 1.
func TestValidateErrorOnStderr(t *testing.T) {
	stdout, stderr, code := otelcolItlStreams(t, []string{"ITL_FLUSH_INTERVAL=15"},
		"validate", "--config", filepath.Join("..", "..", "exporter-config", "prometheus.yaml"))
	if code != 1 || stdout != "" || !strings.HasPrefix(stderr, "Error: ") || strings.Contains(stderr, validated) {
		t.Errorf("exit status %d, want 1; stdout %q, want none; stderr:\n%s", code, stdout, stderr)
	}
}

// TestOneVersion: every place the release version is written agrees, as scripts/set-version.sh
// writes it: the distribution's Version (and the benchmarks' floorcol's), the client library's and
// the connector's scope versions, the ocb manifest's otelitl entries and dist.version with the
// README's copy of them, and the README's go get for an application.
func TestOneVersion(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", path))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	constVersion := regexp.MustCompile(`(?m)^const Version = "([^"]*)"`)
	for _, path := range []string{"otelitl/version.go", "collector/itlmetricsconnector/factory.go"} {
		m := constVersion.FindStringSubmatch(read(path))
		if m == nil || m[1] != Version {
			t.Errorf("%s: Version %v, want %s as cmd/otelcol-itl's", path, m, Version)
		}
	}
	if m := regexp.MustCompile(`Version: "([^"]*)"`).FindStringSubmatch(read("bench/floorcol/main.go")); m == nil || m[1] != Version {
		t.Errorf("bench/floorcol/main.go: Version %v, want %s", m, Version)
	}
	gomod := regexp.MustCompile(`gomod: github.com/otelitl/itl/[a-z/]+ v(\S+)`)
	for _, path := range []string{"exporter-config/builder-config.yaml", "README.md"} {
		ms := gomod.FindAllStringSubmatch(read(path), -1)
		if len(ms) == 0 {
			t.Errorf("%s: no otelitl gomod entry", path)
		}
		for _, m := range ms {
			if m[1] != Version {
				t.Errorf("%s: %q, want v%s", path, m[0], Version)
			}
		}
	}
	if m := regexp.MustCompile(`(?m)^  version: (\S+)$`).FindStringSubmatch(read("exporter-config/builder-config.yaml")); m == nil || m[1] != Version {
		t.Errorf("builder-config.yaml: dist.version %v, want %s", m, Version)
	}
	// The README's go get for an application built against a checkout.
	requires := regexp.MustCompile(`go get github.com/otelitl/itl/[a-z/]+@v(\S+)`).FindAllStringSubmatch(read("README.md"), -1)
	if len(requires) == 0 {
		t.Error("README.md: no go get of the library at a version")
	}
	for _, m := range requires {
		if m[1] != Version {
			t.Errorf("README.md: %q, want v%s", m[0], Version)
		}
	}
}

// A configuration error the collector's validation finds twice, for a tls section and again for
// the config embedded in it, is printed once, under the section's key, and still traced to the
// section's variables: OTLP_CLIENT_CERT_FILE without OTLP_CLIENT_KEY_FILE, with agent.yaml.
func TestSectionErrorPrintedOnce(t *testing.T) {
	cert, _ := writeCertKey(t, t.TempDir(), "client")
	for _, args := range [][]string{
		{"validate", "--config", filepath.Join("..", "..", "exporter-config", "agent.yaml")},
		{"--config", filepath.Join("..", "..", "exporter-config", "agent.yaml")}, // refused before anything starts
	} {
		out, code := otelcolItl(t, []string{"OTLP_ENDPOINT=gateway.example:4317", "OTLP_TOKEN=t", "OTLP_CLIENT_CERT_FILE=" + cert}, args...)
		const msg = "TLS configuration must include both certificate and key"
		if code != 1 || strings.Count(out, msg) != 1 {
			t.Errorf("%v: exit status %d, want 1; %q printed %d times, want once:\n%s", args, code, msg, strings.Count(out, msg), out)
		}
		for _, want := range []string{"exporters::otlp_grpc::clientconfig::tls: " + msg, `OTLP_CLIENT_CERT_FILE="` + cert + `"`, "OTLP_CLIENT_KEY_FILE is unset"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: the output lacks %q:\n%s", args, want, out)
			}
		}
	}
}

func TestOnceEach(t *testing.T) {
	for in, want := range map[string]string{
		"invalid configuration: a::b::tls: both\na::b::tls::config: both": "invalid configuration: a::b::tls: both",
		"a::b::tls::config: both\na::b::tls: both\nc::d: other":           "a::b::tls: both\nc::d: other",
		"a::b: same\na::b: same":                                          "a::b: same",
		// Not a key within the other, or another error: both stay.
		"a::b: same\na::bc: same":                "a::b: same\na::bc: same",
		"a::b::tls: one\na::b::tls::config: two": "a::b::tls: one\na::b::tls::config: two",
		"no key here\nno key here":               "no key here\nno key here",
	} {
		if got := onceEach(in); got != want {
			t.Errorf("onceEach(%q) = %q, want %q", in, got, want)
		}
	}
}

// writeCertKey writes a self-signed certificate for name and its private key as PEM files in dir,
// and returns their paths.
func writeCertKey(t *testing.T, dir, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		DNSNames:              []string{name, "localhost"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+"-cert.pem"), filepath.Join(dir, name+"-key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
