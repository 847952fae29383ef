package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/otelitl/itl/internal/otlpenv"
	"github.com/otelitl/itl/internal/syncbuf"
)

// noOTLP clears the OTLP variables start reads, for the test.
func noOTLP(t *testing.T) {
	for _, k := range otlpenv.Vars {
		t.Setenv(k, "")
	}
}

// What is wrong at start fails before "listening on", which says the proxy is up, with an error
// naming the setting as the user gave it and the value.
func TestStartFailsBeforeListening(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	up, _ := url.Parse("http://127.0.0.1:1")
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "missing.pem"), filepath.Join(dir, "missing-key.pem")
	goodCert, goodKey := writeCert(t)
	der := filepath.Join(dir, "cert.der")
	certPEM, err := os.ReadFile(goodCert)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := pem.Decode(certPEM); b == nil || os.WriteFile(der, b.Bytes, 0o600) != nil {
		t.Fatal("writing a DER certificate")
	}
	for _, tc := range []struct {
		name  string
		c     config
		otlp  string // OTEL_EXPORTER_OTLP_ENDPOINT
		wants []string
	}{
		{"missing certificate", config{addr: "127.0.0.1:0", tlsCert: cert, tlsKey: key},
			"", []string{`-tls-cert "` + cert + `" -tls-key "` + key + `"`, "no such file", "give a PEM certificate and its private key"}},
		{"missing certificate from the environment", config{addr: "127.0.0.1:0", tlsCert: cert, tlsKey: key, names: map[string]string{"tls-cert": "OTELITL_PROXY_TLS_CERT", "tls-key": "OTELITL_PROXY_TLS_KEY"}},
			"", []string{`OTELITL_PROXY_TLS_CERT="` + cert + `" OTELITL_PROXY_TLS_KEY="` + key + `"`}},
		{"a DER certificate", config{addr: "127.0.0.1:0", tlsCert: der, tlsKey: goodKey},
			"", []string{`-tls-cert "` + der + `"`, "is a DER (binary) certificate, where -tls-cert takes PEM", "openssl x509 -inform der"}},
		{"certificate and key swapped, from the environment", config{addr: "127.0.0.1:0", tlsCert: goodKey, tlsKey: goodCert, names: map[string]string{"tls-cert": "OTELITL_PROXY_TLS_CERT", "tls-key": "OTELITL_PROXY_TLS_KEY"}},
			"", []string{`OTELITL_PROXY_TLS_CERT="` + goodKey + `"`, "the two are given swapped; give the certificate in OTELITL_PROXY_TLS_CERT and its key in OTELITL_PROXY_TLS_KEY"}},
		{"OTLP endpoint without a scheme", config{addr: "127.0.0.1:0"},
			"127.0.0.1:9999", []string{`OTEL_EXPORTER_OTLP_ENDPOINT="127.0.0.1:9999"`, "http://127.0.0.1:9999"}},
		{"address in use, from the environment", config{addr: busy.Addr().String(), names: map[string]string{"addr": "OTELITL_PROXY_ADDR"}},
			"", []string{`OTELITL_PROXY_ADDR="` + busy.Addr().String() + `"`, "address already in use: another process listens there; stop it, or give another address, such as 127.0.0.1:8788"}},
	} {
		noOTLP(t)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", tc.otlp)
		tc.c.upstream = map[string]*url.URL{"openai": up}
		var logs strings.Builder
		p, err := start(context.Background(), tc.c, log.New(&logs, "", 0))
		if err == nil {
			_ = p.l.Close()
			_ = p.shutdownTracing(context.Background())
			t.Errorf("%s: started", tc.name)
			continue
		}
		for _, w := range tc.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want one with %q", tc.name, err, w)
			}
		}
		// Nor does it say what it would do with spans: "not exporting spans" before an address
		// in use read as the cause of the failure.
		for _, said := range []string{"listening on", "exporting", "not recording"} {
			if strings.Contains(logs.String(), said) {
				t.Errorf("%s: logged %q before failing:\n%s", tc.name, said, logs.String())
			}
		}
	}
}

