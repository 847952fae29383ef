// Package demo is what the SDK examples share: a fakellm server in the process when no server is
// configured, otelitl exporting over OTLP to an embedded collector (or an external one) whose itl
// processor annotates the spans the example then prints, and explanations of the usual mistakes
// of pointing an example at a server.
package demo

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/examples/fakellm/engine"
	"github.com/otelitl/itl/examples/fakellm/server"
	"github.com/otelitl/itl/examples/internal/embed"
	"github.com/otelitl/itl/examples/internal/export"
	"github.com/otelitl/itl/examples/internal/view"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
)

// endpoint is the -endpoint flag every SDK example and the load test take.
var endpoint = flag.String("endpoint", "", "send spans over OTLP/gRPC to this collector (host:port) instead of an embedded one")

// FakellmModels are the models the fakellm of an example serves, as a standalone fakellm does by
// default.
var FakellmModels = server.DefaultModels

// Fakellm starts a fakellm server with cost model cfg for models on a free loopback port, and
// returns its base URL (without a path) and a function that stops it.
func Fakellm(cfg engine.Config, models ...string) (string, func(), error) {
	eng, err := engine.New(cfg)
	if err != nil {
		return "", nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		eng.Close()
		return "", nil, err
	}
	srv := &http.Server{Handler: server.New(eng, models), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String(), func() { _ = srv.Close(); eng.Close() }, nil
}

// API is how an SDK finds its server: the variable holding the base URL it appends its paths to,
// the variable holding the API key, and the path under which fakellm serves that API.
type API struct {
	URLVar, KeyVar, Root string
}

var (
	// OpenAI is the OpenAI SDKs' (openai-go, go-openai): the base URL ends in /v1.
	OpenAI = API{URLVar: "OPENAI_BASE_URL", KeyVar: "OPENAI_API_KEY", Root: "/v1"}
	// Anthropic is anthropic-sdk-go's: the base URL is the server's root, without /v1.
	Anthropic = API{URLVar: "ANTHROPIC_BASE_URL", KeyVar: "ANTHROPIC_API_KEY", Root: ""}
)

// BaseURL returns the base URL in a.URLVar when it is set (a standalone fakellm or a real
// endpoint), or starts fakellm in the process and returns its. It says which on w.
func (a API) BaseURL(w io.Writer) (string, func(), error) {
	if u := os.Getenv(a.URLVar); u != "" {
		if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			// The SDKs' own message is a URL parser's, which names neither the variable nor the fix.
			return "", nil, fmt.Errorf("%s=%s: give the base URL with its scheme and host, such as http://127.0.0.1:8000%s for a fakellm on port 8000", a.URLVar, u, a.Root)
		}
		fmt.Fprintf(w, "%s=%s: asking that server (unset it to run fakellm inside this example)\n", a.URLVar, u)
		return u, func() {}, nil
	}
	cfg := engine.DefaultConfig()
	cfg.SpecTokens = 2
	u, stop, err := Fakellm(cfg, FakellmModels...)
	if err != nil {
		return "", nil, fmt.Errorf("starting fakellm: %w", err)
	}
	fmt.Fprintf(w, "no %s set: asking a fakellm started inside this example at %s%s\n", a.URLVar, u, a.Root)
	return u + a.Root, stop, nil
}

// Key is the API key in a.KeyVar, or a placeholder, which fakellm accepts.
func (a API) Key() string {
	if k := os.Getenv(a.KeyVar); k != "" {
		return k
	}
	return "fakellm"
}

// Explain returns err with what to do about it, when it is one of the usual mistakes of pointing
// an example at a server: nothing listening, a base URL with the wrong root, a model the server
// does not serve, a key it refuses. status and message are the HTTP status and the server's own
// message, when err is an API error (the SDK's summary can leave the message out).
func (a API) Explain(err error, base, model string, status int, message string) error {
	if err == nil {
		return nil
	}
	if message != "" && !strings.Contains(err.Error(), message) {
		err = fmt.Errorf("%w: %s", err, message)
	}
	var hint string
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		hint = fmt.Sprintf("nothing listens at %s: start a fakellm there (go run ./examples/fakellm -addr %s), or unset %s to run one inside this example", base, hostPort(base), a.URLVar)
	case status == http.StatusNotFound && model != "" && strings.Contains(message, model):
		hint = fmt.Sprintf("the server does not serve the model %q: name one it serves with -model (fakellm serves %s by default)", model, strings.Join(FakellmModels, ", "))
	case status == http.StatusNotFound && a.Root != "":
		hint = fmt.Sprintf("the server has no such path: %s is the API root, which ends in %s (%s for this server)", a.URLVar, a.Root, a.rootOf(base))
	case status == http.StatusNotFound:
		hint = fmt.Sprintf("the server has no such path: %s is the server's root, without /v1 (%s for this server)", a.URLVar, a.rootOf(base))
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		hint = fmt.Sprintf("the server refused the API key: set %s", a.KeyVar)
	default:
		return err
	}
	return hinted{err, hint}
}

// rootOf is the base URL a.URLVar should hold for the server at base: its scheme and host, and the
// API's root.
func (a API) rootOf(base string) string {
	if u, err := url.Parse(base); err == nil && u.Scheme != "" && u.Host != "" {
		return u.Scheme + "://" + u.Host + a.Root
	}
	return "http://127.0.0.1:8000" + a.Root
}

