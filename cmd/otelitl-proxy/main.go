// Command otelitl-proxy is a streaming proxy for LLM APIs that records every generation through it
// as an OpenTelemetry span with its full chunk timeline (time to first chunk, every gap between
// chunks), for applications in any language: point the SDK's base URL at it.
//
//	otelitl-proxy -openai https://api.openai.com -anthropic https://api.anthropic.com
//	OPENAI_BASE_URL=http://127.0.0.1:8787/v1 python app.py
//
// Requests are routed by path: /v1/messages to the Anthropic upstream, and so Claude on Vertex
// AI's /v1/projects/.../publishers/anthropic/models/M:streamRawPredict (the upstream Vertex's
// host, https://REGION-aiplatform.googleapis.com), /v1beta/... (and Gemini
// methods such as :streamGenerateContent) to the Gemini upstream, /api/... to the Ollama upstream,
// and the rest of /v1/... to the OpenAI upstream, each as <upstream base URL><path>: an upstream is
// given without /v1 (Gemini's /v1beta, Ollama's /api), and one that ends in it is refused, as is an
// endpoint's whole URL (https://api.openai.com/v1/chat/completions), an Azure OpenAI deployment's
// (https://NAME.openai.azure.com/openai/deployments/NAME, whose path the Azure clients send
// themselves), Azure's v1 base URL (https://NAME.openai.azure.com/openai/v1, with a query or an
// endpoint's path after it too, cut to the resource, not to its /openai), a Foundry resource's
// model inference endpoint (https://NAME.services.ai.azure.com/models, cut to the resource), a
// Vertex AI base URL with its project's path (.../v1/projects/P/locations/L, cut to the host) or one
// with a query or a fragment, each with the base URL to give. Azure OpenAI's
// paths, /openai/deployments/NAME/chat/completions?api-version=... and /openai/v1/..., go to the
// OpenAI upstream (the resource, https://NAME.openai.azure.com) with their query, and are recorded
// as azure.ai.openai (see httpitl). A
// request with Anthropic's anthropic-version header or Google's x-goog-api-key goes to that
// vendor's upstream whatever its path, and a path whose version the client's base URL doubled or
// left out (/v1/v1/messages, /chat/completions) is answered 404 with the base URL to give. At
// least one upstream is needed; a request for a protocol without one is answered 502 with the flag
// to set and an example of the base URL for the request's API (Vertex's host for a Vertex path,
// the Azure resource for an Azure one), and one whose upstream cannot be reached 502 too, its span's error.type saying why:
// connection_refused, dns_error, timeout, tls_error, else connection_error. Amazon Bedrock is not
// served: the AWS SDKs sign every request with SigV4, its host included, so a request signed for
// the proxy is one Bedrock refuses, and the proxy cannot sign it again without the application's
// credentials (Go applications get Bedrock timelines from httpitl). Every flag also reads an
// environment variable (OTELITL_PROXY_ADDR, OTELITL_PROXY_OPENAI, OTELITL_PROXY_ANTHROPIC,
// OTELITL_PROXY_GEMINI, OTELITL_PROXY_OLLAMA, OTELITL_PROXY_TLS_CERT, OTELITL_PROXY_TLS_KEY); a
// flag on the command line wins, and errors name the one given.
//
// Authorization headers (Authorization, x-api-key, x-goog-api-key, api-key) are passed through to
// the upstream and never recorded or logged. Each event is flushed to the client as soon as it is
// read. Spans are exported over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (OTEL_EXPORTER_OTLP_PROTOCOL or
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: http/protobuf, the default, or grpc; _HEADERS, _TIMEOUT,
// _INSECURE, true or false, and _CERTIFICATE as the exporters read them); otherwise nothing is
// exported. OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none (in any case) turns tracing off
// whatever endpoint is set: requests are proxied, no span is recorded and no collector is reached;
// another exporter than otlp or none is refused at start. SIGINT or SIGTERM stops the proxy: it
// waits up to 30 s for open streams, cuts those left (their spans end with error.type cancelled),
// then flushes the spans.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/otelitl/itl/internal/otlpenv"
	"github.com/otelitl/itl/internal/tlsfile"
)

// listenError is net.Listen's error for the address setting, with the fix: net.Listen says
// "bind: address already in use", "bind: permission denied", "bind: cannot assign requested
// address" (an address of another machine) or "lookup HOST: no such host", which name none.
func listenError(setting string, err error) error {
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Errorf("%s: %w: the host is no name this machine finds; give one of its addresses, such as 127.0.0.1:8787, or :8787 for every interface", setting, err)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return fmt.Errorf("%s: %w: the host is no address of this machine; give one of its own, such as 127.0.0.1:8787, or :8787 for every interface", setting, err)
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Errorf("%s: %w: another process listens there; stop it, or give another address, such as 127.0.0.1:8788", setting, err)
	case errors.Is(err, syscall.EACCES):
		return fmt.Errorf("%s: %w: a port below 1024 needs root or CAP_NET_BIND_SERVICE; give a port from 1024, such as 127.0.0.1:8787", setting, err)
	}
	return fmt.Errorf("%s: %w", setting, err)
}