// With a certificate and its key the proxy announces https and serves TLS with them.
func TestStartServesTLS(t *testing.T) {
	noOTLP(t)
	cert, key := writeCert(t)
	up, _ := url.Parse("http://127.0.0.1:1")
	var logs strings.Builder
	p, err := start(context.Background(), config{addr: "127.0.0.1:0", tlsCert: cert, tlsKey: key, upstream: map[string]*url.URL{"openai": up}}, log.New(&logs, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	if want := "listening on https://" + p.l.Addr().String() + ";"; !strings.Contains(logs.String(), want) {
		t.Errorf("logged %q, want %q", logs.String(), want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.serve(ctx, log.New(io.Discard, "", 0)) }()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 5 * time.Second}
	res, err := client.Get("https://" + p.l.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.TLS == nil {
		t.Errorf("healthz over TLS: %d, TLS %v", res.StatusCode, res.TLS != nil)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// writeCert writes a self-signed certificate for 127.0.0.1 and its key as PEM files.
func writeCert(t *testing.T) (certFile, keyFile string) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestShutdownCutsOpenStreams: a stream still open when the shutdown's grace runs out is cut, so
// that its generation ends (cancelled) before the spans are flushed, and serve says so; before,
// serve returned "context deadline exceeded" with the stream's generation never ended, its span
// lost.
func TestShutdownCutsOpenStreams(t *testing.T) {
	noOTLP(t)
	var seen, gone atomic.Int32
	upstream := httptest.NewServer(endlessUpstream(&seen, &gone))
	defer upstream.Close()
	up, _ := url.Parse(upstream.URL)
	p, err := start(context.Background(), config{addr: "127.0.0.1:0", upstream: map[string]*url.URL{"openai": up}}, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	p.grace = 300 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.serve(ctx, log.New(io.Discard, "", 0)) }()
	res, err := http.Post("http://"+p.l.Addr().String()+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	go func() { _, _ = io.Copy(io.Discard, res.Body) }()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "streams still open after 300ms were cut") {
			t.Errorf("serve: %v, want the cut streams named", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not return")
	}
	deadline := time.Now().Add(5 * time.Second)
	for gone.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if seen.Load() != 1 || gone.Load() != 1 {
		t.Errorf("upstream saw %d requests and %d leave, want the stream ended", seen.Load(), gone.Load())
	}
}

// TestTracingOff: with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none (in any case), the
// proxy proxies as before, records no span and connects to no collector, though an OTLP endpoint
// is set, and its startup log says why in one line; otlp exports as before, and an exporter it
// does not support fails at start, naming the variable. Before, both settings were ignored and
// the spans were exported.
func TestTracingOff(t *testing.T) {
	var conns, exports atomic.Int32
	collector := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		exports.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	collector.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	collector.Start()
	defer collector.Close()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer upstream.Close()
	up, _ := url.Parse(upstream.URL)
	for _, tc := range []struct {
		variable, value string
		exported        bool
		logged          string
	}{
		{"OTEL_SDK_DISABLED", "true", false, `not recording spans: OTEL_SDK_DISABLED="true" turns tracing off; requests are proxied without spans`},
		{"OTEL_SDK_DISABLED", "True", false, `not recording spans: OTEL_SDK_DISABLED="True"`},
		{"OTEL_TRACES_EXPORTER", "NONE", false, `not recording spans: OTEL_TRACES_EXPORTER="NONE" turns tracing off`},
		{"OTEL_TRACES_EXPORTER", "otlp", true, "exporting generation spans to " + collector.URL + "/v1/traces"},
	} {
		noOTLP(t)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
		t.Setenv(tc.variable, tc.value)
		collector.CloseClientConnections() // an export would need a new one
		conns.Store(0)
		exports.Store(0)
		logs := &syncbuf.Buffer{}
		p, err := start(context.Background(), config{addr: "127.0.0.1:0", upstream: map[string]*url.URL{"openai": up}}, log.New(logs, "", 0))
		if err != nil {
			t.Fatalf("%s=%s: %v", tc.variable, tc.value, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.serve(ctx, log.New(io.Discard, "", 0)) }()
		res, err := http.Post("http://"+p.l.Addr().String()+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "[DONE]") {
			t.Errorf("%s=%s: %s %q, want the stream proxied", tc.variable, tc.value, res.Status, body)
		}
		if tc.exported && exports.Load() == 0 || !tc.exported && conns.Load()+exports.Load() != 0 {
			t.Errorf("%s=%s: %d connections to the collector and %d exports, want exported %v", tc.variable, tc.value, conns.Load(), exports.Load(), tc.exported)
		}
		lines := 0
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "spans") {
				lines++
			}
		}
		if !strings.Contains(logs.String(), tc.logged) || lines != 1 {
			t.Errorf("%s=%s: logged %q, want one line with %q", tc.variable, tc.value, logs.String(), tc.logged)
		}
	}
	noOTLP(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	var logs strings.Builder
	if p, err := start(context.Background(), config{addr: "127.0.0.1:0", upstream: map[string]*url.URL{"openai": up}}, log.New(&logs, "", 0)); err == nil {
		_ = p.l.Close()
		t.Errorf("OTEL_TRACES_EXPORTER=zipkin: started")
	} else if !strings.Contains(err.Error(), `OTEL_TRACES_EXPORTER="zipkin": the exporters supported are otlp (the default) and none`) || strings.Contains(logs.String(), "listening on") {
		t.Errorf("OTEL_TRACES_EXPORTER=zipkin: %v, logged %q; want an error naming the variable, the value and what is supported, before listening", err, logs.String())
	}
}

// TestListenErrorFix: a port below 1024 that this user may not take (the tests run as root, who
// may) is explained as the address in use is, with the fix; other errors pass as they are.
func TestListenErrorFix(t *testing.T) {
	denied := &net.OpError{Op: "listen", Net: "tcp", Err: os.NewSyscallError("bind", syscall.EACCES)}
	if got := listenError(`-addr ":80"`, denied).Error(); !strings.Contains(got, `-addr ":80": listen tcp: bind: permission denied: a port below 1024 needs root or CAP_NET_BIND_SERVICE`) {
		t.Errorf("permission denied: %s", got)
	}
	// A host that is no name (a space in it), and an address that is not this machine's: net's
	// errors, "lookup my host: no such host" and "bind: cannot assign requested address", named
	// no fix.
	for _, tc := range []struct{ addr, want string }{
		{"my host:0", `-addr "my host:0": listen tcp: lookup my host: no such host: the host is no name this machine finds; give one of its addresses, such as 127.0.0.1:8787, or :8787 for every interface`},
		{"192.0.2.1:0", `-addr "192.0.2.1:0": listen tcp 192.0.2.1:0: bind: cannot assign requested address: the host is no address of this machine; give one of its own, such as 127.0.0.1:8787, or :8787 for every interface`},
	} {
		l, err := net.Listen("tcp", tc.addr)
		if err == nil {
			l.Close()
			t.Logf("%s: listened; this machine holds the address", tc.addr)
			continue
		}
		if got := listenError(fmt.Sprintf("-addr %q", tc.addr), err).Error(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.addr, got, tc.want)
		}
	}
	other := errors.New("listen tcp: lookup nowhere: no such host")
	if got := listenError(`-addr "nowhere:1"`, other).Error(); got != `-addr "nowhere:1": listen tcp: lookup nowhere: no such host` {
		t.Errorf("another error: %s", got)
	}
}
