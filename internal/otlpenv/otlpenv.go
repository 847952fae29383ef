// Package otlpenv builds the TracerProvider of this repository's programs that export spans of
// their own (otelitl-proxy, fakellm) from the standard OTEL_EXPORTER_OTLP_* variables, as every
// OpenTelemetry SDK reads them, so that the environment that configures an application's SDK
// configures these programs too.
package otlpenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"strconv"
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

// The variables Tracing reads itself; the exporter reads the rest of OTEL_EXPORTER_OTLP_*.
const (
	tracesEndpoint  = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	genericEndpoint = "OTEL_EXPORTER_OTLP_ENDPOINT"
	tracesProtocol  = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	genericProtocol = "OTEL_EXPORTER_OTLP_PROTOCOL"
	tracesInsecure  = "OTEL_EXPORTER_OTLP_TRACES_INSECURE"
	genericInsecure = "OTEL_EXPORTER_OTLP_INSECURE"
	sdkDisabled     = "OTEL_SDK_DISABLED"
	tracesExporter  = "OTEL_TRACES_EXPORTER"
)

// Vars are the variables that decide whether and where Tracing exports, and the service's name:
// the ones a test clears to start from nothing.
var Vars = []string{sdkDisabled, tracesExporter, tracesEndpoint, genericEndpoint, tracesProtocol, genericProtocol, tracesInsecure, genericInsecure, "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"}

// Tracing returns a TracerProvider that exports over OTLP when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// or OTEL_EXPORTER_OTLP_ENDPOINT is set, and a no-op provider otherwise: a program nobody asked to
// export spans does not try to reach a collector that is not there. OTEL_SDK_DISABLED=true and
// OTEL_TRACES_EXPORTER=none turn tracing off whatever endpoint is set (see [Off]): a no-op
// provider, no exporter, and the other variables are not read.
//
// The protocol is OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else
// http/protobuf (the specification's default); grpc and http/protobuf are supported. An endpoint
// the exporter cannot use as written (without a scheme, with another scheme than http or https, or
// without a host) is an error naming the variable it came from, see checkEndpoint. The exporter
// reads the rest of the variables itself (headers, TLS, timeout, compression). service is the
// service.name unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names another.
// Tracing also installs the W3C trace-context and baggage propagators. shutdown flushes the spans
// still batched; desc says where they go, the URL the exporter sends them to and the protocol (""
// when nowhere). An export that fails is reported to logf, with where the spans were going,
// instead of to the OpenTelemetry global logger, which knows neither the program's log prefix nor
// the endpoint.
func Tracing(ctx context.Context, service string, logf func(format string, args ...any)) (tp trace.TracerProvider, shutdown func(context.Context) error, desc string, err error) {
	if why, err := Off(); err != nil {
		return nil, nil, "", err
	} else if why != "" {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, "", nil
	}
	// The exporters trim the variables, and take the traces one when both are set.
	endpointVar := tracesEndpoint
	endpoint := strings.TrimSpace(os.Getenv(endpointVar))
	if endpoint == "" {
		endpointVar = genericEndpoint
		endpoint = strings.TrimSpace(os.Getenv(endpointVar))
	}
	if endpoint == "" {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, "", nil
	}
	protoVar := tracesProtocol
	proto := strings.TrimSpace(os.Getenv(protoVar))
	if proto == "" {
		protoVar = genericProtocol
		proto = strings.TrimSpace(os.Getenv(protoVar))
	}
	if proto == "" {
		proto = "http/protobuf"
	}
	if proto != "grpc" && proto != "http/protobuf" {
		return nil, nil, "", fmt.Errorf("%s=%q: use grpc or http/protobuf (http/json is not supported)", protoVar, proto)
	}
	if err := checkEndpoint(endpointVar, endpoint, proto); err != nil {
		return nil, nil, "", err
	}
	if err := checkBase(endpointVar, endpoint, proto); err != nil {
		return nil, nil, "", err
	}
	insecure, err := insecureSetting()
	if err != nil {
		return nil, nil, "", err
	}
	if w := pathless(endpointVar, endpoint, proto); w != "" {
		logf("%s", w)
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
	if proto == "grpc" {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, nil, "", fmt.Errorf("OTLP exporter to %s: %w", endpoint, err)
	}
	to := exportURL(endpointVar, endpoint, proto, insecure)
	desc = fmt.Sprintf("%s (%s)", to, proto)
	plain := strings.HasPrefix(to, "http://")
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { logf("exporting spans to %s: %v%s", desc, err, mismatch(err, proto, plain)) }))
	opts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp), sdktrace.WithResource(res)}
	if strings.TrimSpace(os.Getenv("OTEL_TRACES_SAMPLER")) == "" {
		// A recorder records every generation: the SDK's default follows the caller's sampling
		// decision, and an application sampling 10% of its traces would get a tenth of its
		// generations recorded, silently. OTEL_TRACES_SAMPLER, when set, decides instead.
		opts = append(opts, sdktrace.WithSampler(sdktrace.AlwaysSample()))
	}
	p := sdktrace.NewTracerProvider(opts...)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return p, p.Shutdown, desc, nil
}