func main() {
	c, err := parseConfig(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flagHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "otelitl-proxy:", err)
		os.Exit(2)
	}
	if err := run(c, log.New(os.Stderr, "otelitl-proxy: ", log.LstdFlags)); err != nil {
		fmt.Fprintln(os.Stderr, "otelitl-proxy:", err)
		os.Exit(1)
	}
}

func run(c config, logger *log.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	p, err := start(ctx, c, logger)
	if err != nil {
		return err
	}
	return p.serve(ctx, logger)
}

// started is the proxy listening and announced, not yet serving.
type started struct {
	srv             *http.Server
	l               net.Listener
	shutdownTracing func(context.Context) error
	inflight        *sync.WaitGroup // the requests being served
	grace           time.Duration   // how long a shutdown waits for open streams
}

// start does what can fail before the proxy announces "listening on": it loads the TLS
// certificate, sets up the OTLP exporter from the environment and listens. The announcement tells
// the user (and BenchmarkProxyProcs, which waits for it) that the proxy is up, so a certificate
// that is missing or does not match its key fails here, naming both files, instead of in
// ServeTLS just after it.
func start(ctx context.Context, c config, logger *log.Logger) (_ *started, err error) {
	var tlsConfig *tls.Config
	if c.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
		if err != nil {
			// Both files read, crypto/tls's reason ("failed to find any PEM data in certificate
			// input") says neither which file nor what to do: tlsfile tells a DER certificate and
			// the two given swapped.
			certData, cerr := os.ReadFile(c.tlsCert)
			keyData, kerr := os.ReadFile(c.tlsKey)
			if cerr == nil && kerr == nil {
				if why := tlsfile.KeyPair(c.name("tls-cert"), c.tlsCert, certData, c.name("tls-key"), c.tlsKey, keyData); why != nil {
					return nil, fmt.Errorf("%s %s: %w", setting(c.name("tls-cert"), c.tlsCert), setting(c.name("tls-key"), c.tlsKey), why)
				}
			}
			return nil, fmt.Errorf("%s %s: %w: give a PEM certificate and its private key", setting(c.name("tls-cert"), c.tlsCert), setting(c.name("tls-key"), c.tlsKey), err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	}
	tp, shutdownTracing, exporting, err := otlpenv.Tracing(ctx, "otelitl-proxy", logger.Printf)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = shutdownTracing(context.Background()) // nothing recorded yet: nothing to flush
		}
	}()
	var names []string
	for name, u := range c.upstream {
		names = append(names, name+"="+u.Redacted())
	}
	sort.Strings(names)
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = 256
	rt := upstreamTransport(base, tp)
	inflight := &sync.WaitGroup{}
	h := newHandler(c, rt, logger)
	srv := newServer(c.addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inflight.Add(1)
		defer inflight.Done()
		h.ServeHTTP(w, r)
	}), logger)
	srv.TLSConfig = tlsConfig

	l, err := net.Listen("tcp", c.addr)
	if err != nil {
		return nil, listenError(setting(c.name("addr"), c.addr), err)
	}
	// What becomes of the spans is said once the proxy listens: said before an address in use,
	// "not exporting spans" read as the cause of the failure.
	why, _ := otlpenv.Off() // an error there stopped Tracing
	switch {
	case exporting != "":
		logger.Printf("exporting generation spans to %s", exporting)
	case why != "":
		logger.Printf("not recording spans: %s turns tracing off; requests are proxied without spans", why)
	default:
		logger.Print("not exporting spans: no OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set")
	}
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
	}
	logger.Printf("listening on %s://%s; upstreams: %s", scheme, l.Addr(), strings.Join(names, " "))
	return &started{srv: srv, l: l, shutdownTracing: shutdownTracing, inflight: inflight, grace: 30 * time.Second}, nil
}

// serve serves until ctx is done, then waits up to p.grace for open streams, cuts those left, and
// flushes the spans.
func (p *started) serve(ctx context.Context, logger *log.Logger) error {
	errc := make(chan error, 1)
	go func() {
		if p.srv.TLSConfig != nil {
			errc <- p.srv.ServeTLS(p.l, "", "") // the certificate loaded by start
		} else {
			errc <- p.srv.Serve(p.l)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Printf("shutting down: waiting for open streams (%s at most), then flushing spans", p.grace)
	sctx, cancel := context.WithTimeout(context.Background(), p.grace)
	defer cancel()
	serr := p.srv.Shutdown(sctx)
	if errors.Is(serr, context.DeadlineExceeded) {
		// Streams still open: close their connections, which ends their generations (error.type
		// cancelled), and give their handlers a moment to end them, so that the flush below
		// carries their spans instead of losing them.
		_ = p.srv.Close()
		done := make(chan struct{})
		go func() { p.inflight.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		serr = fmt.Errorf("streams still open after %s were cut; their spans end with error.type cancelled", p.grace)
	}
	fctx, fcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer fcancel()
	if err := p.shutdownTracing(fctx); err != nil {
		logger.Printf("flushing spans: %v", err)
	}
	if serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return nil
}
