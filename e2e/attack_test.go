package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/otelitl/itl/otelitl"
)

// grpcHandshakeTimeout is how long grpc-go waits for a new connection's HTTP/2 preface (its
// ConnectionTimeout, which the collector's configgrpc does not expose): a connection that sends
// nothing is dropped then.
const grpcHandshakeTimeout = 120 * time.Second

var (
	readHeaderTimeout = regexp.MustCompile(`read_header_timeout:\s*(\S+)`)
	endpointDefault   = regexp.MustCompile(`endpoint: \$\{env:[A-Z_]+:-([^}]*)\}`)
	requiredVar       = regexp.MustCompile(`\$\{env:([A-Za-z0-9_]+):\?`)
	anyVar            = regexp.MustCompile(`\$\{env:([A-Za-z0-9_]+)`)
	secretVar         = regexp.MustCompile(`TOKEN|SECRET|PASSWORD|API_KEY|BASIC_AUTH`)
)

// TestShippedConfigsUnderAttack starts the built collector with every shipped config and probes it
// as the attacks of issue 13 did:
//   - where a receiver listens beyond loopback, OTLP/HTTP and OTLP/gRPC without the client token
//     (or certificate) are refused, and with it accepted;
//   - a request whose headers never end is closed within the config's read_header_timeout;
//   - connections that send nothing are dropped, each counted from its own dial: OTLP/HTTP within
//     read_header_timeout, OTLP/gRPC within grpc-go's handshake timeout (120 s);
//   - each variable the config requires, set empty, makes the collector refuse to start, naming it;
//   - a request over the receivers' size limit is refused, over both protocols, as the README says;
//   - the debug config's log holds figures but none of the prompt-like attribute values sent.
//
// The configs run in parallel: the test takes about the gRPC handshake timeout.
func TestShippedConfigsUnderAttack(t *testing.T) {
	requireE2E(t)
	buildCollector(t)
	for _, cfg := range shippedConfigFiles(t) {
		t.Run(filepath.Base(cfg), func(t *testing.T) {
			t.Parallel()
			raw := mustRead(t, cfg)
			headerTimeout := 30 * time.Second // the most TestReceiversBoundTimeAndSize allows
			if m := readHeaderTimeout.FindStringSubmatch(raw); m == nil {
				t.Errorf("no read_header_timeout in %s: probing against %v", cfg, headerTimeout)
			} else if d, err := time.ParseDuration(m[1]); err == nil {
				headerTimeout = d
			}
			s := shippedWithBackends(t, cfg, newLimitedBackend())
			startShipped(t, cfg, &s)

			exposed := false
			for _, ep := range endpointDefault.FindAllStringSubmatch(raw, -1) {
				host, _, _ := net.SplitHostPort(ep[1])
				if ip := net.ParseIP(host); ip != nil && !ip.IsLoopback() {
					exposed = true
				}
			}
			if exposed {
				probeAuth(t, s)
			} else if s.client.token != "" {
				t.Errorf("a loopback config with a client token: extend the probe")
			}

			var wg sync.WaitGroup
			wg.Go(func() { probePartialHeader(t, s, headerTimeout) })
			// 10 s of slack for a loaded machine (connections were seen dropped 11.4 s after their
			// dial); a receiver without read_header_timeout still fails it (debug.yaml without it:
			// 200 of 200 still open 40 s after their dial).
			wg.Go(func() { probeSilentConns(t, "http", s.ports.http, 200, headerTimeout+10*time.Second) })
			wg.Go(func() { probeSilentConns(t, "grpc", s.ports.grpc, 50, grpcHandshakeTimeout+30*time.Second) })
			wg.Go(func() { probeRequiredVars(t, cfg, s) })
			wg.Go(func() { probeOversized(t, s) })
			if strings.HasPrefix(s.name, "debug") {
				wg.Go(func() { probeDebugLog(t, s) })
			}
			wg.Wait()
		})
	}
}