// Off says whether the environment turns tracing off, as the OpenTelemetry specification has it:
// OTEL_SDK_DISABLED=true disables the SDK, and OTEL_TRACES_EXPORTER=none sets no exporter for
// traces (values in any case, around spaces). why is the setting that does, as VARIABLE="value",
// for the program to say so at start; "" when neither does. The Go SDK reads neither variable
// itself: Tracing asks Off first.
//
// An OTEL_TRACES_EXPORTER other than otlp (the default) or none, such as zipkin, console or a list,
// is an error naming the variable, its value and what is supported: no exporter of those is built
// here, and the spans would go over OTLP or nowhere while the user expected them elsewhere. An
// OTEL_SDK_DISABLED other than true or false is an error too, as an INSECURE variable's is (see
// insecureSetting): the specification reads it as false, and OTEL_SDK_DISABLED=1 would export the
// spans it was meant to stop.
func Off() (why string, err error) {
	disabled := strings.TrimSpace(os.Getenv(sdkDisabled))
	switch {
	case strings.EqualFold(disabled, "true"):
		return fmt.Sprintf("%s=%q", sdkDisabled, disabled), nil
	case disabled != "" && !strings.EqualFold(disabled, "false"):
		return "", fmt.Errorf("%s=%q: write true (no spans) or false: the specification reads any other value as false", sdkDisabled, disabled)
	}
	exporter := strings.TrimSpace(os.Getenv(tracesExporter))
	switch {
	case strings.EqualFold(exporter, "none"):
		return fmt.Sprintf("%s=%q", tracesExporter, exporter), nil
	case exporter != "" && !strings.EqualFold(exporter, "otlp"):
		return "", fmt.Errorf("%s=%q: the exporters supported are otlp (the default) and none, one at a time: write otlp, or none for no spans", tracesExporter, exporter)
	}
	return "", nil
}

