package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelitl/itl/internal/refused"
	"github.com/otelitl/itl/internal/syncbuf"
	"github.com/otelitl/itl/otelitl/httpitl"
)

func TestParseConfig(t *testing.T) {
	env := map[string]string{"OTELITL_PROXY_OPENAI": "http://env-openai:1", "OTELITL_PROXY_OLLAMA": "http://127.0.0.1:11434/"}
	getenv := func(k string) string { return env[k] }
	c, err := parseConfig([]string{"-openai", "https://flag-openai/base/", "-anthropic", "https://api.anthropic.com"}, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.upstream["openai"].String(); got != "https://flag-openai/base" {
		t.Errorf("the flag must win over the environment: %s", got)
	}
	if got := c.upstream["ollama"].String(); got != "http://127.0.0.1:11434" {
		t.Errorf("ollama from the environment: %s", got)
	}
	if _, ok := c.upstream["gemini"]; ok || c.addr != "127.0.0.1:8787" {
		t.Errorf("defaults: %+v", c)
	}
	for _, tc := range []struct {
		args []string
		want string // in the error
	}{
		{[]string{"-openai", "api.openai.com"}, "-openai"},
		{[]string{"-gemini", "ftp://x"}, "-gemini"},
		{[]string{"-anthropic", "https://x?y=1"}, "-anthropic"},
		{[]string{"-addr", "8787"}, "-addr"},
		{[]string{"-tls-cert", "c.pem"}, "-tls-key"},
		{[]string{"-nope"}, "nope"},
		{[]string{"stray"}, "unexpected argument"},
		// The proxy forwards only: without an upstream it would answer every request 502.
		{nil, "no upstream is configured: set at least one of -openai, -anthropic, -gemini or -ollama (or OTELITL_PROXY_OPENAI, OTELITL_PROXY_ANTHROPIC, OTELITL_PROXY_GEMINI or OTELITL_PROXY_OLLAMA) to the API's base URL, such as -openai https://api.openai.com"},
		{[]string{"-openai", " "}, "no upstream is configured"},
		{[]string{"-addr", ":9000"}, "no upstream is configured"},
	} {
		_, err := parseConfig(tc.args, func(string) string { return "" }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one naming %q", tc.args, err, tc.want)
		}
	}
}

// An error names the setting as the user gave it: the environment variable when the value came
// from there, the flag when it was on the command line (which wins over the variable).
func TestErrorNamesTheSettingGiven(t *testing.T) {
	checkConfigs(t, []configCase{
		{map[string]string{"OTELITL_PROXY_OPENAI": "ftp://x"}, nil, []string{`OTELITL_PROXY_OPENAI="ftp://x": want the API's base URL`}},
		{map[string]string{"OTELITL_PROXY_OPENAI": "http://h:8000/v1"}, nil, []string{`OTELITL_PROXY_OPENAI="http://h:8000/v1": drop the trailing /v1, as in OTELITL_PROXY_OPENAI=http://h:8000:`}},
		{map[string]string{"OTELITL_PROXY_OLLAMA": "127.0.0.1:11434"}, nil, []string{`OTELITL_PROXY_OLLAMA="127.0.0.1:11434"`}},
		{map[string]string{"OTELITL_PROXY_ADDR": "8787"}, []string{"-openai", "http://h"}, []string{`OTELITL_PROXY_ADDR="8787": want host:port`}},
		// net.Listen said "listen tcp: address 99999: invalid port", without the setting or the range.
		{nil, []string{"-addr", "127.0.0.1:99999", "-openai", "http://h"}, []string{`-addr "127.0.0.1:99999": port 99999 is outside 0 to 65535; give one within, such as 127.0.0.1:8787 (0: any free port, announced at start)`}},
		{nil, []string{"-addr", "127.0.0.1:-1", "-openai", "http://h"}, []string{`-addr "127.0.0.1:-1": port -1 is outside 0 to 65535`}},
		{nil, []string{"-addr", "127.0.0.1:no-such-service", "-openai", "http://h"}, []string{`-addr "127.0.0.1:no-such-service": port "no-such-service" is neither a number nor a service's name; give one from 0 to 65535`}},
		{map[string]string{"OTELITL_PROXY_TLS_CERT": "c.pem"}, []string{"-openai", "http://h"}, []string{"OTELITL_PROXY_TLS_CERT is set without -tls-key (or OTELITL_PROXY_TLS_KEY)"}},
		{nil, []string{"-tls-key", "k.pem", "-openai", "http://h"}, []string{"-tls-key is set without -tls-cert (or OTELITL_PROXY_TLS_CERT)"}},
		{map[string]string{"OTELITL_PROXY_OPENAI": "http://h"}, []string{"-openai", "ftp://x"}, []string{`-openai "ftp://x": want the API's base URL`}},
		{map[string]string{"OTELITL_PROXY_OPENAI": "ftp://x"}, []string{"-openai", "http://h"}, nil},
	})
}

// TestUnparsedUpstreamHidesPassword: an upstream url.Parse cannot read (a space in the host, a
// password pasted with a # or a / not percent-encoded) is refused with its password written xxxxx,
// where the error printed the value as given, password and all. checkConfigs fails on s3cret.
func TestUnparsedUpstreamHidesPassword(t *testing.T) {
	checkConfigs(t, []configCase{
		{nil, []string{"-openai", "https://user:s3cret@gate way.example"}, []string{`-openai "https://user:xxxxx@gate way.example": want the API's base URL`}},
		// A password pasted with a #, / or ? not percent-encoded: the fix is its encoding, which
		// otelcol-itl names, where the proxy asked for a base URL with a host, which it has.
		{map[string]string{"OTELITL_PROXY_ANTHROPIC": "https://user:s3cret#x@gw.example:8443"}, nil, []string{`OTELITL_PROXY_ANTHROPIC="https://user:xxxxx@gw.example:8443": its user or password holds a /, ? or #, which ends the host of a URL; write each percent-encoded (/ as %2F, ? as %3F, # as %23)`}},
		{nil, []string{"-ollama", "http://user:s3cret/x@gw.example:11434"}, []string{`-ollama "http://user:xxxxx@gw.example:11434": its user or password holds a /, ? or #`}},
		{nil, []string{"-openai", "https://user:s3?cret@gw.example"}, []string{`-openai "https://user:xxxxx@gw.example": its user or password holds a /, ? or #`}},
	})
}

// An upstream that ends in the version prefix the clients' paths begin with (the base URL as the
// SDKs take it) is refused at start, with the flag, the value and the URL to give instead: the
// proxy appends the client's path, and every request would reach /v1/v1/... and 404. A path that
// is not such a prefix (Groq's /openai) is the upstream's own and kept.
func TestUpstreamWithVersionPrefix(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // in the error; none: accepted
	}{
		{[]string{"-openai", "http://127.0.0.1:8000/v1"}, []string{`-openai "http://127.0.0.1:8000/v1"`, "drop the trailing /v1, as in -openai http://127.0.0.1:8000:", "/v1/chat/completions"}},
		{[]string{"-openai", "https://gw.example/openai/v1/"}, []string{"drop the trailing /v1, as in -openai https://gw.example/openai:"}},
		{[]string{"-anthropic", "https://api.anthropic.com/v1"}, []string{`-anthropic "https://api.anthropic.com/v1"`, "as in -anthropic https://api.anthropic.com:", "/v1/messages"}},
		{[]string{"-gemini", "https://generativelanguage.googleapis.com/v1beta"}, []string{"drop the trailing /v1beta, as in -gemini https://generativelanguage.googleapis.com:"}},
		{[]string{"-gemini", "https://generativelanguage.googleapis.com/v1"}, []string{"drop the trailing /v1,"}},
		{[]string{"-gemini", "https://us-central1-aiplatform.googleapis.com/v1beta1"}, []string{"drop the trailing /v1beta1,"}},
		{[]string{"-gemini", "https://generativelanguage.googleapis.com/v2alpha/"}, []string{"drop the trailing /v2alpha, as in -gemini https://generativelanguage.googleapis.com:"}}, // a version to come
		{[]string{"-gemini", "https://gw.example/gemini/V1ALPHA"}, []string{"drop the trailing /V1ALPHA, as in -gemini https://gw.example/gemini:"}},
		{[]string{"-gemini", "https://gw.example/version"}, nil},
		{[]string{"-gemini", "https://gw.example/v1betas"}, nil},
		{[]string{"-ollama", "http://127.0.0.1:11434/api"}, []string{"drop the trailing /api, as in -ollama http://127.0.0.1:11434:", "/api/chat"}},
		{[]string{"-openai", "https://user:s3cret@gw.example/V1"}, []string{"drop the trailing /V1, as in -openai https://user:xxxxx@gw.example:", `-openai "https://user:xxxxx@gw.example/V1"`}},
		{[]string{"-openai", "https://api.groq.com/openai"}, nil},
		{[]string{"-openai", "http://127.0.0.1:8000/v10"}, nil},
		{[]string{"-ollama", "http://gw.example/ollama"}, nil},
	} {
		_, err := parseConfig(tc.args, func(string) string { return "" }, io.Discard)
		if len(tc.want) == 0 && err != nil {
			t.Errorf("%v: %v, want it accepted", tc.args, err)
		}
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %v, want one with %q", tc.args, err, w)
			}
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%v: the error shows the password: %v", tc.args, err)
		}
	}
	// -h says so.
	var help strings.Builder
	_, _ = parseConfig([]string{"-h"}, func(string) string { return "" }, &help)
	for _, w := range []string{"upstream base URL, without /v1, e.g. https://api.openai.com", "without /v1beta, e.g. https://generativelanguage.googleapis.com", "without /api, e.g. http://127.0.0.1:11434"} {
		if !strings.Contains(help.String(), w) {
			t.Errorf("-h does not say %q:\n%s", w, help.String())
		}
	}
}

