package main

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelitl/itl/examples/fakellm/engine"
	"github.com/otelitl/itl/examples/fakellm/server"
	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl/httpitl"
)

// stack is fakellm and the proxy in front of it, recording spans in memory. ids holds fakellm's
// request id of each answer the proxy got.
type stack struct {
	eng   *engine.Engine
	fake  *httptest.Server
	proxy *httptest.Server
	exp   *tracetest.InMemoryExporter
	ids   chan uint64
}

type idRecorder struct {
	base http.RoundTripper
	ids  chan uint64
}

func (r idRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := r.base.RoundTrip(req)
	if err == nil {
		if id, perr := strconv.ParseUint(res.Header.Get(server.RequestIDHeader), 10, 64); perr == nil {
			select {
			case r.ids <- id:
			default:
			}
		}
	}
	return res, err
}

func newStack(t testing.TB, cfg engine.Config) *stack {
	eng, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &stack{eng: eng, exp: tracetest.NewInMemoryExporter(), ids: make(chan uint64, 1024)}
	s.fake = httptest.NewServer(server.New(eng, []string{"fake-gpt"}))
	up, _ := url.Parse(s.fake.URL)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(s.exp))
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = 512
	rt := httpitl.NewTransport(idRecorder{base, s.ids}, httpitl.WithTracerProvider(tp))
	s.proxy = httptest.NewServer(newHandler(config{upstream: map[string]*url.URL{"openai": up}}, rt, log.New(io.Discard, "", 0)))
	t.Cleanup(func() {
		s.proxy.Close()
		s.fake.Close()
		eng.Close()
		_ = tp.Shutdown(context.Background())
	})
	return s
}

// check compares the proxy's span with fakellm's arrivals, gap by gap.
func (s *stack) check(t *testing.T, chunks int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(s.exp.GetSpans()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	span, attrs := wraptest.OneSpan(t, s.exp)
	var id uint64
	select {
	case id = <-s.ids:
	default:
		t.Fatal("fakellm answered no generation")
	}
	wraptest.CheckTimeline(t, span, attrs, s.eng.Arrivals(id), wraptest.Busy())
	if got := attrs["otelitl.chunk.count"].AsInt64(); got != int64(chunks) {
		t.Errorf("chunk.count %d, want %d", got, chunks)
	}
	for k, want := range map[string]string{"gen_ai.provider.name": "openai", "gen_ai.request.model": "fake-gpt", "error.type": "", "gen_ai.usage.output_tokens": strconv.Itoa(chunks)} {
		if got := attrs[attributeKey(k)].String(); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	for _, kv := range span.Attributes {
		if strings.Contains(kv.Value.String(), "secret") {
			t.Errorf("a secret reached the span: %s", kv.Key)
		}
	}
}

func quietGC(t *testing.T) {
	runtime.GC()
	old := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(old) })
}

// TestNodeOpenAI streams with the openai npm package (pinned in testdata/npm) through the proxy.
func TestNodeOpenAI(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the end-to-end test with the openai npm package needs Node.js 20+ and npm")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed: the end-to-end test with the openai npm package needs it")
	}
	dir := t.TempDir()
	for _, f := range []string{"package.json", "package-lock.json", "stream.mjs"} {
		b, err := os.ReadFile(filepath.Join("testdata", "npm", f))
		if err != nil {
			t.Fatal(err)
		}
		_ = os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	cmd := exec.Command(npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci (the npm registry must be reachable): %v\n%s", err, out)
	}
	quietGC(t)
	s := newStack(t, fastEngine())
	cmd = exec.Command(node, "stream.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+s.proxy.URL+"/v1", "MAX_TOKENS=10")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	if len(strings.Fields(string(out))) < 10 {
		t.Fatalf("the node client got %q", out)
	}
	s.check(t, 10)
}

// TestCurl streams with curl -N through the proxy.
func TestCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed")
	}
	quietGC(t)
	s := newStack(t, fastEngine())
	out, err := exec.Command(curl, "-sS", "-N", s.proxy.URL+"/v1/chat/completions", "-H", "Authorization: Bearer sk-secret",
		"-H", "Content-Type: application/json",
		"-d", `{"model":"fake-gpt","stream":true,"max_tokens":8,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`).CombinedOutput()
	if err != nil {
		t.Fatalf("curl: %v\n%s", err, out)
	}
	if !strings.HasSuffix(strings.TrimSpace(string(out)), "data: [DONE]") {
		t.Fatalf("curl got %q", out)
	}
	s.check(t, 8)
}

func fastEngine() engine.Config {
	cfg := engine.DefaultConfig()
	cfg.StepBase = 8 * time.Millisecond
	return cfg
}

func attributeKey(k string) attribute.Key { return attribute.Key(k) }