// probeAuth sends an empty but valid export request over both protocols without the client token,
// with a wrong one, and with the right one: only the last may pass.
func probeAuth(t *testing.T, s shippedSetup) {
	t.Helper()
	if s.client.pool == nil {
		t.Errorf("%s listens beyond loopback without TLS", s.name)
		return
	}
	tlsCfg := &tls.Config{RootCAs: s.client.pool, MinVersion: tls.VersionTLS12}
	body, _ := ptraceotlp.NewExportRequest().MarshalProto()
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}, Timeout: 10 * time.Second}
	conn, err := grpc.NewClient(s.ports.grpc, grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	gc := ptraceotlp.NewGRPCClient(conn)
	for _, c := range []struct {
		name, header string
		ok           bool
	}{
		{"no token", "", false},
		{"a wrong token", "Bearer not-the-token", false},
		{"an empty bearer", "Bearer ", false},
		{"the token", "Bearer " + s.client.token, true},
	} {
		req, _ := http.NewRequest(http.MethodPost, "https://"+s.ports.http+"/v1/traces", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/x-protobuf")
		if c.header != "" {
			req.Header.Set("Authorization", c.header)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Errorf("OTLP/HTTP with %s: %v", c.name, err)
		} else {
			resp.Body.Close()
			if (resp.StatusCode == http.StatusOK) != c.ok {
				t.Errorf("OTLP/HTTP with %s: status %d, want accepted=%v", c.name, resp.StatusCode, c.ok)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if c.header != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", c.header)
		}
		_, err = gc.Export(ctx, ptraceotlp.NewExportRequest())
		cancel()
		if c.ok && err != nil {
			t.Errorf("OTLP/gRPC with %s: %v, want accepted", c.name, err)
		}
		if !c.ok && status.Code(err) != codes.Unauthenticated {
			t.Errorf("OTLP/gRPC with %s: %v, want Unauthenticated", c.name, err)
		}
	}
	// Plain text to a TLS receiver is no way around it either.
	req, _ := http.NewRequest(http.MethodPost, "http://"+s.ports.http+"/v1/traces", bytes.NewReader(body))
	if resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("OTLP/HTTP in plain text was accepted")
		}
	}
	// The refusal is logged as one line, not with a stack trace (five lines a connection).
	var log []byte
	const refused = "client sent an HTTP request to an HTTPS server"
	if !waitFor(10*time.Second, func() bool {
		log, _ = os.ReadFile(s.proc.log)
		return bytes.Contains(log, []byte(refused))
	}) {
		t.Errorf("the plain-text request's refusal is not in the collector's log:\n%s", tail(log, 2000))
	} else if _, after, _ := bytes.Cut(log[bytes.Index(log, []byte(refused)):], []byte("\n")); bytes.HasPrefix(after, []byte("net/http.")) {
		t.Errorf("the plain-text request's refusal is logged with a stack trace:\n%s", firstLines(after, 4))
	}
	conn2, _ := grpc.NewClient(s.ports.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	defer conn2.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := ptraceotlp.NewGRPCClient(conn2).Export(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+s.client.token), ptraceotlp.NewExportRequest()); err == nil {
		t.Errorf("OTLP/gRPC in plain text was accepted")
	}
}

// probeOversized sends a request over the receivers' limit (32 MiB or less in every shipped
// config, TestReceiversBoundTimeAndSize) over both protocols: it is refused whole, with what the
// README says (ResourceExhausted on gRPC; 400 "request body too large" on HTTP).
func probeOversized(t *testing.T, s shippedSetup) {
	t.Helper()
	body := make([]byte, 40<<20)
	var tlsCfg *tls.Config
	scheme := "http"
	if s.client.pool != nil {
		tlsCfg, scheme = &tls.Config{RootCAs: s.client.pool, MinVersion: tls.VersionTLS12}, "https"
	}
	req, _ := http.NewRequest(http.MethodPost, scheme+"://"+s.ports.http+"/v1/traces", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-protobuf")
	if s.client.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.client.token)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}, Timeout: 30 * time.Second}
	resp, err := hc.Do(req)
	switch {
	case err != nil && (errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed)):
		// The receiver answered and closed while the body was still being written: the client
		// meets the closed connection before the answer. Refused whole all the same.
	case err != nil:
		t.Errorf("OTLP/HTTP over the limit: %v, want an answer or a closed connection", err)
	default:
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !bytes.Contains(msg, []byte("request body too large")) {
			t.Errorf("OTLP/HTTP over the limit: %d %s, want 400 request body too large (README, Reliability)", resp.StatusCode, msg)
		}
	}

	creds := insecure.NewCredentials()
	if tlsCfg != nil {
		creds = credentials.NewTLS(tlsCfg)
	}
	conn, err := grpc.NewClient(s.ports.grpc, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	td := ptraceotlp.NewExportRequest()
	td.Traces().ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes().PutStr("x", string(body))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if s.client.token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+s.client.token)
	}
	if _, err := ptraceotlp.NewGRPCClient(conn).Export(ctx, td); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("OTLP/gRPC over the limit: %v, want ResourceExhausted (README, Reliability)", err)
	}
}

