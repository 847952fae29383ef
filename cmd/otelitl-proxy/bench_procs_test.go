package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/otelitl/itl/examples/fakellm/engine"
	"github.com/otelitl/itl/examples/fakellm/server"
)

// roleEnv makes the test binary one of the processes of BenchmarkProxyProcs instead of running
// tests: "fakellm", "proxy" (otelitl-proxy's run, as main runs it) or "bare" (a plain
// httputil.ReverseProxy that flushes every write, behind a read of the request body: what any Go
// streaming proxy costs).
const roleEnv = "OTELITL_PROXY_BENCH_ROLE"

func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(runRole(role))
	}
	os.Exit(m.Run())
}

// benchEngine is fakellm's configuration in the benchmarks: 25 ms decode steps whatever the
// batch (40 tokens/s a stream), up to 256 streams at once, no prefill stalls.
func benchEngine() engine.Config {
	cfg := engine.DefaultConfig()
	cfg.MaxBatch, cfg.StepBase, cfg.StepPerSeq, cfg.StepPerKTok, cfg.PrefillPerTok = 256, 25*time.Millisecond, 10*time.Microsecond, 0, 0
	return cfg
}

// runRole serves one role on a loopback port, announced on stderr as "listening on http://ADDR;"
// (as otelitl-proxy's run announces it), until SIGTERM.
func runRole(role string) int {
	logger := log.New(os.Stderr, role+": ", 0)
	upstream := os.Getenv("OTELITL_PROXY_BENCH_UPSTREAM")
	if role == "proxy" {
		c, err := parseConfig([]string{"-addr", "127.0.0.1:0", "-openai", upstream}, func(string) string { return "" }, os.Stderr)
		if err == nil {
			err = run(c, logger)
		}
		if err != nil {
			logger.Print(err)
			return 1
		}
		return 0
	}
	var h http.Handler
	switch role {
	case "fakellm":
		eng, err := engine.New(benchEngine())
		if err != nil {
			logger.Print(err)
			return 1
		}
		defer eng.Close()
		h = server.New(eng, []string{"fake-gpt"})
	case "bare":
		up, err := url.Parse(upstream)
		if err != nil {
			logger.Print(err)
			return 1
		}
		base := http.DefaultTransport.(*http.Transport).Clone()
		base.MaxIdleConnsPerHost = 256
		rp := &httputil.ReverseProxy{
			Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(up); pr.Out.Header.Del("Accept-Encoding") },
			Transport:     base,
			FlushInterval: -1,
			ErrorLog:      logger,
		}
		// The request body is read first, as httpitl reads bodies up to WithMaxRequestBytes to find
		// the model: a body streamed upstream while the response comes back races the HTTP/1
		// server, which discards and closes what is left of it when the response's header is
		// written, and the transport then closes the upstream connection mid-stream
		// (golang/go#40747; it happened to a few streams a run on 2 shared cores).
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			rp.ServeHTTP(w, r)
		})
	default:
		logger.Printf("unknown role %q", role)
		return 2
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		logger.Print(err)
		return 1
	}
	logger.Printf("listening on http://%s;", l.Addr())
	srv := newServer(l.Addr().String(), h, logger)
	go func() { _ = srv.Serve(l) }()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	<-ctx.Done()
	_ = srv.Close()
	return 0
}

// proc is a role running in its own process.
type proc struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{}

	mu  sync.Mutex
	log []string // what it wrote to stderr, logged at the end of the benchmark
}

// startRole starts the test binary as role, on the CPUs of cpus ("" for any, else a taskset list).
func startRole(b *testing.B, role, cpus string, env ...string) *proc {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	return startExe(b, exe, role, cpus, env...)
}

// startExe starts exe, a test binary of this package (this one, or one built from another
// checkout), as role.
func startExe(b *testing.B, exe, role, cpus string, env ...string) *proc {
	b.Helper()
	args := []string{exe}
	if cpus != "" {
		args = append([]string{"taskset", "-c", cpus}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), append([]string{roleEnv + "=" + role}, env...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("starting %s: %v", role, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if _, rest, ok := strings.Cut(line, "listening on "); ok {
				u, _, _ := strings.Cut(rest, ";")
				select {
				case addr <- u:
				default:
				}
			} else {
				p.mu.Lock()
				if len(p.log) < 20 {
					p.log = append(p.log, line)
				}
				p.mu.Unlock()
			}
		}
		_ = cmd.Wait()
		close(p.done)
	}()
	select {
	case p.url = <-addr:
	case <-p.done:
		b.Fatalf("%s exited before listening", role)
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		b.Fatalf("%s did not listen within 20 s", role)
	}
	b.Cleanup(func() {
		p.stop()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, line := range p.log {
			b.Log(line)
		}
	})
	return p
}

// stop sends SIGTERM and waits (the proxy then flushes its spans).
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(40 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// switches returns the context switches of the process's threads, voluntary and not.
func (p *proc) switches() int64 {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", p.cmd.Process.Pid))
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				sum += n
			}
		}
	}
	return sum
}