func TestRoute(t *testing.T) {
	for path, want := range map[string]string{
		"/v1/chat/completions": "openai", "/v1/responses": "openai", "/v1/completions": "openai", "/v1/models": "openai",
		"/v1/messages": "anthropic", "/v1/messages/count_tokens": "anthropic",
		"/v1beta/models/gemini-2.0-flash:streamGenerateContent": "gemini", "/v1/models/gemini-pro:generateContent": "gemini",
		"/api/chat": "ollama", "/api/generate": "ollama", "/api/tags": "ollama",
		"/openai/deployments/d/chat/completions": "openai", "/openai/v1/responses": "openai",
		// Azure AI Foundry: a resource's model inference API, a project's OpenAI paths (not Ollama's /api/).
		"/models/chat/completions": "openai", "/api/projects/p/openai/v1/responses": "openai",
		// Vertex AI: Claude by its publisher (anthropic-sdk-go's vertex package sends no
		// anthropic-version header; it went to the OpenAI upstream), Gemini by its method.
		"/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict": "anthropic",
		"/v1/projects/p/locations/global/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict":         "anthropic",
		"/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent":      "gemini",
		"/": "", "/favicon.ico": "",
	} {
		if got := route(path, nil); got != want {
			t.Errorf("route(%q) = %q, want %q", path, got, want)
		}
	}
	// A vendor's own header takes its request to its upstream, whatever the path: by the path
	// alone these went to OpenAI's, with the vendor's key.
	for _, c := range []struct{ path, header, want string }{
		{"/v1/models", "anthropic-version", "anthropic"},
		{"/v1/messages/batches", "anthropic-version", "anthropic"},
		{"/v1/complete", "anthropic-version", "anthropic"},
		{"/v1/models", "x-goog-api-key", "gemini"},
		{"/v1beta/models", "x-goog-api-key", "gemini"},
		{"/api/chat", "anthropic-version", "ollama"}, // not a versioned path: the path decides
	} {
		h := http.Header{}
		h.Set(c.header, "x")
		if got := route(c.path, h); got != c.want {
			t.Errorf("route(%q, %s) = %q, want %q", c.path, c.header, got, c.want)
		}
	}
}