// mismatch is a hint for an export error that comes of speaking to a receiver in a way it does not
// speak: one OTLP protocol to the other's port, or with TLS to a port without it, or the other way
// round; or of speaking to a port where nothing listens. The errors name neither the ports nor the
// variables, and some do not name TLS; the defaults, 4317 for gRPC and 4318 for HTTP, and TLS for
// an endpoint without a scheme over gRPC, make the mistakes easy to make.
//
// A gRPC server sends its SETTINGS frame as soon as it accepts, so OTLP/HTTP meets it in one of two
// ways, depending on which goes first over the wire: after the request is written, as a "malformed
// HTTP response"; before it, as bytes on a connection that expects none, which net/http closes with
// "readLoopPeekFailLocked" (and logs as an "Unsolicited response"). An HTTP/1 server never speaks
// first but with a 408, which net/http reports otherwise, so both mean the same mistake.
//
// gRPC in plain text to an HTTP/1 server reads its answer to the HTTP/2 preface as a frame too
// large; to a TLS server, which drops a connection whose first bytes are not a TLS handshake, it
// reads the end of the connection where the server's preface should be: EOF, or a reset when
// bytes of the client's reached the server after it read the first and before it closed (gRPC
// writes the preface and its SETTINGS frame apart), which closing with them unread turns into. An
// HTTP/1 server answers the preface before it closes, so a reset with nothing read is the same
// mistake.
//
// A TLS server that reads plain text answers "Client sent an HTTP request to an HTTPS server" and
// closes; when the client was still sending a body (a batch of spans), closing with it unread
// resets the connection, and the client meets the reset (or, still writing, a broken pipe, or its
// own connection already closed) instead of the answer. plain says the export went in plain text,
// where a reset most likely means that.
func mismatch(err error, proto string, plain bool) string {
	msg := err.Error()
	has := func(s string) bool { return strings.Contains(msg, s) }
	switch {
	case proto == "http/protobuf" && (has("malformed HTTP response") || has("readLoopPeekFailLocked")):
		return fmt.Sprintf(" (the endpoint speaks HTTP/2, as an OTLP/gRPC receiver does: its default port is 4317, OTLP/HTTP's 4318; use OTLP/HTTP's port, or set %s=grpc)", genericProtocol)
	case proto == "http/protobuf" && has("server gave HTTP response to HTTPS client"),
		proto == "grpc" && has("first record does not look like a TLS handshake"):
		return fmt.Sprintf(" (the endpoint does not speak TLS, as a receiver without a tls section does not: write the endpoint with http://, or set %s=true)", genericInsecure)
	case proto == "http/protobuf" && plain && !has("server preface") && (has("connection reset by peer") || has("broken pipe") || has("use of closed network connection")):
		return fmt.Sprintf(" (the endpoint reset the connection, as a receiver that expects TLS does when sent plain text: write the endpoint with https://, and leave %s unset; if it expects none, it closed the connection for another reason)", genericInsecure)
	case proto == "http/protobuf" && has("Client sent an HTTP request to an HTTPS server"):
		return fmt.Sprintf(" (the endpoint speaks TLS: write the endpoint with https://, and leave %s unset)", genericInsecure)
	case proto == "grpc" && (has("error reading server preface: EOF") || has("error reading server preface: connection reset by peer")):
		return fmt.Sprintf(" (the endpoint closed the connection at once, as a receiver that expects TLS does when spoken to in plain text: write the endpoint with https://, and leave %s unset; if it expects none, it is no OTLP/gRPC receiver)", genericInsecure)
	case has("connection refused"):
		return " (nothing listens at the endpoint: start the receiver, or point the endpoint at the port it listens on; OTLP/HTTP's default port is 4318, OTLP/gRPC's 4317)"
	case proto == "http/protobuf" && has(" 404 Not Found"):
		return fmt.Sprintf(" (nothing takes traces at that URL: an OTLP/HTTP receiver takes them at /v1/traces. %s is used as it is written, so it needs that path; %s is a base the exporter appends /v1/traces to)", tracesEndpoint, genericEndpoint)
	case proto == "grpc" && has("server preface"):
		return fmt.Sprintf(" (the endpoint does not speak HTTP/2, as an OTLP/HTTP receiver does not: its default port is 4318, OTLP/gRPC's 4317; use OTLP/gRPC's port, or set %s=http/protobuf)", genericProtocol)
	}
	return ""
}

