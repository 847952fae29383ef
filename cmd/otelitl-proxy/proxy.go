package main

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httputil"
	"regexp"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelitl/itl/otelitl/httpitl"
)

// route returns the protocol a request belongs to: /v1/messages is Anthropic's, /v1beta/ and
// Gemini methods (":generateContent") Gemini's, /api/ Ollama's, and the rest of /v1/ OpenAI's, as
// are /openai/ (Azure OpenAI's paths), /models/ (the Azure AI model inference API of a Foundry
// resource, https://NAME.services.ai.azure.com/models) and /api/projects/ (a Foundry project's
// OpenAI paths, /api/projects/P/openai/v1/...), whose upstream is the OpenAI one: before, a
// project's path went to the Ollama upstream by its /api/, and /models/ to none.
//
// A request that carries a vendor's own header goes to that vendor's upstream whatever its path
// (Anthropic's SDKs send anthropic-version on every request, Google's send x-goog-api-key): by its
// path alone, Anthropic's /v1/models or Gemini's /v1/models would go to the OpenAI upstream, and
// the vendor's key with them.
func route(path string, h http.Header) string {
	versioned := strings.HasPrefix(path, "/v1") // /v1/, /v1beta/, /v1alpha/
	switch {
	case versioned && h.Get("anthropic-version") != "":
		return "anthropic"
	case versioned && h.Get("x-goog-api-key") != "":
		return "gemini"
	case path == "/v1/messages" || strings.HasPrefix(path, "/v1/messages/"):
		return "anthropic"
	case versioned && strings.Contains(path, "/publishers/anthropic/models/"):
		// Claude on Vertex AI (:streamRawPredict): anthropic-sdk-go's vertex package sends no
		// anthropic-version header, and the path is Vertex's, so -anthropic gives Vertex's host.
		return "anthropic"
	case strings.HasPrefix(path, "/v1beta/") || strings.Contains(path, ":generateContent") || strings.Contains(path, ":streamGenerateContent"):
		return "gemini"
	case strings.HasPrefix(path, "/api/projects/"):
		return "openai"
	case strings.HasPrefix(path, "/api/"):
		return "ollama"
	case strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/openai/") || strings.HasPrefix(path, "/models/"):
		return "openai"
	}
	return ""
}

// vertexLocation finds the location of a Vertex AI path (/v1/projects/P/locations/L/publishers/...).
var vertexLocation = regexp.MustCompile(`^/v1[^/]*/projects/[^/]+/locations/([a-z0-9-]+)/publishers/`)

// upstreamExample says what an upstream for a request to path is, and gives an example of it, for
// the message that asks for pr's flag: the flag's own example is the vendor's API, but Claude on
// Vertex AI (-anthropic) and Gemini on it (-gemini) need Vertex's host for the path's location, and
// Azure's paths (-openai) the Azure resource, to which the vendor's API would answer 404 with the
// client's key or token sent to the wrong company.
func upstreamExample(path string, pr protocol) (base, example string) {
	if m := vertexLocation.FindStringSubmatch(path); m != nil {
		// The hosts anthropic-sdk-go's vertex package gives each location.
		switch m[1] {
		case "global":
			return "Vertex AI's base URL", "https://aiplatform.googleapis.com"
		case "us", "eu":
			return "Vertex AI's base URL", "https://aiplatform." + m[1] + ".rep.googleapis.com"
		}
		return "Vertex AI's base URL", "https://" + m[1] + "-aiplatform.googleapis.com"
	}
	if pr.name == "openai" {
		switch {
		case strings.HasPrefix(path, "/openai/"):
			return "the Azure resource's URL", "https://NAME.openai.azure.com"
		case strings.HasPrefix(path, "/models/"), strings.HasPrefix(path, "/api/projects/"):
			return "the Azure resource's URL", "https://NAME.services.ai.azure.com"
		}
	}
	return "the API's base URL", pr.example
}

