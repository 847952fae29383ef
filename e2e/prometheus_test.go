package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/itlconv/timeline"
	"github.com/otelitl/itl/otelitl"
)

func requireE2E(t *testing.T) {
	t.Helper()
	if os.Getenv("OTELITL_E2E") != "1" {
		t.Skip("end-to-end test: run `make e2e` (part of `make test`), which installs Prometheus and sets OTELITL_E2E=1")
	}
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// proc is a process the test started; it is stopped when the test ends, if not before.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	once sync.Once
	name string
	log  string // the file its output goes to
}

// stop interrupts the process and waits for it, killing it after 10s.
func (p *proc) stop() {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
}

// start runs a process until the test ends; its output goes to a log file printed on failure.
func start(t *testing.T, name string, env []string, bin string, args ...string) *proc {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{}), name: name, log: logPath}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("--- %s log ---\n%s", name, tail(b, 4000))
		}
	})
	return p
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func waitHTTP(t *testing.T, u string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(u); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s not ready within %v", u, timeout)
}

// promSeries is one series of a Prometheus query result: an instant value or a range of values.
type promSeries struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
	Values [][2]any          `json:"values"`
}

// promAPI runs query q on Prometheus' HTTP API and returns the series of its result, failing the
// test on any error.
func promAPI(t *testing.T, prom, q string) []promSeries {
	t.Helper()
	resp, err := http.Get(prom + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []promSeries `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %v %s %s", q, err, r.Error, body)
	}
	return r.Data.Result
}

// promQuery runs an instant query and returns each series' value by the given label.
func promQuery(t *testing.T, prom, q, by string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, s := range promAPI(t, prom, q) {
		v, _ := strconv.ParseFloat(s.Value[1].(string), 64)
		out[s.Metric[by]] = v
	}
	return out
}

// generation is one replayed reply with arrival offsets known to the nanosecond.
type generation struct {
	model   string
	ttft    time.Duration
	gaps    []time.Duration
	tokens  int
	failure error
}

// expected figures per model, computed from the generations independently of the collector.
type expected struct {
	ttfts, gaps, durations []float64
	outTokens              float64
	stalls                 int
	// The SERVER spans' figures (see send): TTFT 3 ms less, each gap over the chunk's tokens,
	// durations 6 ms less.
	serverTTFTs, serverGaps, serverDurations []float64
}

func plan() ([]generation, map[string]*expected) {
	var gens []generation
	models := []string{"e2e-fast", "e2e-choppy", "e2e-spec"}
	for i := range 30 {
		m := models[i%3]
		g := generation{model: m, ttft: time.Duration(150+37*i) * time.Millisecond}
		n := 20 + i%15
		for k := range n - 1 {
			gap := time.Duration(12+(k*7+i)%19) * time.Millisecond
			if m == "e2e-choppy" && k%9 == 4 {
				gap = time.Duration(300+10*k) * time.Millisecond // stalls
			}
			g.gaps = append(g.gaps, gap)
		}
		g.tokens = n
		if m == "e2e-spec" {
			g.tokens = 2 * n
		}
		if i%10 == 7 {
			g.failure = context.Canceled
		}
		gens = append(gens, g)
	}
	exp := map[string]*expected{}
	for _, g := range gens {
		e := exp[g.model]
		if e == nil {
			e = &expected{}
			exp[g.model] = e
		}
		e.ttfts = append(e.ttfts, timeline.Seconds(int64(g.ttft)))
		e.serverTTFTs = append(e.serverTTFTs, timeline.Seconds(int64(g.ttft-3*time.Millisecond)))
		per := float64(g.tokens / (len(g.gaps) + 1))
		end := g.ttft
		for _, gap := range g.gaps {
			e.gaps = append(e.gaps, timeline.Seconds(int64(gap)))
			e.serverGaps = append(e.serverGaps, timeline.Seconds(int64(gap))/per)
			end += gap
			if gap > 250*time.Millisecond {
				e.stalls++
			}
		}
		e.durations = append(e.durations, timeline.Seconds(int64(end+5*time.Millisecond)))
		e.serverDurations = append(e.serverDurations, timeline.Seconds(int64(end-time.Millisecond)))
		e.outTokens += float64(g.tokens)
	}
	return gens, exp
}

func send(t *testing.T, endpoint string, gens []generation) {
	t.Helper()
	ctx := context.Background()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("e2e"))))
	in := otelitl.New(otelitl.WithTracerProvider(tp))
	base := time.Now().Add(-time.Minute)
	for i, g := range gens {
		start := base.Add(time.Duration(i) * time.Second)
		_, gen := in.Start(ctx, otelitl.Request{Provider: "e2e", Model: g.model, StartTime: start})
		at := start.Add(g.ttft)
		per := g.tokens / (len(g.gaps) + 1)
		gen.ChunkAt(at, per)
		for _, gap := range g.gaps {
			at = at.Add(gap)
			gen.ChunkAt(at, per)
		}
		gen.EndAt(at.Add(5*time.Millisecond), g.failure)

		// The model server's side of the same request: a SERVER span that received it 2 ms after
		// the client sent it and wrote each chunk 1 ms before the client read it. It feeds the
		// server metrics only, and leaves every client figure as it is.
		_, srv := in.Start(ctx, otelitl.Request{Provider: "e2e", Model: g.model, StartTime: start.Add(2 * time.Millisecond), Kind: trace.SpanKindServer})
		at = start.Add(g.ttft - time.Millisecond)
		srv.ChunkAt(at, per)
		for _, gap := range g.gaps {
			at = at.Add(gap)
			srv.ChunkAt(at, per)
		}
		srv.EndAt(at.Add(2*time.Millisecond), g.failure)
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("exporting spans: %v", err)
	}
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

// trueQuantile is Prometheus' notion of a quantile's rank over the raw values.
func trueQuantile(v []float64, q float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[int(math.Ceil(q*float64(len(s))))-1]
}

// bucketOf returns the explicit bucket (lo, hi] holding v.
func bucketOf(bounds []float64, v float64) (float64, float64) {
	lo := 0.0
	for _, b := range bounds {
		if v <= b {
			return lo, b
		}
		lo = b
	}
	return lo, math.Inf(1)
}

// intake is a way the metrics reach Prometheus, each with its shipped config.
type intake struct {
	name, config string
	promFlags    []string
	// env gives the collector the variables that point the config at Prometheus.
	env func(promAddr, scrapeAddr string) []string
	// scrape is true when Prometheus scrapes the collector.
	scrape bool
}

var intakes = map[string]intake{
	"scrape": {name: "scrape", config: "prometheus.yaml", scrape: true,
		env: func(_, scrape string) []string { return []string{"PROMETHEUS_ENDPOINT=" + scrape} }},
	"remote-write": {name: "remote-write", config: "prometheusremotewrite.yaml", promFlags: []string{"--web.enable-remote-write-receiver"},
		env: func(prom, _ string) []string {
			return []string{"PROMETHEUS_REMOTE_WRITE_URL=http://" + prom + "/api/v1/write"}
		}},
	"otlp": {name: "otlp", config: "prometheus-otlp.yaml", promFlags: []string{"--web.enable-otlp-receiver"},
		env: func(prom, _ string) []string { return []string{"PROMETHEUS_OTLP_URL=http://" + prom + "/api/v1/otlp"} }},
}

// TestPrometheus runs the built distribution with exporter-config/prometheus.yaml (its cardinality
// limit lowered to overflowLimit), a real Prometheus 3 scraping it, sends generations whose every
// arrival is known, and checks what Prometheus stores and what the dashboard's queries find.
func TestPrometheus(t *testing.T) { testIntake(t, intakes["scrape"]) }

// TestPrometheusRemoteWrite is TestPrometheus through exporter-config/prometheusremotewrite.yaml into
// Prometheus 3's remote-write receiver (--web.enable-remote-write-receiver).
func TestPrometheusRemoteWrite(t *testing.T) { testIntake(t, intakes["remote-write"]) }

// TestPrometheusOTLP is TestPrometheus through exporter-config/prometheus-otlp.yaml: the otlphttp
// exporter straight into Prometheus 3's native OTLP intake (/api/v1/otlp, --web.enable-otlp-receiver),
// which names the series as the scrape endpoint does.
func TestPrometheusOTLP(t *testing.T) { testIntake(t, intakes["otlp"]) }

func testIntake(t *testing.T, in intake) {
	requireE2E(t)
	bin := buildCollector(t)
	ports := newCollectorPorts(t)
	scrape := freePort(t)
	// Every intake has Prometheus scrape the collector's telemetry port too, as the README tells an
	// operator to, for the dashboard's row of the components' own telemetry.
	promCfg := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: otelcol-itl-telemetry\n    static_configs:\n      - targets: [%q]\n", ports.telemetry)
	if in.scrape {
		promCfg += fmt.Sprintf("  - job_name: otelcol-itl\n    static_configs:\n      - targets: [%q]\n", scrape)
	}
	prom := startPrometheus(t, promCfg, in.promFlags...)
	promAddr := strings.TrimPrefix(prom, "http://")
	// The shipped config with one change: a cardinality limit of overflowLimit series in place of
	// 10,000, so that a few models overflow it (see sendOverflow) and the dashboard's overflow
	// panels have something to show, without a flood of 10,000 models.
	start(t, "otelcol-itl", append(append(ports.env(), "ITL_FLUSH_INTERVAL=1s"), in.env(promAddr, scrape)...),
		bin, "--config", filepath.Join(repoRoot(), "exporter-config", in.config),
		"--config", fmt.Sprintf("yaml:connectors::itl_metrics::aggregation_cardinality_limit: %d", overflowLimit))
	waitHTTP(t, "http://"+ports.health+"/", 30*time.Second)
	otlp := ports.grpc

	gens, want := plan()
	half := len(gens) / 2
	send(t, otlp, gens[:half])
	waitForCount(t, prom, half)
	tokensAtHalf := promQuery(t, prom, `sum(gen_ai_client_token_usage_sum{gen_ai_token_type="output"})`, "")[""]
	halfAt := time.Now()
	time.Sleep(3 * time.Second)
	send(t, otlp, gens[half:])
	waitForCount(t, prom, len(gens))
	time.Sleep(2 * time.Second) // one more scrape at the final values

	checks := []struct {
		metric string
		values func(*expected) []float64
		bounds []float64
	}{
		{"gen_ai_client_operation_time_to_first_chunk_seconds", func(e *expected) []float64 { return e.ttfts }, itlconv.DurationBuckets},
		{"gen_ai_client_operation_time_per_output_chunk_seconds", func(e *expected) []float64 { return e.gaps }, itlconv.GapBuckets},
		{"gen_ai_client_operation_duration_seconds", func(e *expected) []float64 { return e.durations }, itlconv.DurationBuckets},
		{"gen_ai_server_time_to_first_token_seconds", func(e *expected) []float64 { return e.serverTTFTs }, itlconv.ServerTTFTBuckets},
		{"gen_ai_server_time_per_output_token_seconds", func(e *expected) []float64 { return e.serverGaps }, itlconv.ServerTPOTBuckets},
		{"gen_ai_server_request_duration_seconds", func(e *expected) []float64 { return e.serverDurations }, itlconv.DurationBuckets},
	}
	for _, c := range checks {
		counts := promQuery(t, prom, "sum by (gen_ai_request_model) ("+c.metric+"_count)", "gen_ai_request_model")
		sums := promQuery(t, prom, "sum by (gen_ai_request_model) ("+c.metric+"_sum)", "gen_ai_request_model")
		for model, e := range want {
			v := c.values(e)
			if counts[model] != float64(len(v)) || math.Abs(sums[model]-sum(v)) > 1e-6 {
				t.Errorf("%s{model=%s}: count %v sum %.9f, want %d and %.9f", c.metric, model, counts[model], sums[model], len(v), sum(v))
			}
			if c.metric == checks[2].metric {
				continue
			}
			for _, q := range []float64{0.5, 0.9} {
				got := promQuery(t, prom, fmt.Sprintf(`histogram_quantile(%v, sum by (le, gen_ai_request_model) (%s_bucket{gen_ai_request_model=%q}))`, q, c.metric, model), "gen_ai_request_model")[model]
				lo, hi := bucketOf(c.bounds, trueQuantile(v, q))
				if got < lo-1e-9 || got > hi+1e-9 {
					t.Errorf("%s{model=%s} p%v = %v, outside the bucket (%v, %v] of the true quantile %v", c.metric, model, q*100, got, lo, hi, trueQuantile(v, q))
				}
			}
		}
	}
	tokens := promQuery(t, prom, `sum by (gen_ai_request_model) (gen_ai_client_token_usage_sum{gen_ai_token_type="output"})`, "gen_ai_request_model")
	stalls := promQuery(t, prom, `sum by (gen_ai_request_model) (otelitl_stalls_total)`, "gen_ai_request_model")
	errs := promQuery(t, prom, `sum by (gen_ai_request_model) (gen_ai_client_operation_duration_seconds_count{error_type="cancelled"})`, "gen_ai_request_model")
	var failures float64
	for model, e := range want {
		if tokens[model] != e.outTokens || stalls[model] != float64(e.stalls) {
			t.Errorf("%s: output tokens %v stalls %v, want %v and %d", model, tokens[model], stalls[model], e.outTokens, e.stalls)
		}
		failures += errs[model]
	}
	if failures != 3 {
		t.Errorf("%v cancelled generations carry error.type, want 3", failures)
	}

	checkREADMEQueries(t, prom)

	// The throughput query of the README: the rate of the output token sum. The second half's
	// tokens arrived within the window; Prometheus extrapolates rate() to the window's edges, so it
	// is checked against the exact increase within that slack.
	var second float64
	for _, g := range gens[half:] {
		second += float64(g.tokens)
	}
	window := time.Since(halfAt).Round(time.Second) + 2*time.Second
	inc := promQuery(t, prom, fmt.Sprintf(`sum(increase(gen_ai_client_token_usage_sum{gen_ai_token_type="output"}[%ds]))`, int(window.Seconds())), "")[""]
	rate := promQuery(t, prom, fmt.Sprintf(`sum(rate(gen_ai_client_token_usage_sum{gen_ai_token_type="output"}[%ds]))`, int(window.Seconds())), "")[""]
	if tokensAtHalf <= 0 || inc < second*0.9 || inc > second*1.6 || math.Abs(rate*window.Seconds()-inc) > 1e-6*inc+1 {
		t.Errorf("token rate: increase %v over %v (rate %v/s), want about %v", inc, window, rate, second)
	}

	// The events the dashboard's row of the components' own telemetry counts, sent once every
	// figure above is checked: a span whose error.type is cut (values bounded) and one whose TTFT
	// is not a number (malformed).
	sendBadSpans(t, otlp)
	// Then more models than the limit leaves room for: their calls go to the overflow series, which
	// the dashboard's overflow stat and the row's overflow panel show.
	sendOverflow(t, otlp)
	waitForSeries(t, prom, "otelcol_connector_itl_metrics_values_bounded", "otelcol_connector_itl_metrics_spans_malformed",
		"otelcol_connector_itl_metrics_spans_overflowed", `gen_ai_client_operation_duration_seconds_count{otel_metric_overflow="true"}`)
	checkDashboard(t, prom)
}

// overflowLimit is the connector's aggregation_cardinality_limit in testIntake: room for the
// series of plan (e2e-fast, e2e-choppy, e2e-spec), sendBadSpans' e2e-bad and some of sendOverflow's.
const overflowLimit = 6

// sendOverflow sends a generation (a CLIENT and a SERVER span, as send does, with a stall, so that
// every panel of a model has a figure of the overflow series) of each of 2 * overflowLimit new
// models, more than the limit leaves room for: the connector folds the calls of the models past it
// into its overflow series (otel.metric.overflow=true, no provider or model) and counts their
// spans in otelcol_connector_itl_metrics_spans_overflowed.
func sendOverflow(t *testing.T, endpoint string) {
	t.Helper()
	var gens []generation
	for i := range 2 * overflowLimit {
		g := generation{model: fmt.Sprintf("e2e-overflow-%02d", i), ttft: 200 * time.Millisecond, tokens: 6,
			gaps: []time.Duration{20 * time.Millisecond, 300 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond}} // a stall
		gens = append(gens, g)
	}
	send(t, endpoint, gens)
}

// sendBadSpans sends two model calls of the model e2e-bad (no output tokens, so no throughput
// figure moves): one whose error.type is longer than itlconv.MaxErrorTypeLength, which the
// connector cuts and counts in otelcol_connector_itl_metrics_values_bounded, and one whose time to
// first chunk is a string, which it counts in otelcol_connector_itl_metrics_spans_malformed.
func sendBadSpans(t *testing.T, endpoint string) {
	t.Helper()
	ctx := context.Background()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("e2e"))))
	tracer := tp.Tracer("e2e")
	call := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", "e2e"),
		attribute.String("gen_ai.request.model", "e2e-bad"),
	}
	start := time.Now().Add(-2 * time.Second)
	for _, bad := range []attribute.KeyValue{
		attribute.String("error.type", strings.Repeat("x", 2*itlconv.MaxErrorTypeLength)),
		attribute.String("gen_ai.response.time_to_first_chunk", "soon"),
	} {
		_, span := tracer.Start(ctx, "chat e2e-bad", trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start),
			trace.WithAttributes(append(slices.Clone(call), bad)...))
		span.End(trace.WithTimestamp(start.Add(time.Second)))
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("exporting spans: %v", err)
	}
}

// waitForSeries waits until Prometheus holds a series of each metric with two samples at least,
// what rate() needs to return one.
func waitForSeries(t *testing.T, prom string, metrics ...string) {
	t.Helper()
	for _, m := range metrics {
		deadline := time.Now().Add(60 * time.Second)
		for len(promAPI(t, prom, "count_over_time("+m+"[1m]) > 1")) == 0 {
			if time.Now().After(deadline) {
				names := promQuery(t, prom, `count by (__name__) ({__name__=~"otelcol_.+"})`, "__name__")
				t.Fatalf("Prometheus holds no %s with two samples after 60s; the collector's telemetry series: %v", m, names)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
}

// waitForCount waits until Prometheus holds n generations (duration counts over every model).
func waitForCount(t *testing.T, prom string, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var got float64
	for time.Now().Before(deadline) {
		got = promQuery(t, prom, "sum(gen_ai_client_operation_duration_seconds_count)", "")[""]
		if got == float64(n) {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	names := promQuery(t, prom, `count by (__name__) ({__name__=~"gen_ai_.+|otelitl_.+"})`, "__name__")
	t.Fatalf("Prometheus holds %v generations after 60s, want %d; series names: %v", got, n, names)
}

// checkREADMEQueries runs every query of the README's promql blocks (one a line) against the real
// Prometheus: each must parse and return a series per model, so that the README cannot drift from
// the metric names either.
func checkREADMEQueries(t *testing.T, prom string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	queries := 0
	for _, block := range regexp.MustCompile("(?s)```promql\n(.*?)```").FindAllStringSubmatch(string(raw), -1) {
		for _, q := range strings.Split(strings.TrimSpace(block[1]), "\n") {
			if res := promQuery(t, prom, q, "gen_ai_request_model"); len(res) == 0 {
				t.Errorf("README query returned no series: %s", q)
			}
			queries++
		}
	}
	if queries < 4 {
		t.Errorf("only %d README queries checked", queries)
	}
}

// dashPanel is a panel of the dashboard; a row holds its panels in its own list.
type dashPanel struct {
	Title   string      `json:"title"`
	Panels  []dashPanel `json:"panels"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// dashboardAllowedEmpty names the dashboard's only metrics a query may find no series of here:
// the collectors of this test (exporter-config/prometheus*.yaml) run neither the itl processor
// (otelcol_processor_itl_spans_malformed) nor the itl_auth extension
// (otelcol_extension_itl_auth_refused), so their series cannot exist.
var dashboardAllowedEmpty = regexp.MustCompile(`\botelcol_processor_itl_spans_malformed\b|\botelcol_extension_itl_auth_refused\b`)

// checkDashboard runs every query of the shipped Grafana dashboard against the real Prometheus:
// each must parse and return series, so that the dashboard cannot drift from the metric names.
// The panels of a row (the collapsed row of the components' own telemetry keeps its panels in the
// row's own list) are checked as the others are.
func checkDashboard(t *testing.T, prom string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(), "exporter-config", "grafana", "itl-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels     []dashPanel `json:"panels"`
		Templating struct {
			List []dashVariable `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	queries, empty := 0, map[string]bool{}
	var check func(panels []dashPanel)
	check = func(panels []dashPanel) {
		for _, p := range panels {
			check(p.Panels)
			for _, tg := range p.Targets {
				q := strings.NewReplacer("$__rate_interval", "1m", "$provider", ".*", "$model", ".*").Replace(tg.Expr)
				queries++
				if res := promQuery(t, prom, q, "gen_ai_request_model"); len(res) == 0 {
					if metric := dashboardAllowedEmpty.FindString(q); metric != "" {
						empty[metric] = true
						continue
					}
					t.Errorf("dashboard panel %q: query returned no series: %s", p.Title, q)
				}
			}
		}
	}
	check(dash.Panels)
	if queries < 25 { // the 18 of the panels above the row and its 7
		t.Errorf("only %d dashboard queries checked", queries)
	}
	checkOverflowPanels(t, prom, dash.Panels)
	// A query allowed to be empty names its metric still as the component registers it: the
	// component's README documents each instrument (collector/internal/doccheck holds it to that).
	for metric := range empty {
		readme := map[string]string{
			"otelcol_processor_itl_spans_malformed": "itlprocessor",
			"otelcol_extension_itl_auth_refused":    "itlauthextension",
		}[metric]
		if doc := mustRead(t, filepath.Join(repoRoot(), "collector", readme, "README.md")); !strings.Contains(doc, "| `"+metric+"` |") {
			t.Errorf("dashboard: %s, allowed to be empty here, is not in the telemetry table of collector/%s/README.md", metric, readme)
		}
	}
	// The variables' label_values(selector, label), as the series count by that label: each must
	// offer a value to pick.
	labelValues := regexp.MustCompile(`^label_values\((.+), *([a-z_]+)\)$`)
	variables := 0
	for _, v := range dash.Templating.List {
		var query struct {
			Query string `json:"query"`
		}
		if json.Unmarshal(v.Query, &query) != nil {
			continue
		}
		m := labelValues.FindStringSubmatch(query.Query)
		if m == nil {
			continue
		}
		q := "count by (" + m[2] + ") (" + strings.ReplaceAll(m[1], "$provider", ".*") + ")"
		if res := promQuery(t, prom, q, m[2]); len(res) == 0 {
			t.Errorf("dashboard variable %q: no value to pick: %s", v.Name, q)
		}
		variables++
	}
	if variables != 2 {
		t.Errorf("%d dashboard variables checked, want provider and model", variables)
	}
	checkNoneChoice(t, prom, dash.Panels, dash.Templating.List)
}

// dashVariable is a variable of the dashboard.
type dashVariable struct {
	Name       string          `json:"name"`
	Query      json.RawMessage `json:"query"` // a string for the datasource variable
	Multi      bool            `json:"multi"`
	IncludeAll bool            `json:"includeAll"`
	// StaticOptions are the choices a query variable offers besides the values it finds (Grafana
	// 12.1 and later).
	StaticOptions []struct {
		Text  string `json:"text"`
		Value string `json:"value"`
	} `json:"staticOptions"`
}

// grafanaRegexValue is what Grafana's Prometheus data source writes for a multi-value or "All"
// variable in a query (interpolateQueryExpr): each value with the regular expression's special
// characters escaped, one value as it is, several as (a|b). The backslashes are doubled again,
// as the value lands inside a PromQL string.
func grafanaRegexValue(values ...string) string {
	special := regexp.MustCompile(`[$^*{}\[\]'+?.()|]`)
	var esc []string
	for _, v := range values {
		v = strings.ReplaceAll(v, `\`, `\\\\`)
		esc = append(esc, special.ReplaceAllString(v, `\\$0`))
	}
	if len(esc) == 1 {
		return esc[0]
	}
	return "(" + strings.Join(esc, "|") + ")"
}

// checkNoneChoice sets the provider and model variables to their "(none)" choice, as Grafana would
// write it into the queries, and runs every query of the panels that use them: each must find the
// series without a provider and a model (here the connector's overflow series, which sendOverflow
// fed with client and server spans, a stall each), and only those. Before the choice, a single
// choice could not select them: only "All" (.*) matched a missing label.
func checkNoneChoice(t *testing.T, prom string, panels []dashPanel, vars []dashVariable) {
	t.Helper()
	choice := map[string]string{}
	for _, v := range vars {
		if v.Name != "provider" && v.Name != "model" {
			continue
		}
		for _, o := range v.StaticOptions {
			if o.Text == "(none)" {
				if !v.Multi && !v.IncludeAll {
					t.Fatalf("dashboard variable %q: neither multi nor includeAll, which grafanaRegexValue does not write", v.Name)
				}
				choice["$"+v.Name] = grafanaRegexValue(o.Value)
			}
		}
		if _, ok := choice["$"+v.Name]; !ok {
			t.Errorf(`dashboard variable %q offers no "(none)" choice (staticOptions): a series without its label can be seen only under "All"`, v.Name)
		}
	}
	if len(choice) != 2 {
		return
	}
	checked := 0
	for _, tg := range dashTargets(panels) {
		if !strings.Contains(tg.expr, "$provider") && !strings.Contains(tg.expr, "$model") {
			continue
		}
		q := strings.NewReplacer("$__rate_interval", "1m", "$provider", choice["$provider"], "$model", choice["$model"]).Replace(tg.expr)
		res := promAPI(t, prom, q)
		if len(res) == 0 {
			t.Errorf("dashboard panel %q with provider and model (none): no series, want the overflow series': %s", tg.title, q)
		}
		for _, s := range res {
			if s.Metric["gen_ai_provider_name"] != "" || s.Metric["gen_ai_request_model"] != "" {
				t.Errorf("dashboard panel %q with provider and model (none): a series of a provider or model %v: %s", tg.title, s.Metric, q)
			}
		}
		checked++
	}
	if checked < 17 { // the panels above the row but the overflow stat
		t.Errorf("only %d dashboard queries checked with provider and model (none)", checked)
	}
	// The model variable's own query, with the provider (none): it offers the models of the series
	// without a provider, here none but the overflow series', whose model is (none) too.
	modelQuery := `count by (gen_ai_request_model) ({__name__=~"gen_ai_client_operation_duration_seconds_count|gen_ai_server_request_duration_seconds_count", gen_ai_provider_name=~"` + choice["$provider"] + `"})`
	if res := promQuery(t, prom, modelQuery, "gen_ai_request_model"); len(res) != 1 || res[""] == 0 {
		t.Errorf("with provider (none), the series by model are %v, want the overflow series' only: %s", res, modelQuery)
	}
}

// dashTarget is a query of the dashboard and the title of its panel.
type dashTarget struct{ title, expr string }

// dashTargets lists the queries of the panels, those of rows' panels included.
func dashTargets(panels []dashPanel) []dashTarget {
	var out []dashTarget
	for _, p := range panels {
		out = append(out, dashTargets(p.Panels)...)
		for _, tg := range p.Targets {
			out = append(out, dashTarget{p.Title, tg.Expr})
		}
	}
	return out
}

// checkOverflowPanels runs the dashboard's two overflow queries after sendOverflow: the stat of the
// model calls in the overflow series (from the connector's metrics) and the row's count of spans
// overflowed (from the collector's telemetry) must show the same calls, more than none. The first
// is written once a flush reaches Prometheus, the second as the spans arrive: it waits for them to
// agree.
func checkOverflowPanels(t *testing.T, prom string, panels []dashPanel) {
	t.Helper()
	var data, telemetry string
	for _, tg := range dashTargets(panels) {
		switch {
		case strings.Contains(tg.expr, `otel_metric_overflow="true"`):
			data = tg.expr
		case strings.Contains(tg.expr, "otelcol_connector_itl_metrics_spans_overflowed"):
			telemetry = tg.expr
		}
	}
	if data == "" || telemetry == "" {
		t.Fatalf("dashboard: no query of the overflow series' calls (%q) or of otelcol_connector_itl_metrics_spans_overflowed (%q)", data, telemetry)
	}
	total := func(q string) float64 {
		v := 0.0
		for _, s := range promAPI(t, prom, q) {
			f, _ := strconv.ParseFloat(s.Value[1].(string), 64)
			v += f
		}
		return v
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		calls, spans := total(data), total(telemetry)
		if calls > 0 && calls == spans {
			t.Logf("dashboard: %v model calls in the overflow series, as many spans overflowed", calls)
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("dashboard: the overflow stat shows %v model calls, the row's overflow panel %v spans overflowed; want the same, more than 0:\n%s\n%s", calls, spans, data, telemetry)
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}