// dialReceiver opens a connection to an OTLP/HTTP receiver, TLS included when the config has it.
func dialReceiver(s shippedSetup, addr string) (net.Conn, error) {
	if s.client.pool != nil {
		return tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{RootCAs: s.client.pool, MinVersion: tls.VersionTLS12})
	}
	return net.DialTimeout("tcp", addr, 5*time.Second)
}

// probePartialHeader starts a request whose headers never end: the receiver must close the
// connection within its read_header_timeout (plus scheduling slack).
func probePartialHeader(t *testing.T, s shippedSetup, timeout time.Duration) {
	t.Helper()
	c, err := dialReceiver(s, s.ports.http)
	if err != nil {
		t.Errorf("dialing OTLP/HTTP: %v", err)
		return
	}
	defer c.Close()
	begin := time.Now()
	if _, err := io.WriteString(c, "POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-protobuf\r\nX-Slow: "); err != nil {
		t.Errorf("writing a partial header: %v", err)
		return
	}
	limit := timeout + 10*time.Second // scheduling slack on a loaded machine
	_ = c.SetReadDeadline(begin.Add(limit + 10*time.Second))
	_, err = io.Copy(io.Discard, c)
	held := time.Since(begin)
	var ne net.Error
	if (errors.As(err, &ne) && ne.Timeout()) || held > limit {
		t.Errorf("a partial header held the OTLP/HTTP connection for %v; read_header_timeout is %v", held.Round(time.Second), timeout)
	} else {
		t.Logf("a partial header was cut after %v (read_header_timeout %v)", held.Round(100*time.Millisecond), timeout)
	}
}

// probeSilentConns opens n connections that send nothing and checks that the server closes every
// one of them within limit of its own dial. Each connection's clock starts when its dial begins,
// before the kernel could complete its handshake, let alone the collector accept it: a connection
// accepted late is held against the server from the start. It does not start when the first dial
// begins: under load (make check with -parallel 8 and other jobs on two cores) this process, not
// the collector, is starved and the 200 dials have taken 10 s, all eight configs' at once (the
// listeners' accept queues held 15 at most, no SYN was retransmitted), and the connections dialed
// last, each dropped 10 to 11.4 s after its own dial, were counted as held for 20 s (96 of 200).
func probeSilentConns(t *testing.T, proto, addr string, n int, limit time.Duration) {
	t.Helper()
	begin := time.Now()
	type silent struct {
		c       net.Conn
		started time.Time // before the dial: no older than this
	}
	var conns []silent
	var slowestDial time.Duration
	for range n {
		started := time.Now()
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Errorf("%s: opening silent connection %d: %v", proto, len(conns), err)
			break
		}
		slowestDial = max(slowestDial, time.Since(started))
		_ = c.SetReadDeadline(started.Add(limit))
		conns = append(conns, silent{c, started})
	}
	dials := time.Since(begin)
	var mu sync.Mutex
	var held int
	var longest time.Duration
	var wg sync.WaitGroup
	for _, s := range conns {
		wg.Go(func() {
			defer s.c.Close()
			_, err := io.Copy(io.Discard, s.c)
			mu.Lock()
			defer mu.Unlock()
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				held++
			}
			longest = max(longest, time.Since(s.started))
		})
	}
	wg.Wait()
	if held > 0 {
		t.Errorf("%s: %d of %d silent connections were still open %v after their dial (the %d dials took %v, the slowest %v)",
			proto, held, len(conns), limit, len(conns), dials.Round(time.Millisecond), slowestDial.Round(time.Millisecond))
	} else {
		t.Logf("%s: %d silent connections, each dropped within %v of its dial (the dials took %v, the slowest %v)",
			proto, len(conns), longest.Round(100*time.Millisecond), dials.Round(time.Millisecond), slowestDial.Round(time.Millisecond))
	}
}

