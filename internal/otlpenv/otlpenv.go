// Package otlpenv builds the TracerProvider of this repository's programs that export spans of
// their own (otelitl-proxy, fakellm) from the standard OTEL_EXPORTER_OTLP_* variables, as every
// OpenTelemetry SDK reads them, so that the environment that configures an application's SDK
// configures these programs too.
package otlpenv

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

// Tracing returns a TracerProvider that exports over OTLP when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// or OTEL_EXPORTER_OTLP_ENDPOINT is set, and a no-op provider otherwise: a program nobody asked to
// export spans does not try to reach a collector that is not there.
//
// The protocol is OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else
// http/protobuf (the specification's default); grpc and http/protobuf are supported. The exporter
// reads the rest of the variables itself (headers, TLS, timeout, compression). service is the
// service.name unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names another.
// Tracing also installs the W3C trace-context and baggage propagators. shutdown flushes the spans
// still batched; desc says where they go ("" when nowhere). An export that fails is reported to
// logf, with where the spans were going, instead of to the OpenTelemetry global logger, which
// knows neither the program's log prefix nor the endpoint.
func Tracing(ctx context.Context, service string, logf func(format string, args ...any)) (tp trace.TracerProvider, shutdown func(context.Context) error, desc string, err error) {
	endpoint := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if endpoint == "" {
		endpoint = os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if endpoint == "" {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, "", nil
	}
	protoVar := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	proto := os.Getenv(protoVar)
	if proto == "" {
		protoVar = "OTEL_EXPORTER_OTLP_PROTOCOL"
		proto = os.Getenv(protoVar)
	}
	if proto == "" {
		proto = "http/protobuf"
	}
	// service is the default: OTEL_RESOURCE_ATTRIBUTES' service.name overrides it, and
	// OTEL_SERVICE_NAME overrides both (later detectors win). Not resource.Default(): it reads the
	// environment once per process.
	res, err := sdkresource.New(ctx, sdkresource.WithAttributes(attribute.String("service.name", service)),
		sdkresource.WithTelemetrySDK(), sdkresource.WithFromEnv())
	if err != nil {
		return nil, nil, "", fmt.Errorf("%w: write OTEL_RESOURCE_ATTRIBUTES as key1=value1,key2=value2, with values percent-encoded", err)
	}
	var exp sdktrace.SpanExporter
	switch strings.TrimSpace(proto) {
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	case "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	default:
		return nil, nil, "", fmt.Errorf("%s=%q: use grpc or http/protobuf (http/json is not supported)", protoVar, proto)
	}
	if err != nil {
		return nil, nil, "", fmt.Errorf("OTLP exporter to %s: %w", endpoint, err)
	}
	desc = fmt.Sprintf("%s (%s)", endpoint, strings.TrimSpace(proto))
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { logf("exporting spans to %s: %v", desc, err) }))
	p := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return p, p.Shutdown, desc, nil
}