// cpu returns the process's CPU time: the sum of its threads' time on a CPU (schedstat, in
// nanoseconds).
func (p *proc) cpu() time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", p.cmd.Process.Pid))
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			sum += time.Duration(n)
		}
	}
	return sum
}

// pinSelf restricts this process to cpus (a taskset list) and GOMAXPROCS to n, and returns the
// function that undoes it.
func pinSelf(b *testing.B, cpus string, n int) func() {
	b.Helper()
	pid := strconv.Itoa(os.Getpid())
	out, err := exec.Command("taskset", "-p", pid).Output()
	if err != nil {
		b.Skipf("taskset: %v", err)
	}
	f := strings.Fields(string(out))
	mask := f[len(f)-1]
	if out, err := exec.Command("taskset", "-a", "-p", "-c", cpus, pid).CombinedOutput(); err != nil {
		b.Skipf("taskset -c %s: %v %s", cpus, err, out)
	}
	old := runtime.GOMAXPROCS(n)
	return func() {
		_ = exec.Command("taskset", "-a", "-p", mask, pid).Run()
		runtime.GOMAXPROCS(old)
	}
}

// BenchmarkProxyProcs measures what the proxy adds to a stream with fakellm, the proxy and the load
// generator (this process, with 200 client goroutines) in three processes, so that the CPU time of
// each is its own (summed from its threads' schedstat), and optionally pinned: cpus=split puts
// fakellm and the load generator on CPU 0 and the proxy alone on CPU 1 (taskset), cpus=shared lets
// the scheduler place all three on both CPUs. Each round sends the same load direct to fakellm,
// through a bare httputil.ReverseProxy (FlushInterval -1: a read, a write and a flush per event, the
// floor of any Go streaming proxy), and through otelitl-proxy (run as main runs it, recording every
// generation and exporting the spans over OTLP/HTTP to a sink in this process). With
// OTELITL_PROXY_BENCH_COMPARE set to a test binary of this package built from another checkout
// (go test -c), its otelitl-proxy runs as a fourth path, "compare", in the same rounds.
//
// A chunk's latency is the time the client's Read returned it less the time fakellm's engine
// produced it (from fakellm's /debug/arrivals; one machine, one clock). "added" figures are a
// path's percentile less the direct path's percentile; cpu figures are a process's CPU time
// during the path's runs per thousand chunks delivered.
//
//	go test -run '^$' -bench BenchmarkProxyProcs -benchtime 3x ./cmd/otelitl-proxy
func BenchmarkProxyProcs(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc and uses taskset")
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		b.Skip("taskset is not installed")
	}
	for _, cpus := range []string{"split", "shared"} {
		for _, streams := range []int{1, 200} {
			b.Run(fmt.Sprintf("cpus=%s/streams=%d", cpus, streams), func(b *testing.B) {
				benchProcs(b, cpus, streams)
			})
		}
	}
}