// TestMisdirected: a path whose version the client's base URL got wrong (twice, or not at all) is
// answered by the proxy with the base URL to give, and reaches no upstream: /v1/v1/messages went
// to the OpenAI upstream with the Anthropic key, and came back a bare 404.
func TestMisdirected(t *testing.T) {
	reached := make(chan string, 8)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached <- r.URL.Path + " " + r.Header.Get("X-Api-Key")
	}))
	defer up.Close()
	proxy, _ := startProxy(t, "-openai", up.URL, "-anthropic", up.URL, "-gemini", up.URL, "-ollama", up.URL)
	host := strings.TrimPrefix(proxy.URL, "http://")
	for _, tc := range []struct{ path, want string }{
		{"/v1/v1/messages", "the path repeats /v1, which the client's SDK adds to its base URL itself: an Anthropic client's base URL is http://" + host + ", without /v1 (ANTHROPIC_BASE_URL)"},
		{"/v1/v1/chat/completions", "an OpenAI client's base URL is http://" + host + "/v1 (OPENAI_BASE_URL)"},
		{"/v1beta/v1beta/models/g:streamGenerateContent", "the path repeats /v1beta"},
		{"/api/api/chat", "an Ollama client's host is http://" + host + ", without /api"},
		{"/chat/completions", "the client's base URL lacks the /v1 of its API: an OpenAI client's base URL is http://" + host + "/v1"},
	} {
		req, _ := http.NewRequest(http.MethodPost, proxy.URL+tc.path, strings.NewReader(`{"model":"m","stream":true}`))
		req.Header.Set("x-api-key", "sk-ant-secret")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if msg := errorMessage(res); res.StatusCode != http.StatusNotFound || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %d %q, want 404 with %q", tc.path, res.StatusCode, msg, tc.want)
		}
	}
	select {
	case r := <-reached:
		t.Errorf("a misdirected request reached an upstream: %s", r)
	default:
	}
	for path, want := range map[string]string{"/": "", "/favicon.ico": "", "/chat/completions": "lacks the /v1"} {
		if got := misdirected(path, host); want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("misdirected(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestConnectionSurvivesUpstreamFailure: requests with a body whose upstream fails before reading
// it are each answered 502 on the client's kept-alive connection. Before finishBody, Go's server
// panicked on the next request's read in about a third of them (golang/go#68560, with full
// duplex on) and reset the connection.
func TestConnectionSurvivesUpstreamFailure(t *testing.T) {
	proxy, logs := startProxy(t, "-openai", "http://"+refused.Addr(t))
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}} // one connection, reused
	defer client.CloseIdleConnections()
	for i := range 20 {
		res, err := client.Post(proxy.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true}`))
		if err != nil {
			t.Fatalf("request %d: %v\nproxy log:\n%s", i, err, logs.String())
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusBadGateway {
			t.Fatalf("request %d: %s, want 502", i, res.Status)
		}
	}
}

// TestUpstreamErrorHint: an upstream nothing listens at, or one spoken to with TLS that has none,
// is answered (and logged) with the setting to change.
func TestUpstreamErrorHint(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer plain.Close()
	dead := "http://" + refused.Addr(t)
	proxy, logs := startProxy(t, "-openai", dead, "-anthropic", strings.Replace(plain.URL, "http://", "https://", 1))
	for _, tc := range []struct{ path, want string }{
		{"/v1/chat/completions", "(nothing listens at " + dead + ": start the server there, or set -openai to the address it listens at)"},
		{"/v1/messages", "does not speak TLS: write -anthropic with http://)"},
	} {
		res, err := http.Post(proxy.URL+tc.path, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %s, want 502 with %q", tc.path, res.StatusCode, body, tc.want)
		}
	}
	if !strings.Contains(logs.String(), "start the server there") || !strings.Contains(logs.String(), "write -anthropic with http://") {
		t.Errorf("the log lacks the hints:\n%s", logs.String())
	}
}

// TestForwarding: each protocol's requests reach its upstream at <base><path> with the query and
// the authorization headers; a protocol without an upstream is answered 502 naming its flag.
func TestForwarding(t *testing.T) {
	type seen struct{ path, query, auth, key, goog, azure, accept string }
	got := make(chan seen, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("X-Goog-Api-Key"), r.Header.Get("Api-Key"), r.Header.Get("Accept-Encoding")}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}")
	}))
	defer up.Close()
	proxy, logs := startProxy(t, "-openai", up.URL+"/prefix", "-anthropic", up.URL, "-gemini", up.URL)
	for _, tc := range []struct{ path, want string }{
		{"/v1/chat/completions", "/prefix/v1/chat/completions"},
		{"/v1/messages", "/v1/messages"},
		{"/v1beta/models/g:streamGenerateContent?alt=sse", "/v1beta/models/g:streamGenerateContent"},
	} {
		req, _ := http.NewRequest(http.MethodPost, proxy.URL+tc.path, strings.NewReader(`{"model":"m"}`))
		req.Header.Set("Authorization", "Bearer sk-secret")
		req.Header.Set("x-api-key", "k1")
		goog := ""
		if strings.HasPrefix(tc.path, "/v1beta/") {
			// Google's key header routes a request to Gemini whatever its path (TestRoute).
			goog = "k2"
			req.Header.Set("x-goog-api-key", goog)
		}
		req.Header.Set("api-key", "k3")
		req.Header.Set("Accept-Encoding", "gzip, br")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		s := <-got
		if s.path != tc.want || s.auth != "Bearer sk-secret" || s.key != "k1" || s.goog != goog || s.azure != "k3" {
			t.Errorf("%s reached the upstream as %+v", tc.path, s)
		}
		if strings.Contains(tc.path, "alt=sse") && s.query != "alt=sse" {
			t.Errorf("the query was lost: %q", s.query)
		}
		if s.accept != "identity" {
			t.Errorf("the upstream was offered %q: the proxy must ask for identity, so that no compressor upstream holds events back", s.accept)
		}
	}
	res, err := http.Post(proxy.URL+"/api/chat", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if msg := errorMessage(res); res.StatusCode != http.StatusBadGateway || !strings.Contains(msg, "-ollama") || !strings.Contains(msg, "OTELITL_PROXY_OLLAMA") {
		t.Errorf("unconfigured protocol: %d %q", res.StatusCode, msg)
	}
	res, err = http.Get(proxy.URL + "/healthz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", res, err)
	}
	res.Body.Close()
	if strings.Contains(logs.String(), "sk-secret") {
		t.Errorf("a secret reached the log: %s", logs.String())
	}
}

// TestLargeBodyFullDuplex: an upstream may start answering before it has read the whole request
// (a server that streams while it is still receiving a long prompt). The proxy keeps reading the
// client's body after it has written the response's header, so a 3 MiB request whose second half
// the client sends only once the answer has begun arrives whole, and the stream reaches the client.
// "Begun" is the client's own view: the second half waits until the answer's first byte has
// reached the client, which the proxy sends only once it has written the header.
func TestLargeBodyFullDuplex(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A Go server that answers while it reads must say so too, or its own HTTP/1 server
		// discards 256 KiB of what it has not read.
		if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush() // the answer starts before the body is read
		n, err := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%d bytes, %v\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n", n, err)
	}))
	defer up.Close()
	c, err := parseConfig([]string{"-openai", up.URL}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(newHandler(c, httpitl.NewTransport(http.DefaultTransport), log.New(io.Discard, "", 0)))
	defer proxy.Close()
	head, tail := `{"model":"m","stream":true,"messages":[{"role":"user","content":"`+strings.Repeat("x", 1<<20), strings.Repeat("y", 2<<20)+`"}]}`
	answered := make(chan struct{})
	var once sync.Once
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotFirstResponseByte: func() { once.Do(func() { close(answered) }) },
	})
	pr, pw := io.Pipe()
	sentEarly := make(chan bool, 1)
	go func() {
		_, _ = io.WriteString(pw, head)
		select {
		case <-answered: // the proxy has written the answer's header
			sentEarly <- false
		case <-time.After(10 * time.Second):
			sentEarly <- true // the header never came while the body was open: fails below
		}
		_, _ = io.WriteString(pw, tail)
		pw.Close()
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, proxy.URL+"/v1/chat/completions", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if <-sentEarly {
		t.Error("the answer's header did not reach the client while the request's second half was held back")
	}
	got, err := io.ReadAll(res.Body)
	res.Body.Close()
	if want := fmt.Sprintf("%d bytes, <nil>", len(head)+len(tail)); err != nil || !strings.Contains(string(got), want) {
		t.Fatalf("the upstream saw %q (read error %v), want %q", got, err, want)
	}
}

// errorMessage reads and closes the body of the proxy's own answer, and returns its error's
// message, as an OpenAI-style client shows it.
func errorMessage(res *http.Response) string {
	defer res.Body.Close()
	var e struct {
		Error struct{ Message, Type string }
	}
	_ = json.NewDecoder(res.Body).Decode(&e)
	return e.Error.Message
}

// startProxy serves the proxy configured by args, over Go's own transport, until the test ends,
// and returns the server and what the proxy logs.
func startProxy(t *testing.T, args ...string) (*httptest.Server, *syncbuf.Buffer) {
	t.Helper()
	c, err := parseConfig(args, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	proxy := httptest.NewServer(newHandler(c, http.DefaultTransport, log.New(logs, "", 0)))
	t.Cleanup(proxy.Close)
	return proxy, logs
}

// TestUpstreamFailureErrorType: a generation whose upstream cannot be reached ends with an
// error.type that says why in a word, from a fixed set (connection_refused, dns_error, tls_error,
// timeout, and connection_error for the rest), and the same span status description. Before, it
// was the Go type of the transport's error, such as *net.OpError for both a refused connection
// and a name that did not resolve.
func TestUpstreamFailureErrorType(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	plain := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer plain.Close()
	untrusted := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0) // the proxy's refusal of its certificate
	untrusted.StartTLS()
	defer untrusted.Close()
	// silent accepts and never answers; closing accepts and closes at once.
	silent, closing := listen(t, func(net.Conn) {}), listen(t, func(c net.Conn) { c.Close() })
	for _, tc := range []struct{ name, upstream, want string }{
		{"refused", "http://" + refused.Addr(t), "connection_refused"},
		{"unresolved", "http://upstream.invalid", "dns_error"},
		{"TLS to a server without it", strings.Replace(plain.URL, "http://", "https://", 1), "tls_error"},
		{"untrusted certificate", untrusted.URL, "tls_error"},
		{"TLS handshake timeout", "https://" + silent, "timeout"},
		{"closed before answering", "http://" + closing, "connection_error"},
	} {
		exp.Reset()
		base := http.DefaultTransport.(*http.Transport).Clone()
		base.TLSHandshakeTimeout = 300 * time.Millisecond
		// No name resolves, without asking the machine's DNS server.
		base.DialContext = (&net.Dialer{Resolver: &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
			return nil, errors.New("no DNS server in this test")
		}}}).DialContext
		c, err := parseConfig([]string{"-openai", tc.upstream}, func(string) string { return "" }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		proxy := httptest.NewServer(newHandler(c, upstreamTransport(base, tp), log.New(io.Discard, "", 0)))
		res, err := http.Post(proxy.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true}`))
		if err != nil {
			t.Fatal(err)
		}
		msg := errorMessage(res)
		proxy.Close()
		base.CloseIdleConnections()
		spans := exp.GetSpans()
		if res.StatusCode != http.StatusBadGateway || len(spans) != 1 {
			t.Errorf("%s: %d %q and %d spans, want 502 and one span", tc.name, res.StatusCode, msg, len(spans))
			continue
		}
		if got := spanAttr(spans[0], "error.type"); got != tc.want || spans[0].Status.Description != tc.want {
			t.Errorf("%s: error.type %q, status %q; want %q (%s)", tc.name, got, spans[0].Status.Description, tc.want, msg)
		}
	}
}