// misdirected explains a path that no API serves because the client's base URL is off by its
// version: the SDK appends /v1/messages to a base URL that already ends in /v1 (/v1/v1/messages),
// or an OpenAI client's base URL lacks the /v1 its SDK expects there (/chat/completions). Such a
// request is answered by the proxy itself: forwarded, it would reach an upstream by its path's
// first segment alone (/v1/v1/messages went to OpenAI's, with the Anthropic key), and come back
// as a bare 404. It returns "" for any other path.
func misdirected(path, host string) string {
	for _, v := range []string{"/v1", "/v1beta", "/api"} {
		if rest, ok := strings.CutPrefix(path, v+v+"/"); ok {
			return fmt.Sprintf("otelitl-proxy: no API at %s: the path repeats %s, which the client's SDK adds to its base URL itself: %s", path, v, baseURLs(route(v+"/"+rest, nil), host))
		}
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if route(path, nil) != "" || first == "" || strings.Contains(first, ".") {
		return "" // routed, or the root or a file (/favicon.ico): no client's base URL is off
	}
	if name := route("/v1"+path, nil); name != "" {
		return fmt.Sprintf("otelitl-proxy: no API at %s: the client's base URL lacks the /v1 of its API: %s", path, baseURLs(name, host))
	}
	return ""
}

// baseURLs says what base URL to give a client of protocol name, the proxy being at host.
func baseURLs(name, host string) string {
	switch name {
	case "openai":
		return fmt.Sprintf("an OpenAI client's base URL is http://%s/v1 (OPENAI_BASE_URL)", host)
	case "anthropic":
		return fmt.Sprintf("an Anthropic client's base URL is http://%s, without /v1 (ANTHROPIC_BASE_URL)", host)
	case "gemini":
		return fmt.Sprintf("a Gemini client's base URL is http://%s, without its version", host)
	case "ollama":
		return fmt.Sprintf("an Ollama client's host is http://%s, without /api (OLLAMA_HOST)", host)
	}
	return fmt.Sprintf("give the client http://%s as its base URL, without the version its SDK adds", host)
}

// upstreamHint is the fix for an error reaching upstream name at up, set by setting: nothing
// listening there, or TLS spoken to a server without it.
func upstreamHint(err error, setting, up string) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "connection refused"):
		return fmt.Sprintf(" (nothing listens at %s: start the server there, or set %s to the address it listens at)", up, setting)
	case strings.Contains(msg, "first record does not look like a TLS handshake"), strings.Contains(msg, "server gave HTTP response to HTTPS client"):
		return fmt.Sprintf(" (the server at %s does not speak TLS: write %s with http://)", up, setting)
	}
	return ""
}

// upstreamTransport is how the proxy reaches its upstreams: httpitl's transport over base, which
// records each generation as a span of tp, and names an upstream that could not be reached
// (connection_refused, dns_error, timeout, tls_error, connection_error) as it does for any
// application.
func upstreamTransport(base *http.Transport, tp trace.TracerProvider) http.RoundTripper {
	return httpitl.NewTransport(base, httpitl.WithTracerProvider(tp))
}

