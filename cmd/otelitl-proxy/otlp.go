package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdkresource "go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// tracing returns the TracerProvider of otelitl-proxy's CLIENT generation spans: an OTLP exporter
// configured by the standard OTEL_EXPORTER_OTLP_* variables when an endpoint variable is set, and
// a no-op provider otherwise. shutdown flushes the spans.
func tracing(ctx context.Context, service string) (tp trace.TracerProvider, shutdown func(context.Context) error, desc string, err error) {
	endpoint := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if endpoint == "" {
		endpoint = os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if endpoint == "" {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, "", nil
	}
	proto := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto == "" {
		proto = "http/protobuf"
	}
	var exp sdktrace.SpanExporter
	switch strings.TrimSpace(proto) {
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	case "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	default:
		return nil, nil, "", fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: use grpc or http/protobuf", proto)
	}
	if err != nil {
		return nil, nil, "", fmt.Errorf("OTLP exporter: %w", err)
	}
	res := sdkresource.Default() // OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME included
	if os.Getenv("OTEL_SERVICE_NAME") == "" {
		res, _ = sdkresource.Merge(res, sdkresource.NewSchemaless(serviceName(service)))
	}
	p := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return p, p.Shutdown, fmt.Sprintf("%s (%s)", endpoint, proto), nil
}

func serviceName(s string) attribute.KeyValue { return attribute.String("service.name", s) }
