// Package export is the OTLP span exporter the examples share: OTLP/gRPC without TLS to a
// collector, which remembers whether an export failed, so that an example can say its spans did
// not arrive instead of that it sent them.
package export

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Exporter exports spans over OTLP/gRPC and keeps the first error.
type Exporter struct {
	sdktrace.SpanExporter
	endpoint string

	mu     sync.Mutex
	failed int
	first  error
}

// New exports to the collector at endpoint (host:port); opts are added to the OTLP exporter's. An
// export gives up after 5 s of retries, not the exporter's minute: an example pointed at a
// collector that is not there says so when it ends, instead of waiting.
func New(ctx context.Context, endpoint string, opts ...otlptracegrpc.Option) (*Exporter, error) {
	if _, port, err := net.SplitHostPort(endpoint); err != nil || port == "" || strings.Contains(endpoint, "/") {
		return nil, fmt.Errorf("-endpoint %s: give the collector's OTLP/gRPC address as host:port, such as 127.0.0.1:4317, without a scheme or a path", endpoint)
	}
	exp, err := otlptracegrpc.New(ctx, append([]otlptracegrpc.Option{otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure(),
		otlptracegrpc.WithTimeout(5 * time.Second),
		otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: true, InitialInterval: 200 * time.Millisecond, MaxInterval: time.Second, MaxElapsedTime: 5 * time.Second})},
		opts...)...)
	if err != nil {
		return nil, err
	}
	return &Exporter{SpanExporter: exp, endpoint: endpoint}, nil
}

// ExportSpans exports spans, and counts a failure. Only the first failure goes back to the SDK,
// which logs it as it happens; Err sums up the rest when the example ends, instead of a log line
// for each batch saying the same.
func (e *Exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failed += len(spans)
	if e.first == nil {
		e.first = err
		return err
	}
	return nil
}

// Err says how many spans did not reach the collector, and why the first did not; nil when every
// export succeeded.
func (e *Exporter) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.first == nil {
		return nil
	}
	return fmt.Errorf("%d spans did not reach the collector at %s (%s): %w", e.failed, e.endpoint, hint(e.first), e.first)
}

// hint says what to change for an export's error. The examples send OTLP/gRPC in plain text to
// -endpoint, whatever the OTEL_EXPORTER_OTLP_* variables say, so the fix is always the endpoint
// or the collector's receiver.
func hint(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "connection refused"):
		return "nothing listens there: start a collector, or leave -endpoint out to use the embedded one"
	case strings.Contains(msg, "error reading server preface: EOF"), strings.Contains(msg, "error reading server preface: connection reset"):
		return "the endpoint closed the connection at once, as a receiver that expects TLS does: the examples send plain-text OTLP/gRPC, so give them a receiver without a tls section"
	case strings.Contains(msg, "server preface"):
		return "the endpoint does not speak HTTP/2, as an OTLP/HTTP receiver does not: give -endpoint the collector's OTLP/gRPC port, 4317 by default"
	}
	return "is an OTLP/gRPC receiver listening there, without TLS?"
}