// hostPort is the host and port of base, for fakellm's -addr: 127.0.0.1:8000 when base has none.
func hostPort(base string) string {
	if u, err := url.Parse(base); err == nil && u.Host != "" {
		if u.Port() == "" && u.Scheme == "https" {
			return net.JoinHostPort(u.Hostname(), "443")
		} else if u.Port() == "" {
			return net.JoinHostPort(u.Hostname(), "80")
		}
		return u.Host
	}
	return "127.0.0.1:8000"
}

// hinted is an error with a hint on the line below.
type hinted struct {
	err  error
	hint string
}

func (h hinted) Error() string { return strings.TrimSpace(h.err.Error()) + "\n  hint: " + h.hint }
func (h hinted) Unwrap() error { return h.err }

// Telemetry is otelitl exporting to a collector.
type Telemetry struct {
	In       *otelitl.Instrumentation
	tp       *sdktrace.TracerProvider
	exp      *export.Exporter
	col      *embed.Collector
	endpoint string
	once     sync.Once
}

func otlpExporter(endpoint string) (*export.Exporter, error) {
	return export.New(context.Background(), endpoint)
}

// Start sets up the telemetry of an example called service: to the -endpoint collector, or to one
// embedded in the process. Close releases it, on every path.
func Start(service string) (*Telemetry, error) {
	return start(service, *endpoint, otlpExporter)
}

func start(service, endpoint string, exporter func(endpoint string) (*export.Exporter, error)) (*Telemetry, error) {
	t := &Telemetry{endpoint: endpoint}
	if endpoint == "" {
		col, err := embed.Start(embed.Options{KeepSpans: true})
		if err != nil {
			return nil, fmt.Errorf("starting the embedded collector: %w", err)
		}
		t.col, endpoint = col, col.Endpoint
	}
	exp, err := exporter(endpoint)
	if err != nil {
		if t.col != nil {
			t.col.Stop()
		}
		return nil, fmt.Errorf("the OTLP exporter to %s: %w", endpoint, err)
	}
	t.exp = exp
	t.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(service))))
	t.In = otelitl.New(otelitl.WithTracerProvider(t.tp))
	return t, nil
}

// Close exports what is left and stops the embedded collector. It does nothing after Finish.
func (t *Telemetry) Close() {
	t.once.Do(func() {
		_ = t.tp.Shutdown(context.Background())
		if t.col != nil {
			t.col.Stop()
		}
	})
}

// Finish exports the spans and, with the embedded collector, prints on w the figures its itl
// processor put on each generation span, in the order the generations started.
func (t *Telemetry) Finish(w io.Writer) error {
	var err error
	t.once.Do(func() {
		err = t.tp.Shutdown(context.Background())
		if t.col != nil {
			t.col.Stop()
		}
	})
	if err != nil {
		return fmt.Errorf("exporting spans: %w", err)
	}
	if err := t.exp.Err(); err != nil {
		return err
	}
	if t.col == nil {
		fmt.Fprintf(w, "\nspans sent to %s\n", t.endpoint)
		return nil
	}
	spans := t.col.Spans()
	slices.SortFunc(spans, func(a, b ptrace.Span) int { return cmp.Compare(a.StartTimestamp(), b.StartTimestamp()) })
	noun := "generation spans"
	if len(spans) == 1 {
		noun = "generation span"
	}
	fmt.Fprintf(w, "\n%d %s (in the order sent), as the itl processor annotated them:\n", len(spans), noun)
	for _, s := range spans {
		fmt.Fprint(w, describe(s))
	}
	return nil
}

// seconds are the attributes in seconds, which describe prints as durations.
var seconds = map[attribute.Key]bool{semconv.GenAIResponseTimeToFirstChunkKey: true, itlconv.TPOTKey: true,
	itlconv.GapP50Key: true, itlconv.GapP90Key: true, itlconv.GapP99Key: true, itlconv.GapMaxKey: true}

// describe renders a span's figures as the collector exports it (written by otelitl's client and
// kept by the itl processor, or written by the processor), one per line, durations in
// milliseconds (seconds above one).
func describe(span ptrace.Span) string {
	var b strings.Builder
	fmt.Fprintf(&b, "span %q (trace %s)\n", span.Name(), span.TraceID())
	for _, k := range []attribute.Key{semconv.GenAIProviderNameKey, semconv.GenAIRequestModelKey, semconv.GenAIResponseModelKey, semconv.GenAIResponseIDKey,
		semconv.GenAIResponseFinishReasonsKey, semconv.GenAIUsageInputTokensKey, semconv.GenAIUsageOutputTokensKey,
		itlconv.ChunkCountKey, semconv.GenAIResponseTimeToFirstChunkKey, itlconv.TPOTKey, itlconv.GapP50Key,
		itlconv.GapP90Key, itlconv.GapP99Key, itlconv.GapMaxKey, itlconv.StallsKey, semconv.ErrorTypeKey} {
		v, ok := span.Attributes().Get(string(k))
		if !ok {
			continue
		}
		if seconds[k] && v.Type() == pcommon.ValueTypeDouble {
			fmt.Fprintf(&b, "  %-38s %s\n", k, view.Duration(v.Double()))
			continue
		}
		fmt.Fprintf(&b, "  %-38s %s\n", k, v.AsString())
	}
	return b.String()
}