// listen serves each connection to a new loopback listener with serve until the test ends, and
// returns the listener's address.
func listen(t *testing.T, serve func(net.Conn)) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			serve(c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// TestOneContinue: a client that sends Expect: 100-continue and waits for the interim answer before
// its body gets exactly one 100 Continue, then the upstream's answer, over a raw loopback
// connection that counts the interim responses. The proxy's own server sends one when the body is
// first read, and ReverseProxy relayed the upstream's as a second: always for a generation, whose
// body httpitl reads first, and for another request whenever the upstream's came first.
func TestOneContinue(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body) // Go's server answers the Expect with 100 Continue here
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%d bytes\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n", len(body))
	}))
	defer up.Close()
	c, err := parseConfig([]string{"-openai", up.URL}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter()))
	defer tp.Shutdown(context.Background())
	base := http.DefaultTransport.(*http.Transport).Clone() // as start has it: it waits 1 s for the upstream's 100
	defer base.CloseIdleConnections()
	logger := log.New(io.Discard, "", 0)
	proxy := httptest.NewUnstartedServer(nil)
	proxy.Config = newServer("", newHandler(c, upstreamTransport(base, tp), logger), logger)
	proxy.Start()
	defer proxy.Close()
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	for _, path := range []string{"/v1/chat/completions", "/v1/files"} {
		conn, err := net.Dial("tcp", proxy.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", path, proxy.Listener.Addr(), len(body))
		br := bufio.NewReader(conn)
		res, err := http.ReadResponse(br, nil)
		if err != nil || res.StatusCode != http.StatusContinue {
			t.Fatalf("%s: %v %v before the body, want 100 Continue", path, res, err)
		}
		continues := 1
		_, _ = io.WriteString(conn, body)
		for {
			if res, err = http.ReadResponse(br, nil); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if res.StatusCode >= 200 {
				break
			}
			if res.StatusCode == http.StatusContinue {
				continues++
			}
		}
		got, err := io.ReadAll(res.Body)
		conn.Close()
		if continues != 1 || res.StatusCode != http.StatusOK || err != nil || !strings.Contains(string(got), fmt.Sprintf("%d bytes", len(body))) {
			t.Errorf("%s: %d interim 100 Continue, then %s %q (%v); want one, then the upstream's stream", path, continues, res.Status, got, err)
		}
	}
}

