// Package demo is what the SDK examples share: a fakellm server in the process when no real
// endpoint is configured, and otelitl exporting over OTLP to an embedded collector (or an external
// one), whose itl processor annotates the span the example then prints.
package demo

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/examples/fakellm/engine"
	"github.com/otelitl/itl/examples/fakellm/server"
	"github.com/otelitl/itl/examples/internal/embed"
	"github.com/otelitl/itl/otelitl"
)

// Endpoint is the -endpoint flag every SDK example takes.
var Endpoint = flag.String("endpoint", "", "send spans over OTLP/gRPC to this collector (host:port) instead of an embedded one")

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

// BaseURL returns the value of env when set (a real or external endpoint), or starts fakellm and
// returns its URL with path appended.
func BaseURL(env, path string) (string, func(), error) {
	if u := os.Getenv(env); u != "" {
		fmt.Printf("using %s=%s\n", env, u)
		return u, func() {}, nil
	}
	cfg := engine.DefaultConfig()
	cfg.SpecTokens = 2
	u, stop, err := Fakellm(cfg, "fake-gpt", "fake-claude")
	if err != nil {
		return "", nil, err
	}
	fmt.Printf("no %s set: started fakellm at %s\n", env, u)
	return u + path, stop, nil
}

// Telemetry is otelitl exporting to a collector.
type Telemetry struct {
	In  *otelitl.Instrumentation
	tp  *sdktrace.TracerProvider
	col *embed.Collector
}

// Start sets up the telemetry of an example called service.
func Start(service string) (*Telemetry, error) {
	t := &Telemetry{}
	endpoint := *Endpoint
	if endpoint == "" {
		col, err := embed.Start(embed.Options{KeepSpans: true})
		if err != nil {
			return nil, err
		}
		t.col, endpoint = col, col.Endpoint
	}
	exp, err := otlptracegrpc.New(context.Background(), otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure())
	if err != nil {
		return nil, err
	}
	t.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(service))))
	t.In = otelitl.New(otelitl.WithTracerProvider(t.tp))
	return t, nil
}

// Finish exports the spans, and with the embedded collector prints the figures the itl processor
// derived for each.
func (t *Telemetry) Finish() error {
	if err := t.tp.Shutdown(context.Background()); err != nil {
		return fmt.Errorf("exporting spans: %w", err)
	}
	if t.col == nil {
		fmt.Printf("spans sent to %s\n", *Endpoint)
		return nil
	}
	t.col.Stop()
	fmt.Println("\nthe generation span, as the itl processor annotated it:")
	for _, s := range t.col.Spans() {
		fmt.Print(embed.Describe(s))
	}
	return nil
}