// newHandler returns the proxy: /healthz, and every API request forwarded to its protocol's
// upstream through rt (httpitl's transport), each event flushed to the client as soon as it is
// read.
func newHandler(c config, rt http.RoundTripper, logger *log.Logger) http.Handler {
	proxies := map[string]*httputil.ReverseProxy{}
	for name, up := range c.upstream {
		setting := c.name(name)
		proxies[name] = &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(up)
				// The stream is timed as it passes: ask the upstream for identity encoding, so
				// that no compressor upstream holds events back to fill a block. The client still
				// gets every byte; HTTP lets a proxy drop the offer to compress. Set, not deleted:
				// without the header, Go's transport offers gzip itself.
				pr.Out.Header.Set("Accept-Encoding", "identity")
			},
			Transport:     rt,
			FlushInterval: -1,
			ErrorLog:      logger,
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				// The error names the upstream URL, never a header: authorization stays out of logs.
				hint := upstreamHint(err, setting, up.Redacted())
				logger.Printf("%s %s: upstream %s: %v%s", r.Method, r.URL.Path, name, err, hint)
				writeError(w, http.StatusBadGateway, "upstream_error", fmt.Sprintf("otelitl-proxy: the %s upstream failed: %v%s", name, err, hint))
			},
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if msg := misdirected(r.URL.Path, r.Host); msg != "" {
			writeError(w, http.StatusNotFound, "not_found", msg)
			return
		}
		name := route(r.URL.Path, r.Header)
		if name == "" {
			writeError(w, http.StatusNotFound, "not_found", "otelitl-proxy: no API at "+r.URL.Path+": it forwards /v1/... (OpenAI), /openai/... and /api/projects/... (Azure OpenAI), /models/... (Azure AI model inference), /v1/messages (Anthropic), /v1beta/... (Gemini) and /api/... (Ollama)")
			return
		}
		p, ok := proxies[name]
		if !ok {
			for _, pr := range protocols {
				if pr.name == name {
					base, example := upstreamExample(r.URL.Path, pr)
					writeError(w, http.StatusBadGateway, "proxy_not_configured", fmt.Sprintf("otelitl-proxy: no %s upstream is configured: start the proxy with -%s (or %s) set to %s, such as %s", pr.title, pr.name, pr.env, base, example))
				}
			}
			return
		}
		// An upstream may answer before it has read the whole request (it streams while a long
		// prompt is still arriving). By default Go's HTTP/1 server then discards up to 256 KiB of the
		// unread request body and closes the rest when the answer's header is written: the
		// upstream would get a truncated prompt. Full duplex keeps the body flowing. (HTTP/2 is
		// full duplex already and reports an error here, which is fine to ignore.)
		_ = http.NewResponseController(w).EnableFullDuplex()
		// The caller's trace context, if it sent one, parents the generation span.
		ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		p.ServeHTTP(oneContinue{w}, r.WithContext(ctx))
		finishBody(w, r)
	})
	return mux
}

// oneContinue is the client's ResponseWriter without the upstream's 100 Continue, which
// ReverseProxy relays: the proxy's own server answers a request's Expect: 100-continue with one
// when the body is first read, which httpitl does at once for a generation, and otherwise the
// upstream's transport does once the upstream has sent its own (or a second has passed). The
// client got two. A final answer before the body is read still goes without any, and other
// interim responses (103 Early Hints) pass.
type oneContinue struct{ http.ResponseWriter }

func (w oneContinue) WriteHeader(code int) {
	if code == http.StatusContinue {
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap gives http.ResponseController, which ReverseProxy flushes through, the writer itself.
func (w oneContinue) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finishBody closes a full-duplex request's body before the handler returns, as Go's server
// would after it, once the answer is flushed. With full duplex on, Go's HTTP/1 server leaves an
// unread body to the end of the request and closes it there, after it has stopped watching the
// connection: when closing reads the body to its end, a read of the connection starts that races
// the read of the next request, the server panics ("invalid concurrent Body.Read call",
// golang/go#68560) and drops the connection, and the client's next request on it is reset. That
// happened whenever an upstream failed before it read the body (refused, TLS) or answered without
// reading it all. Closed here, the body's end is met while the server still watches (it then
// stops that read itself); a body longer than the server reads is not read, and the server closes
// the connection after the answer, as it does anyway. ReverseProxy does not close it: it hands
// the upstream a body whose Close does nothing.
func finishBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	_ = http.NewResponseController(w).Flush()
	_ = r.Body.Close()
}

// writeError answers with a JSON error in the shape OpenAI-style clients print.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ}})
}

// newServer sets the timeouts: headers must come within 10 s and idle connections close after
// 2 min; there is no write timeout, which would cut long streams.
func newServer(addr string, h http.Handler, logger *log.Logger) *http.Server {
	return &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, ErrorLog: logger, MaxHeaderBytes: 1 << 20}
}