func benchProcs(b *testing.B, cpus string, streams int) {
	var exports atomic.Int64
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		exports.Add(1)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer sink.Close()
	genCPUs, proxyCPUs := "", ""
	if cpus == "split" {
		genCPUs, proxyCPUs = "0", "1"
		defer pinSelf(b, genCPUs, 1)()
	}
	fake := startRole(b, "fakellm", genCPUs)
	bare := startRole(b, "bare", proxyCPUs, "OTELITL_PROXY_BENCH_UPSTREAM="+fake.url)
	proxy := startRole(b, "proxy", proxyCPUs, "OTELITL_PROXY_BENCH_UPSTREAM="+fake.url,
		"OTEL_EXPORTER_OTLP_ENDPOINT="+sink.URL, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf")
	var compare *proc
	if exe := os.Getenv("OTELITL_PROXY_BENCH_COMPARE"); exe != "" {
		compare = startExe(b, exe, "proxy", proxyCPUs, "OTELITL_PROXY_BENCH_UPSTREAM="+fake.url,
			"OTEL_EXPORTER_OTLP_ENDPOINT="+sink.URL, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf")
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512, DisableCompression: true}}
	arrivals := func(id uint64) ([]time.Time, error) {
		res, err := client.Get(fake.url + "/debug/arrivals?id=" + strconv.FormatUint(id, 10))
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		var a struct {
			Arrivals []int64 `json:"arrivals_unix_nano"`
		}
		if err := json.NewDecoder(res.Body).Decode(&a); err != nil {
			return nil, err
		}
		out := make([]time.Time, len(a.Arrivals))
		for i, n := range a.Arrivals {
			out[i] = time.Unix(0, n)
		}
		return out, nil
	}
	type path struct {
		name string
		url  string
		p    *proc // the proxy process, if any
		res  result
		fake time.Duration // fakellm's CPU time during the path's runs
		self time.Duration // the load generator's
		sw   int64         // the proxy's context switches
	}
	paths := []*path{{name: "direct", url: fake.url}, {name: "bare", url: bare.url, p: bare}, {name: "proxy", url: proxy.url, p: proxy}}
	if compare != nil {
		paths = append(paths, &path{name: "compare", url: compare.url, p: compare})
	}
	for _, pa := range paths { // warm up: connections, and the first allocations
		runStreams(client, pa.url, arrivals, min(streams, 20))
	}
	for b.Loop() {
		for _, pa := range paths {
			f0, s0 := fake.cpu(), cpuTime()
			var p0 time.Duration
			var sw0 int64
			if pa.p != nil {
				p0, sw0 = pa.p.cpu(), pa.p.switches()
			}
			r := runStreams(client, pa.url, arrivals, streams)
			if pa.p != nil {
				r.cpu = pa.p.cpu() - p0
				pa.sw += pa.p.switches() - sw0
			}
			pa.fake += fake.cpu() - f0
			pa.self += cpuTime() - s0
			pa.res.add(r)
		}
	}
	perK := func(d time.Duration, chunks int) float64 { return float64(d) / 1e6 / (float64(chunks) / 1000) }
	d := paths[0].res.summary()
	for _, pa := range paths[1:] {
		s := pa.res.summary()
		b.ReportMetric(float64(s.ttft50-d.ttft50)/1e3, pa.name+"-added-ttft-p50-µs")
		b.ReportMetric(float64(s.ttft99-d.ttft99)/1e3, pa.name+"-added-ttft-p99-µs")
		b.ReportMetric(float64(s.lat50-d.lat50)/1e3, pa.name+"-added-chunk-p50-µs")
		b.ReportMetric(float64(s.lat99-d.lat99)/1e3, pa.name+"-added-chunk-p99-µs")
		b.ReportMetric(perK(s.cpu, s.chunks), pa.name+"-cpu-ms/kchunk")
	}
	b.ReportMetric(float64(d.lat99)/1e3, "direct-chunk-p99-µs")
	for _, pa := range paths {
		if pa.res.failed > 0 {
			b.ReportMetric(float64(pa.res.failed), pa.name+"-failed-streams")
			b.Logf("%s: %d streams failed; the first: %v", pa.name, pa.res.failed, pa.res.err)
		}
		s := pa.res.summary()
		b.Logf("%s/streams=%d %-7s chunks %6d | latency p50/p99 %v/%v | ttft p50/p99 %v/%v | gap jitter p99 %v | cpu per kchunk: proxy %.1f ms (%.2f context switches a chunk), fakellm %.1f ms, load generator %.1f ms",
			cpus, streams, pa.name, s.chunks, s.lat50, s.lat99, s.ttft50, s.ttft99, s.jit99,
			perK(s.cpu, s.chunks), float64(pa.sw)/float64(max(s.chunks, 1)), perK(pa.fake, s.chunks), perK(pa.self, s.chunks))
	}
	proxy.stop()
	if compare != nil {
		compare.stop()
	}
	if exports.Load() == 0 {
		b.Error("the proxy exported no spans")
	}
}

// BenchmarkLoopback measures the floor under any proxy's cost per chunk on this machine: a
// 200-byte write on a loopback TCP connection and the blocking read that receives it, in another
// goroutine that then waits for the next, as a proxy waits for the next chunk (a proxy pays one of
// these per chunk for the chunk's way in, and half of another for its way out). cpu-ns/msg is this
// process's CPU time per message, both ends included.
//
//	go test -run '^$' -bench BenchmarkLoopback ./cmd/otelitl-proxy
func BenchmarkLoopback(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	got := make(chan struct{})
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 32<<10)
		for {
			if _, err := c.Read(buf); err != nil {
				close(got)
				return
			}
			got <- struct{}{}
		}
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	msg := make([]byte, 200)
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N { // not b.Loop: the CPU time is read around one run of b.N
		if _, err := c.Write(msg); err != nil {
			b.Fatal(err)
		}
		<-got
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/msg")
	b.StopTimer()
	_ = c.Close()
	<-got
}