// checkEndpoint refuses an endpoint the exporter would not use as written. The exporter parses it
// with url.Parse and, when that fails, reports it to the OpenTelemetry global logger only and
// exports to its default (https://localhost:4318, or localhost:4317 over gRPC) instead: a value
// without a scheme, such as 127.0.0.1:4318, fails so, and localhost:4318 parses as the scheme
// "localhost" without a host. The program would have announced an endpoint its spans never reach.
// Over HTTP the exporter needs http or https and a host; over gRPC it also dials unix sockets
// (unix:///path), which it hands to gRPC as they are.
func checkEndpoint(variable, value, proto string) error {
	u, err := url.Parse(value)
	grpcUnix := err == nil && u.Scheme == "unix" && proto == "grpc"
	switch {
	case err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "":
		return nil
	case grpcUnix && (u.Path != "" || u.Opaque != ""):
		return nil
	case proto == "grpc" && err == nil && !strings.Contains(value, "://") && u.Host == "" && isPort(u.Opaque):
		// host:port with a host name (collector:4317), which url.Parse reads as a scheme and an
		// opaque part: the gRPC exporter hands it to gRPC as its target, as it is (over TLS unless
		// OTEL_EXPORTER_OTLP_INSECURE is true). An address (127.0.0.1:4317) does not parse, and the
		// exporter drops it.
		return nil
	case !strings.Contains(value, "://") && (err != nil || (u.Scheme != "http" && u.Scheme != "https" && !grpcUnix)):
		hostPort := strings.TrimPrefix(value, "//")
		// The traces variable is the whole URL over HTTP: the suggestion carries the path an
		// OTLP/HTTP receiver takes traces at, which the exporter appends only to the generic one.
		signalPath := ""
		if variable == tracesEndpoint && !strings.Contains(hostPort, "/") {
			signalPath = "/v1/traces"
		}
		if host, port, err := net.SplitHostPort(hostPort); err == nil && port == "4317" && proto != "grpc" {
			// OTLP/gRPC's port, given as gRPC takes it (host:port), to the HTTP exporter.
			return fmt.Errorf("%s=%q has no scheme, and 4317 is OTLP/gRPC's port: over gRPC, set %s=grpc and keep %s; over OTLP/HTTP (the default protocol), write http://%s%s",
				variable, value, genericProtocol, value, net.JoinHostPort(host, "4318"), signalPath)
		}
		if proto == "grpc" {
			signalPath = ""
		}
		return fmt.Errorf("%s=%q has no scheme, which the exporter needs: write it as a URL with its scheme: http://%s%s (https://%s%s for TLS)", variable, value, hostPort, signalPath, hostPort, signalPath)
	}
	port := "4318"
	schemes := "http:// or https://"
	if proto == "grpc" {
		port = "4317"
		schemes = "http://, https:// or unix://"
	}
	switch {
	case err != nil:
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err // without the value again
		}
		return fmt.Errorf("%s=%q: %w: write it as a URL, such as http://127.0.0.1:%s", variable, value, err, port)
	case grpcUnix:
		return fmt.Errorf("%s=%q has no socket path: write it as unix:///path/to/socket", variable, value)
	case u.Scheme != "http" && u.Scheme != "https":
		example := "http://127.0.0.1:" + port
		if u.Host != "" {
			example = "http://" + u.Host + u.Path
		}
		return fmt.Errorf("%s=%q: the exporter takes %s over %s: write it as %s (https:// for TLS)", variable, value, schemes, proto, example)
	}
	return fmt.Errorf("%s=%q has no host: write it as %s://HOST:PORT, such as %s://127.0.0.1:%s", variable, value, u.Scheme, u.Scheme, port)
}

// checkBase refuses a base URL in OTEL_EXPORTER_OTLP_ENDPOINT that already ends in the path the
// HTTP exporter appends to it (/v1/traces), or in its /v1: the spans would go to .../v1/v1/traces
// and be refused there. A base path of the intake's own (https://host/otlp) is left alone.
func checkBase(variable, endpoint, proto string) error {
	if variable != genericEndpoint || proto != "http/protobuf" {
		return nil
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil // checkEndpoint has judged it
	}
	p := strings.TrimSuffix(u.Path, "/")
	for _, tail := range []string{"/v1/traces", "/v1"} {
		if strings.HasSuffix(p, tail) {
			base := *u
			base.Path = strings.TrimSuffix(p, tail)
			return fmt.Errorf("%s=%q ends in %s, and the exporter appends /v1/traces to it: write the base, %s, or give the whole URL in OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
				variable, u.Redacted(), tail, base.Redacted())
		}
	}
	return nil
}

