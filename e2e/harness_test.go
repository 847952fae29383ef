package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	buildMu  sync.Mutex
	buildDir string // the built programs, removed when the test binary ends
	builds   = map[string]*builtProgram{}
)

// builtProgram is a program of cmd/ built for this test binary, or why it could not be.
type builtProgram struct {
	bin string
	err error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// buildCollector builds cmd/otelcol-itl once per test binary and returns its path.
func buildCollector(t *testing.T) string { return buildProgram(t, "otelcol-itl") }

// buildProxy builds cmd/otelitl-proxy once per test binary and returns its path.
func buildProxy(t *testing.T) string { return buildProgram(t, "otelitl-proxy") }

// buildProgram builds cmd/name (a module of its own) once per test binary, as a user builds it
// from a checkout, and returns its path.
func buildProgram(t *testing.T, name string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	b := builds[name]
	if b == nil {
		b = &builtProgram{}
		builds[name] = b
		if buildDir == "" {
			buildDir, b.err = os.MkdirTemp("", "otelcol-itl-e2e-")
		}
		if b.err == nil {
			b.bin = filepath.Join(buildDir, name)
			cmd := exec.Command("go", "build", "-o", b.bin, ".")
			cmd.Dir = filepath.Join(repoRoot(), "cmd", name) // its own module
			if out, err := cmd.CombinedOutput(); err != nil {
				b.err = fmt.Errorf("building %s: %v\n%s", name, err, out)
			}
		}
	}
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

var promVersion = regexp.MustCompile(`(?m)^prometheus, version (\d+)\.`)

// prometheusBin returns a Prometheus 3 server: PROMETHEUS_BIN, else the repository's .bin/prometheus
// (scripts/install-prometheus.sh puts it there), else the prometheus on PATH. It fails the test on
// a Prometheus 2, whose flags, OTLP intake and name translation the tests do not expect.
func prometheusBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("PROMETHEUS_BIN")
	if bin == "" {
		if p := filepath.Join(repoRoot(), ".bin", "prometheus"); fileExists(p) {
			bin = p
		} else if p, err := exec.LookPath("prometheus"); err == nil {
			bin = p
		}
	}
	if bin == "" {
		t.Fatal("no Prometheus binary: run `make e2e`, which installs Prometheus 3 into .bin (scripts/install-prometheus.sh), or set PROMETHEUS_BIN")
	}
	out, _ := exec.Command(bin, "--version").CombinedOutput()
	if m := promVersion.FindSubmatch(out); m != nil {
		if major, _ := strconv.Atoi(string(m[1])); major < 3 {
			t.Fatalf("%s is Prometheus %s.x; the end-to-end tests need Prometheus 3: run scripts/install-prometheus.sh", bin, m[1])
		}
		return bin
	}
	// A build without version stamps: Prometheus 3 is the one with the OTLP intake flag.
	help, _ := exec.Command(bin, "--help").CombinedOutput()
	if !strings.Contains(string(help), "web.enable-otlp-receiver") {
		t.Fatalf("%s does not look like Prometheus 3 (no --web.enable-otlp-receiver): run scripts/install-prometheus.sh", bin)
	}
	return bin
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// startPrometheus runs Prometheus 3 with the given configuration file body and extra flags on a free
// loopback port until the test ends, and returns its base URL once it is ready.
func startPrometheus(t *testing.T, config string, flags ...string) string {
	t.Helper()
	bin := prometheusBin(t)
	addr := freePort(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--config.file=" + cfg, "--storage.tsdb.path=" + filepath.Join(dir, "data"), "--web.listen-address=" + addr}, flags...)
	start(t, "prometheus", nil, bin, args...)
	u := "http://" + addr
	waitHTTP(t, u+"/-/ready", 60*time.Second)
	return u
}

// collectorPorts are the loopback ports a shipped config takes from the environment.
type collectorPorts struct {
	grpc, http, health, telemetry string
}

// env returns the variables that put a shipped config's listeners on these ports.
func (p collectorPorts) env() []string {
	return []string{
		"OTLP_GRPC_ENDPOINT=" + p.grpc, "OTLP_HTTP_ENDPOINT=" + p.http,
		"GATEWAY_GRPC_ENDPOINT=" + p.grpc, "GATEWAY_HTTP_ENDPOINT=" + p.http,
		"HEALTH_CHECK_ENDPOINT=" + p.health, "TELEMETRY_HOST=127.0.0.1", "TELEMETRY_PORT=" + portOf(p.telemetry),
	}
}

func newCollectorPorts(t *testing.T) collectorPorts {
	return collectorPorts{grpc: freePort(t), http: freePort(t), health: freePort(t), telemetry: freePort(t)}
}

// telemetry reads the collector's own metrics (service.telemetry, Prometheus text format) and
// returns the sum of each metric whose name starts with prefix, by the value of label (all series
// when label is empty).
func telemetry(t *testing.T, addr, prefix, label string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("reading the collector's telemetry: %v", err)
	}
	defer resp.Body.Close()
	return sumSamples(resp.Body, prefix, label)
}

var sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)`)

// sumSamples adds up the samples of the Prometheus text exposition whose metric name starts with
// prefix, by the value of label.
func sumSamples(r io.Reader, prefix, label string) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		m := sampleLine.FindStringSubmatch(line)
		if m == nil || !strings.HasPrefix(m[1], prefix) {
			continue
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			continue
		}
		key := ""
		if label != "" {
			if lm := regexp.MustCompile(regexp.QuoteMeta(label) + `="([^"]*)"`).FindStringSubmatch(m[2]); lm != nil {
				key = lm[1]
			}
		}
		out[key] += v
	}
	return out
}

// waitFor polls cond every 250 ms until it holds or timeout passes; it returns whether it held.
func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(250 * time.Millisecond)
	}
}
