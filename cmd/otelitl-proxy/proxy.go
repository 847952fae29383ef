package main

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httputil"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
)

// route returns the protocol a request path belongs to: /v1/messages is Anthropic's, /v1beta/ and
// Gemini methods (":generateContent") Gemini's, /api/ Ollama's, and the rest of /v1/ OpenAI's.
func route(path string) string {
	switch {
	case path == "/v1/messages" || strings.HasPrefix(path, "/v1/messages/"):
		return "anthropic"
	case strings.HasPrefix(path, "/v1beta/") || strings.Contains(path, ":generateContent") || strings.Contains(path, ":streamGenerateContent"):
		return "gemini"
	case strings.HasPrefix(path, "/api/"):
		return "ollama"
	case strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/openai/"):
		return "openai"
	}
	return ""
}

// newHandler returns the proxy: /healthz, and every API request forwarded to its protocol's
// upstream through rt (httpitl's transport), each event flushed to the client as soon as it is
// read.
func newHandler(c config, rt http.RoundTripper, logger *log.Logger) http.Handler {
	proxies := map[string]*httputil.ReverseProxy{}
	for name, up := range c.upstream {
		proxies[name] = &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(up)
				// The stream is read as it passes: ask the upstream for identity encoding. The
				// client still gets every byte; HTTP lets a proxy drop the offer to compress.
				pr.Out.Header.Del("Accept-Encoding")
			},
			Transport:     rt,
			FlushInterval: -1,
			ErrorLog:      logger,
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				// The error names the upstream URL, never a header: authorization stays out of logs.
				logger.Printf("%s %s: upstream %s: %v", r.Method, r.URL.Path, name, err)
				writeError(w, http.StatusBadGateway, "upstream_error", fmt.Sprintf("otelitl-proxy: the %s upstream failed: %v", name, err))
			},
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		name := route(r.URL.Path)
		if name == "" {
			writeError(w, http.StatusNotFound, "not_found", "otelitl-proxy: no API at "+r.URL.Path+": it forwards /v1/... (OpenAI), /v1/messages (Anthropic), /v1beta/... (Gemini) and /api/... (Ollama)")
			return
		}
		p, ok := proxies[name]
		if !ok {
			for _, pr := range protocols {
				if pr.name == name {
					writeError(w, http.StatusBadGateway, "proxy_not_configured", fmt.Sprintf("otelitl-proxy: no %s upstream is configured: start the proxy with -%s (or %s) set to the API's base URL, such as %s", pr.title, pr.name, pr.env, pr.example))
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
		p.ServeHTTP(w, r.WithContext(ctx))
	})
	return mux
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