// TestUpstreamEndpointURL: an upstream given as an endpoint's whole URL (what an API's reference
// shows for one call), or with a query or a fragment, is refused at start with the setting as the
// user gave it, the value and the base URL to give instead: the proxy appends each request's own
// path and query, and sent every request to <endpoint URL>/v1/chat/completions. A base path of the
// upstream's own, or one that merely looks like an endpoint, is kept.
func TestUpstreamEndpointURL(t *testing.T) {
	checkConfigs(t, []configCase{
		{nil, []string{"-openai", "https://api.openai.com/v1/chat/completions"}, []string{`-openai "https://api.openai.com/v1/chat/completions": drop /v1/chat/completions, as in -openai https://api.openai.com: the proxy appends the client's own path and query, such as /v1/chat/completions`}},
		{nil, []string{"-openai", "https://api.groq.com/openai/v1/chat/completions/"}, []string{"drop /v1/chat/completions, as in -openai https://api.groq.com/openai:"}},
		{nil, []string{"-openai", "http://127.0.0.1:8000/v1/completions"}, []string{"as in -openai http://127.0.0.1:8000:"}},
		{nil, []string{"-openai", "https://api.openai.com/v1/responses"}, []string{"drop /v1/responses, as in -openai https://api.openai.com:"}},
		{nil, []string{"-openai", "https://api.openai.com/V1/Embeddings"}, []string{"drop /V1/Embeddings, as in -openai https://api.openai.com:"}},
		{nil, []string{"-openai", "https://user:s3cret@gw.example/v1/chat/completions"}, []string{`-openai "https://user:xxxxx@gw.example/v1/chat/completions"`, "as in -openai https://user:xxxxx@gw.example:"}},
		{nil, []string{"-openai", "https://res.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21"}, []string{"drop /openai/deployments/gpt-4o/chat/completions and the query, as in -openai https://res.openai.azure.com:"}},
		{map[string]string{"OTELITL_PROXY_ANTHROPIC": "https://api.anthropic.com/v1/messages?beta=true"}, nil, []string{`OTELITL_PROXY_ANTHROPIC="https://api.anthropic.com/v1/messages?beta=true": drop /v1/messages and the query, as in OTELITL_PROXY_ANTHROPIC=https://api.anthropic.com:`, "such as /v1/messages"}},
		{nil, []string{"-gemini", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse"}, []string{"drop /v1beta/models/gemini-2.0-flash:streamGenerateContent and the query, as in -gemini https://generativelanguage.googleapis.com:"}},
		{nil, []string{"-gemini", "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.0-flash:generateContent"}, []string{"as in -gemini https://us-central1-aiplatform.googleapis.com:"}},
		{nil, []string{"-gemini", "https://gw.example/gemini/v1beta/models/m:streamGenerateContent"}, []string{"as in -gemini https://gw.example/gemini:"}},
		{nil, []string{"-ollama", "http://127.0.0.1:11434/api/chat"}, []string{"drop /api/chat, as in -ollama http://127.0.0.1:11434:", "such as /api/chat"}},
		{nil, []string{"-ollama", "http://127.0.0.1:11434/api/generate"}, []string{"as in -ollama http://127.0.0.1:11434:"}},
		// A query or a fragment alone: the client sends its own query (Azure's api-version).
		{nil, []string{"-openai", "https://res.openai.azure.com/openai?api-version=2024-10-21"}, []string{"drop the query, as in -openai https://res.openai.azure.com/openai:"}},
		{nil, []string{"-openai", "http://127.0.0.1:8000/v1?x=1"}, []string{"drop /v1 and the query, as in -openai http://127.0.0.1:8000:"}},
		{nil, []string{"-anthropic", "https://api.anthropic.com#messages"}, []string{"drop the fragment, as in -anthropic https://api.anthropic.com:"}},
		// Base paths: kept.
		{nil, []string{"-openai", "https://api.groq.com/openai"}, nil},
		{nil, []string{"-openai", "https://res.openai.azure.com/openai"}, nil},
		{nil, []string{"-openai", "https://gw.example/completions-api"}, nil},
		{nil, []string{"-anthropic", "https://gw.example/messaging"}, nil},
		{nil, []string{"-ollama", "http://gw.example/ollama"}, nil},
	})
}

// TestModelAfterLongPrompt: a client that writes its prompt before the model (openai-python and
// openai-go do) with a prompt past the first MiB the proxy holds (an image): the generation span
// still has the model, in its name too, and the stream flag, read as the body passes upstream; the
// upstream gets the body whole.
func TestModelAfterLongPrompt(t *testing.T) {
	got := make(chan int, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		got <- int(n)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"model\":\"m-2024\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer up.Close()
	c, err := parseConfig([]string{"-openai", up.URL}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	proxy := httptest.NewServer(newHandler(c, httpitl.NewTransport(http.DefaultTransport, httpitl.WithTracerProvider(tp)), log.New(io.Discard, "", 0)))
	defer proxy.Close()
	body := `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,` +
		strings.Repeat("iVBORw0KGgo", 3<<20/11) + `"}}]}],"model":"m","stream":true}`
	res, err := http.Post(proxy.URL+"/v1/chat/completions", "application/json", struct{ io.Reader }{strings.NewReader(body)})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if n := <-got; n != len(body) {
		t.Errorf("the upstream got %d bytes of %d", n, len(body))
	}
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	if spans[0].Name != "chat m" {
		t.Errorf("span name %q, want chat m", spans[0].Name)
	}
	for k, want := range map[string]string{"gen_ai.request.model": "m", "gen_ai.request.stream": "true", "gen_ai.response.model": "m-2024", "otelitl.chunk.count": "1"} {
		var v string
		for _, a := range spans[0].Attributes {
			if string(a.Key) == k {
				v = a.Value.String()
			}
		}
		if v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
}

// configCase is a configuration given as variables and flags, and what its error must say.
type configCase struct {
	env  map[string]string
	args []string
	want []string // in the error; none: accepted
}

// checkConfigs parses each case's configuration: with want, the error must hold every string of
// it; without, the configuration must be accepted. No error may show the password s3cret that
// some cases' URLs carry.
func checkConfigs(t *testing.T, cases []configCase) {
	t.Helper()
	for _, tc := range cases {
		_, err := parseConfig(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
		if len(tc.want) == 0 && err != nil {
			t.Errorf("env %v, args %v: %v, want it accepted", tc.env, tc.args, err)
		}
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("env %v, args %v: error %v, want one with %q", tc.env, tc.args, err, w)
			}
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("env %v, args %v: the error shows the password: %v", tc.env, tc.args, err)
		}
	}
}

// FuzzUpstreamPassword: whatever host and path an upstream's URL has, parsed or not, no error
// parseConfig returns shows its password.
func FuzzUpstreamPassword(f *testing.F) {
	f.Add("res.openai.azure.com", "/openai/v1?x")
	f.Add("gate way", "")
	f.Add("h", "/openai/deployments/d#f")
	f.Fuzz(func(t *testing.T, host, path string) {
		for _, p := range protocols {
			raw := "https://user:s3cr3tpw@" + host + path
			_, err := parseConfig([]string{"-" + p.name, raw}, func(string) string { return "" }, io.Discard)
			if err != nil && strings.Contains(err.Error(), "s3cr3tpw") {
				t.Fatalf("-%s %q: %v", p.name, raw, err)
			}
		}
	})
}