// pathless warns of a traces URL without a path over HTTP. The exporter sends to
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is written, so http://collector:4318 sends to /, where
// an OTLP/HTTP receiver answers 404 Not Found: it takes traces at /v1/traces. The generic variable
// is a base the exporter appends /v1/traces to, which is where the two part. It is a warning, not
// an error, because an intake may take traces at / of its own.
func pathless(variable, endpoint, proto string) string {
	if variable != tracesEndpoint || proto != "http/protobuf" {
		return ""
	}
	u, err := url.Parse(endpoint)
	if err != nil || strings.Trim(u.Path, "/") != "" {
		return ""
	}
	whole := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/v1/traces"}
	return fmt.Sprintf("%s=%q has no path, and the exporter sends spans to it as written, to /, where an OTLP/HTTP receiver answers 404 Not Found: write the whole URL, %s, or give the base in %s, which the exporter appends /v1/traces to",
		variable, u.Redacted(), whole, genericEndpoint)
}

// insecureSetting reads OTEL_EXPORTER_OTLP_TRACES_INSECURE, else OTEL_EXPORTER_OTLP_INSECURE, as
// the exporters do: when set, it decides between plain text and TLS over the endpoint's scheme. It
// is nil when neither is set. The exporters read true (in any case) as true and any other value
// as false, so that INSECURE=1 or yes would turn TLS on without a word: a value other than true or
// false is refused.
func insecureSetting() (*bool, error) {
	var insecure *bool
	for _, v := range []string{genericInsecure, tracesInsecure} { // the traces one is applied last
		val := strings.TrimSpace(os.Getenv(v))
		if val == "" {
			continue
		}
		if !strings.EqualFold(val, "true") && !strings.EqualFold(val, "false") {
			return nil, fmt.Errorf("%s=%q: the exporter reads true as true and any other value as false (TLS on): write true or false", v, val)
		}
		b := strings.EqualFold(val, "true")
		insecure = &b
	}
	return insecure, nil
}

// exportURL is where the exporter sends spans, worked out from the endpoint as the exporter works
// it out, so that the program announces the URL its spans go to: over HTTP,
// OTEL_EXPORTER_OTLP_ENDPOINT is a base URL the exporter appends /v1/traces to, while
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is taken as it is (/ without a path). An endpoint given with
// the signal's path in the generic variable (…/v1/traces/v1/traces) shows here. Over gRPC the
// exporter dials the host, and a unix socket as it is. endpoint has passed checkEndpoint.
//
// The scheme shown is the one the exporter uses: the endpoint's, unless insecure (the INSECURE
// variables, which the exporters apply after it) says otherwise; a gRPC target without a scheme
// (collector:4317) goes over TLS unless insecure is true.
func exportURL(variable, endpoint, proto string, insecure *bool) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme == "unix" {
		return endpoint
	}
	if proto == "grpc" && !strings.Contains(endpoint, "://") {
		u = &url.URL{Scheme: "https", Host: endpoint}
	}
	to := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	if insecure != nil {
		to.Scheme = "https"
		if *insecure {
			to.Scheme = "http"
		}
	}
	switch {
	case proto == "grpc":
		to.Path = ""
	case variable == genericEndpoint:
		to.Path = path.Join("/", u.Path, "v1/traces")
	case to.Path == "":
		to.Path = "/"
	}
	return to.String()
}

// isPort reports whether s is a port number.
func isPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n > 0 && n < 1<<16 && strconv.Itoa(n) == s
}
