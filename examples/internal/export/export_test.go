package export

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelitl/itl/internal/refused"
)

// TestNothingListening: spans sent where no collector listens are reported, not taken for sent.
func TestNothingListening(t *testing.T) {
	exp, endpoint := deadExporter(t)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, span := tp.Tracer("test").Start(ctx, "x")
	span.End()
	_ = tp.Shutdown(ctx)
	if err := exp.Err(); err == nil || !strings.Contains(err.Error(), "1 spans did not reach the collector at "+endpoint) {
		t.Errorf("error %v", err)
	}
}

// TestFirstFailureOnly: only the first failed export goes back to the SDK, which logs it; the
// later ones are counted for Err, which says the same once, at the end.
func TestFirstFailureOnly(t *testing.T) {
	exp, endpoint := deadExporter(t)
	defer func() { _ = exp.Shutdown(context.Background()) }()
	spans := tracetest.SpanStubs{{Name: "x"}}.Snapshots()
	for i := range 3 {
		if err := exp.ExportSpans(context.Background(), spans); (err != nil) != (i == 0) {
			t.Errorf("export %d returned %v; only the first failure goes back", i+1, err)
		}
	}
	if err := exp.Err(); err == nil || !strings.Contains(err.Error(), "3 spans did not reach the collector at "+endpoint) {
		t.Errorf("error %v", err)
	}
}

// TestEndpointRefused: an endpoint that is not host:port is refused before anything is sent, naming
// the flag and the form to give.
func TestEndpointRefused(t *testing.T) {
	for _, e := range []string{"http://127.0.0.1:4317", "127.0.0.1", "collector:4317/v1"} {
		if _, err := New(context.Background(), e); err == nil || !strings.Contains(err.Error(), "-endpoint "+e+": give the collector's OTLP/gRPC address as host:port") {
			t.Errorf("%s: %v", e, err)
		}
	}
}

// deadExporter returns an exporter to an address where nothing listens, which fails at once.
func deadExporter(t *testing.T) (*Exporter, string) {
	t.Helper()
	endpoint := refused.Addr(t)
	exp, err := New(context.Background(), endpoint, otlptracegrpc.WithTimeout(time.Second), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	return exp, endpoint
}

// TestHTTPPort: OTLP/gRPC sent to an OTLP/HTTP port is told so, where the example asked whether
// anything listened there (something did).
func TestHTTPPort(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler()) // an HTTP/1 server, as an OTLP/HTTP receiver is
	defer srv.Close()
	endpoint := strings.TrimPrefix(srv.URL, "http://")
	exp, err := New(context.Background(), endpoint, otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = exp.Shutdown(context.Background()) }()
	_ = exp.ExportSpans(context.Background(), tracetest.SpanStubs{{Name: "x"}}.Snapshots())
	if err := exp.Err(); err == nil || !strings.Contains(err.Error(), "does not speak HTTP/2, as an OTLP/HTTP receiver does not: give -endpoint the collector's OTLP/gRPC port") || strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP") {
		t.Errorf("error %v, want the hint that the port is OTLP/HTTP's", err)
	}
}
