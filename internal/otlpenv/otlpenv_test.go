package otlpenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/trace/noop"
)

// unset clears every variable Tracing reads, for the test.
func unset(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"} {
		t.Setenv(k, "")
	}
}

func TestNoEndpointNoExport(t *testing.T) {
	unset(t)
	tp, shutdown, desc, err := Tracing(context.Background(), "svc", ignore)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tp.(noop.TracerProvider); !ok || desc != "" {
		t.Fatalf("got %T, %q; want a no-op provider and no destination", tp, desc)
	}
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// An unsupported protocol is named with the variable it came from.
func TestUnsupportedProtocol(t *testing.T) {
	for _, c := range []struct{ variable, value string }{
		{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"},
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "thrift"},
	} {
		unset(t)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
		t.Setenv(c.variable, c.value)
		_, _, _, err := Tracing(context.Background(), "svc", ignore)
		if err == nil || !strings.Contains(err.Error(), c.variable+`="`+c.value+`"`) || !strings.Contains(err.Error(), "use grpc or http/protobuf") {
			t.Errorf("%s=%s: got %v, want an error naming the variable, the value and the fix", c.variable, c.value, err)
		}
	}
}

// A malformed OTEL_RESOURCE_ATTRIBUTES fails at start, saying how to write it.
func TestMalformedResourceAttributes(t *testing.T) {
	unset(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "team")
	_, _, _, err := Tracing(context.Background(), "svc", ignore)
	if err == nil || !strings.Contains(err.Error(), "key1=value1,key2=value2") {
		t.Fatalf("got %v, want an error saying how to write OTEL_RESOURCE_ATTRIBUTES", err)
	}
}

// With an endpoint and no protocol, spans go over OTLP/HTTP (the specification's default), with
// the service name given unless the environment names another (OTEL_SERVICE_NAME first), and
// arrive by shutdown.
func TestExportsOverHTTP(t *testing.T) {
	for _, c := range []struct{ envName, envAttrs, want string }{
		{"", "", "svc"},
		{"from-env", "", "from-env"},
		{"", "service.name=from-attrs,team=x", "from-attrs"},
		{"from-env", "service.name=from-attrs", "from-env"},
	} {
		unset(t)
		var mu sync.Mutex
		var got []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			req := ptraceotlp.NewExportRequest()
			if r.URL.Path != "/v1/traces" || req.UnmarshalProto(body) != nil {
				http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
				return
			}
			rss := req.Traces().ResourceSpans()
			mu.Lock()
			for i := range rss.Len() {
				name, _ := rss.At(i).Resource().Attributes().Get("service.name")
				for j := range rss.At(i).ScopeSpans().Len() {
					for k := range rss.At(i).ScopeSpans().At(j).Spans().Len() {
						got = append(got, name.Str()+"/"+rss.At(i).ScopeSpans().At(j).Spans().At(k).Name())
					}
				}
			}
			mu.Unlock()
			w.Header().Set("Content-Type", "application/x-protobuf")
		}))
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
		t.Setenv("OTEL_SERVICE_NAME", c.envName)
		t.Setenv("OTEL_RESOURCE_ATTRIBUTES", c.envAttrs)
		tp, shutdown, desc, err := Tracing(context.Background(), "svc", ignore)
		if err != nil {
			t.Fatal(err)
		}
		if desc != srv.URL+" (http/protobuf)" {
			t.Errorf("desc %q", desc)
		}
		_, span := tp.Tracer("test").Start(context.Background(), "generation")
		span.End()
		if err := shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		srv.Close()
		if len(got) != 1 || got[0] != c.want+"/generation" {
			t.Errorf("OTEL_SERVICE_NAME=%q OTEL_RESOURCE_ATTRIBUTES=%q: the collector received %v, want [%s/generation]", c.envName, c.envAttrs, got, c.want)
		}
	}
}

// An export the endpoint refuses is reported to the program's log, naming the endpoint.
func TestExportErrorLogged(t *testing.T) {
	unset(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusBadRequest) // not retryable: reported at once
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	var mu sync.Mutex
	var logged []string
	logf := func(format string, args ...any) {
		mu.Lock()
		logged = append(logged, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	tp, shutdown, _, err := Tracing(context.Background(), "svc", logf)
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer("test").Start(context.Background(), "generation")
	span.End()
	_ = shutdown(context.Background())
	mu.Lock()
	defer mu.Unlock()
	if len(logged) == 0 || !strings.HasPrefix(logged[0], "exporting spans to "+srv.URL+" (http/protobuf): ") {
		t.Fatalf("logged %q, want the failed export, naming the endpoint", logged)
	}
}

// ignore is the log of the tests that do not read it: Tracing installs it as the global error
// handler, which outlives the test.
func ignore(string, ...any) {}