// probeRequiredVars starts the collector once per variable the config requires, that variable set
// empty: it must exit with an error naming the variable.
func probeRequiredVars(t *testing.T, cfg string, s shippedSetup) {
	t.Helper()
	seen := map[string]bool{}
	var code strings.Builder
	for _, line := range strings.Split(mustRead(t, cfg), "\n") {
		if l, _, _ := strings.Cut(line, " #"); !strings.HasPrefix(strings.TrimSpace(l), "#") {
			code.WriteString(l + "\n")
		}
	}
	// The variables marked required, and every secret the config reads, marked or not: with any of
	// them empty the collector must not start.
	var names []string
	for _, m := range requiredVar.FindAllStringSubmatch(code.String(), -1) {
		names = append(names, m[1])
	}
	for _, m := range anyVar.FindAllStringSubmatch(code.String(), -1) {
		if secretVar.MatchString(m[1]) {
			names = append(names, m[1])
		}
	}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, buildCollector(t), "--config", cfg)
		// Fresh ports: the collector under attack holds the configured ones.
		env := append(append(os.Environ(), s.env...), newCollectorPorts(t).env()...)
		cmd.Env = append(env, name+"=")
		out, err := cmd.CombinedOutput()
		timedOut := ctx.Err() != nil
		cancel()
		if err == nil || timedOut {
			t.Errorf("with %s empty the collector did not refuse to start (%v)", name, err)
			continue
		}
		if !strings.Contains(string(out), "environment variable "+name+" is empty") {
			t.Errorf("with %s empty the collector exited without naming it:\n%s", name, tail(out, 600))
		}
	}
	if len(seen) == 0 && s.client.token != "" {
		t.Errorf("%s requires a client token but no variable", s.name)
	}
}

// probeDebugLog sends generations whose attributes carry prompt-like text and checks the debug
// log: the figures are there (metric lines of the connector), the text is not.
func probeDebugLog(t *testing.T, s shippedSetup) {
	t.Helper()
	const marker = "PROMPT-MARKER-7f3a"
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.prompt", marker+" tell me a secret"),
		attribute.String("gen_ai.input.messages", `[{"role":"user","content":"`+marker+`"}]`),
		attribute.String("gen_ai.output.messages", `[{"role":"assistant","content":"`+marker+`"}]`),
		attribute.String("gen_ai.completion.0.content", marker),
		attribute.String("llm.prompts.0.content", marker),
		attribute.String("user.email", marker+"@example.com"),
	}
	tp, ce, _ := sdkSender(t, "grpc", s.ports.grpc, s.client)
	in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithAttributes(attrs...))
	ctx := context.Background()
	base := time.Now().Add(-time.Minute)
	for i := range 20 {
		_, g := in.Start(ctx, otelitl.Request{Provider: "debug", Model: "debug-model", StartTime: base})
		at := base.Add(time.Duration(100+i) * time.Millisecond)
		for range 10 {
			at = at.Add(15 * time.Millisecond)
			g.ChunkAt(at, 1)
		}
		g.EndAt(at, nil)
	}
	if err := tp.Shutdown(ctx); err != nil || ce.failed.Load() != 0 {
		t.Errorf("sending to the debug config: %v", err)
		return
	}
	var log []byte
	ok := waitFor(30*time.Second, func() bool {
		log, _ = os.ReadFile(s.proc.log)
		return bytes.Contains(log, []byte("gen_ai.client.operation.time_to_first_chunk{")) && bytes.Contains(log, []byte(`"spans": 20`))
	})
	if !ok {
		t.Errorf("the debug log shows no figures for the 20 spans:\n%s", tail(log, 2000))
	}
	if bytes.Contains(log, []byte(marker)) {
		i := bytes.Index(log, []byte(marker))
		t.Errorf("the debug log holds a prompt-like attribute value: ...%s...", log[max(0, i-200):min(len(log), i+100)])
	}
	if t.Failed() {
		return
	}
	t.Logf("debug log: %s", firstLine(log, "gen_ai.client.operation.time_to_first_chunk{"))
}

// firstLines returns the first n lines of b.
func firstLines(b []byte, n int) string {
	lines := strings.SplitN(string(b), "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

func firstLine(b []byte, sub string) string {
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, sub) {
			return fmt.Sprintf("%.300s", l)
		}
	}
	return ""
}
