package otlpenv

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/otelitl/itl/internal/refused"
)

// unset clears every variable Tracing reads, for the test.
func unset(t *testing.T) {
	for _, k := range Vars {
		t.Setenv(k, "")
	}
}

// Without an endpoint nothing is exported; an endpoint of spaces is none, as the exporters read it.
func TestNoEndpointNoExport(t *testing.T) {
	for _, blank := range []string{"", " "} {
		unset(t)
		t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", blank)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", blank)
		tp, shutdown, desc, err := Tracing(context.Background(), "svc", ignore)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := tp.(noop.TracerProvider); !ok || desc != "" {
			t.Fatalf("endpoints %q: got %T, %q; want a no-op provider and no destination", blank, tp, desc)
		}
		if err := shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// An endpoint the exporter cannot use as written fails at start, naming the variable it was read
// from, the value and how to write it: the exporter would drop it, or take localhost:4318 for a
// scheme and no host, and export elsewhere or nowhere while the program announced this endpoint.
// When both variables are set, the traces one is what the exporter reads.
func TestUnusableEndpoint(t *testing.T) {
	for _, c := range []struct {
		traces, generic, proto string
		want                   []string // in the error
	}{
		// The generic variable is a base: its suggestion has no path. The traces one is the whole
		// URL over HTTP: its suggestion ends in /v1/traces, where the suggestion without a path
		// sent spans to /, which an OTLP/HTTP receiver answers with 404.
		{"", "127.0.0.1:9999", "", []string{`OTEL_EXPORTER_OTLP_ENDPOINT="127.0.0.1:9999"`, "write it as a URL with its scheme: http://127.0.0.1:9999 (https://127.0.0.1:9999 for TLS)"}},
		{"localhost:4318", "", "", []string{`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="localhost:4318"`, "http://localhost:4318/v1/traces (https://localhost:4318/v1/traces for TLS)"}},
		{"127.0.0.1:4318", "http://127.0.0.1:4318", "", []string{`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="127.0.0.1:4318"`, "http://127.0.0.1:4318/v1/traces"}},
		{"127.0.0.1:4318/otlp/v1/traces", "", "", []string{"write it as a URL with its scheme: http://127.0.0.1:4318/otlp/v1/traces (https"}},
		{"", "127.0.0.1:4317", "grpc", []string{`OTEL_EXPORTER_OTLP_ENDPOINT="127.0.0.1:4317"`, "http://127.0.0.1:4317"}},
		{"127.0.0.1:4317", "", "grpc", []string{`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="127.0.0.1:4317"`, "http://127.0.0.1:4317 (https://127.0.0.1:4317 for TLS)"}},
		// OTLP/gRPC's port written as gRPC takes it, to the HTTP exporter.
		{"", "localhost:4317", "", []string{`OTEL_EXPORTER_OTLP_ENDPOINT="localhost:4317" has no scheme, and 4317 is OTLP/gRPC's port`, "set OTEL_EXPORTER_OTLP_PROTOCOL=grpc and keep localhost:4317", "write http://localhost:4318"}},
		{"localhost:4317", "", "", []string{"write http://localhost:4318/v1/traces"}},
		{"", "collector:99999", "grpc", []string{`OTEL_EXPORTER_OTLP_ENDPOINT="collector:99999"`, "http://collector:99999"}},
		{"", "http://127.0.0.1:4318/v1", "", []string{`OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:4318/v1" ends in /v1`, "write the base, http://127.0.0.1:4318,"}},
		{"", "https://otlp.example/otlp/v1/traces/", "", []string{"ends in /v1/traces", "write the base, https://otlp.example/otlp,", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"}},
		{"", "ftp://collector:4318", "", []string{`OTEL_EXPORTER_OTLP_ENDPOINT="ftp://collector:4318"`, "http:// or https://", "http://collector:4318"}},
		{"", "unix:///tmp/otlp.sock", "http/protobuf", []string{`OTEL_EXPORTER_OTLP_ENDPOINT="unix:///tmp/otlp.sock"`, "http:// or https://"}},
		{"", "unix://", "grpc", []string{`OTEL_EXPORTER_OTLP_ENDPOINT="unix://"`, "unix:///path/to/socket"}},
		{"http://[::1:4318", "", "", []string{`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://[::1:4318"`, "missing ']'", "write it as a URL"}},
		{"", "http:127.0.0.1:4318", "", []string{`OTEL_EXPORTER_OTLP_ENDPOINT="http:127.0.0.1:4318"`, "no host"}},
	} {
		unset(t)
		t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", c.traces)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", c.generic)
		t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", c.proto)
		_, _, _, err := Tracing(context.Background(), "svc", ignore)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("traces %q, generic %q, protocol %q: got %v, want an error with %q", c.traces, c.generic, c.proto, err, w)
			}
		}
	}
}

// What the exporters take is accepted: the value trimmed of spaces, a unix socket over gRPC, and a
// generic endpoint they do not read because the traces one is set.
func TestUsableEndpoint(t *testing.T) {
	for _, c := range []struct{ traces, generic, proto string }{
		{"", " http://127.0.0.1:4318 ", ""},
		{"https://collector.example:4318/otlp/v1/traces", "", ""},
		{"", "http://127.0.0.1:4317", "grpc"},
		{"", "unix:///tmp/otlp.sock", "grpc"},
		{"http://127.0.0.1:4318", "127.0.0.1:4318", ""},
		{"", "collector:4317", "grpc"},              // a host name and a port: gRPC's target, as it is
		{"", "https://otlp.example/otlp", ""},       // a base path of the intake's own
		{"http://127.0.0.1:4318/v1/traces", "", ""}, // the traces variable is the whole URL
		{"", "http://127.0.0.1:4317/v1", "grpc"},    // gRPC dials the host
	} {
		unset(t)
		t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", c.traces)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", c.generic)
		t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", c.proto)
		_, shutdown, _, err := Tracing(context.Background(), "svc", ignore)
		if err != nil {
			t.Errorf("traces %q, generic %q, protocol %q: %v", c.traces, c.generic, c.proto, err)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = shutdown(ctx) // nothing was recorded: nothing to send
		cancel()
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
		if desc != srv.URL+"/v1/traces (http/protobuf)" {
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

// desc is the URL the exporter sends spans to: the generic variable is a base URL the exporter
// appends /v1/traces to, the traces one a URL it takes as it is, and it wins when both are set.
func TestDescIsWhereSpansGo(t *testing.T) {
	paths := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		paths <- r.URL.Path
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	tlsURL := strings.Replace(srv.URL, "http://", "https://", 1)
	for _, c := range []struct{ traces, generic, insecure, want string }{
		{"", srv.URL, "", "/v1/traces"},
		{"", srv.URL + "/otlp/", "", "/otlp/v1/traces"},
		{srv.URL + "/custom", "", "", "/custom"},
		{srv.URL, "", "", "/"},
		{srv.URL + "/t", srv.URL + "/g", "", "/t"},
		// INSECURE, applied after the endpoint, turns an https URL to plain HTTP: desc says http.
		{tlsURL + "/t", "", "true", "/t"},
		{"", tlsURL, "true", "/v1/traces"},
	} {
		unset(t)
		t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", c.traces)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", c.generic)
		t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", c.insecure)
		tp, shutdown, desc, err := Tracing(context.Background(), "svc", ignore)
		if err != nil {
			t.Fatal(err)
		}
		_, span := tp.Tracer("test").Start(context.Background(), "generation")
		span.End()
		if err := shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		var got string
		select {
		case got = <-paths:
		default:
			t.Fatalf("traces %q, generic %q: nothing was exported", c.traces, c.generic)
		}
		if got != c.want || desc != srv.URL+got+" (http/protobuf)" {
			t.Errorf("traces %q, generic %q: the spans went to %s, desc %q; want %s and a desc naming it", c.traces, c.generic, got, desc, c.want)
		}
	}
}

// Over gRPC the exporter dials the endpoint's host (or the unix socket), whatever its path, over
// TLS unless the endpoint's scheme is http or the INSECURE variables say otherwise; a target
// without a scheme goes over TLS unless they say it is insecure.
func TestExportURLOverGRPC(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		endpoint string
		insecure *bool
		want     string
	}{
		{"http://127.0.0.1:4317", nil, "http://127.0.0.1:4317"},
		{"https://collector:4317/otlp/", nil, "https://collector:4317"},
		{"unix:///tmp/otlp.sock", nil, "unix:///tmp/otlp.sock"},
		{"collector:4317", nil, "https://collector:4317"},
		{"collector:4317", &yes, "http://collector:4317"},
		{"https://collector:4317", &yes, "http://collector:4317"},
		{"http://collector:4317", &no, "https://collector:4317"},
		{"unix:///tmp/otlp.sock", &yes, "unix:///tmp/otlp.sock"},
	} {
		for _, variable := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
			if got := exportURL(variable, c.endpoint, "grpc", c.insecure); got != c.want {
				t.Errorf("%s=%s, insecure %v: %s, want %s", variable, c.endpoint, c.insecure, got, c.want)
			}
		}
	}
}

// The INSECURE variables take true or false: the exporter reads any other value as false, which
// turns TLS on for an INSECURE=1 meant to turn it off.
func TestInsecureValues(t *testing.T) {
	for _, c := range []struct{ generic, traces, wantErr string }{
		{"1", "", `OTEL_EXPORTER_OTLP_INSECURE="1": the exporter reads true as true and any other value as false (TLS on): write true or false`},
		{"", "yes", `OTEL_EXPORTER_OTLP_TRACES_INSECURE="yes"`},
		{" TRUE ", "", ""},
		{"false", "True", ""},
	} {
		unset(t)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
		t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", c.generic)
		t.Setenv("OTEL_EXPORTER_OTLP_TRACES_INSECURE", c.traces)
		_, shutdown, desc, err := Tracing(context.Background(), "svc", ignore)
		if c.wantErr == "" {
			if err != nil || desc != "http://127.0.0.1:4318/v1/traces (http/protobuf)" {
				t.Errorf("INSECURE %q, TRACES_INSECURE %q: %q, %v", c.generic, c.traces, desc, err)
			} else {
				_ = shutdown(context.Background())
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("INSECURE %q, TRACES_INSECURE %q: %v, want an error with %q", c.generic, c.traces, err, c.wantErr)
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
	logged := exportOne(t)
	if len(logged) == 0 || !strings.HasPrefix(logged[0], "exporting spans to "+srv.URL+"/v1/traces (http/protobuf): ") {
		t.Fatalf("logged %q, want the failed export, naming the endpoint", logged)
	}
}

// A traces URL without a path over HTTP is taken as it is written, to /, where an OTLP/HTTP
// receiver answers 404: the program warns at start with the whole URL to write. A path of the
// intake's own, the generic variable (a base) and gRPC (which dials the host) are not warned of.
func TestPathlessTracesURLWarned(t *testing.T) {
	for _, c := range []struct{ traces, generic, proto, want string }{
		{"http://127.0.0.1:4318", "", "", `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://127.0.0.1:4318" has no path`},
		{"https://collector.example/", "", "", "write the whole URL, https://collector.example/v1/traces, or give the base in OTEL_EXPORTER_OTLP_ENDPOINT"},
		{"http://127.0.0.1:4318/v1/traces", "", "", ""},
		{"http://127.0.0.1:4318/custom", "", "", ""},
		{"", "http://127.0.0.1:4318", "", ""},
		{"http://127.0.0.1:4317", "", "grpc", ""},
	} {
		unset(t)
		t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", c.traces)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", c.generic)
		t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", c.proto)
		var logged []string
		_, shutdown, _, err := Tracing(context.Background(), "svc", func(format string, args ...any) {
			logged = append(logged, fmt.Sprintf(format, args...))
		})
		if err != nil {
			t.Fatal(err)
		}
		_ = shutdown(context.Background()) // nothing was recorded: nothing to send
		got := strings.Join(logged, "\n")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("traces %q, generic %q, protocol %q: logged %q, want %q", c.traces, c.generic, c.proto, got, c.want)
		}
	}
}

// An export answered with 404 Not Found is logged with the path an OTLP/HTTP receiver takes traces
// at, and which variable needs it: the error names only the URL and the status.
func TestNotFoundHint(t *testing.T) {
	unset(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", srv.URL+"/traces")
	logged := exportOne(t)
	const want = "(nothing takes traces at that URL: an OTLP/HTTP receiver takes them at /v1/traces. OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used as it is written"
	if len(logged) == 0 || !strings.Contains(logged[len(logged)-1], "404 Not Found") || !strings.Contains(logged[len(logged)-1], want) {
		t.Fatalf("logged %q, want the 404 with the hint %q", logged, want)
	}
}

// ignore is the log of the tests that do not read it: Tracing installs it as the global error
// handler, which outlives the test.
func ignore(string, ...any) {}

// An export that speaks to a receiver in a way it does not speak (one OTLP protocol to the other's
// port, TLS to plain text, plain text to TLS) is logged with a hint that names the ports or the
// scheme, and the variable: the errors themselves ("malformed HTTP response", "server preface",
// "EOF") say neither. The receivers are real: gRPC and HTTP/1 servers, with and without TLS.
func TestProtocolMismatchHint(t *testing.T) {
	httpPlain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer httpPlain.Close()
	httpTLS := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	httpTLS.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes that fail, on purpose
	httpTLS.StartTLS()
	defer httpTLS.Close()
	grpcPlain := grpcServer(t, nil, false)
	// The gRPC servers with TLS present httptest's certificate, as httpTLS does.
	tlsCreds := credentials.NewTLS(&tls.Config{Certificates: httpTLS.TLS.Certificates})
	grpcTLS := grpcServer(t, tlsCreds, false)
	grpcTLSUnread := grpcServer(t, tlsCreds, true)
	_, grpcPort, _ := net.SplitHostPort(grpcPlain)
	dead := refused.Addr(t)
	for _, c := range []struct{ endpoint, proto, insecure, want string }{
		{"http://" + dead, "http/protobuf", "", refusedHint},
		{"http://" + dead, "grpc", "", refusedHint},
		{"http://" + grpcPlain, "http/protobuf", "", toGRPC},
		{httpPlain.URL, "grpc", "", toHTTP},
		{"https://" + httpPlain.Listener.Addr().String(), "http/protobuf", "", noTLS},
		{"https://" + grpcPlain, "grpc", "", noTLS},
		// Without a scheme, the gRPC exporter takes TLS.
		{"localhost:" + grpcPort, "grpc", "", noTLS},
		{"http://" + httpTLS.Listener.Addr().String(), "http/protobuf", "", wantTLS},
		{httpTLS.URL, "http/protobuf", "true", wantTLS},
		{"http://" + grpcTLS, "grpc", "", closedAtOnce},
		// The same server, closing with bytes of the client's unread: the connection is reset.
		{"http://" + grpcTLSUnread, "grpc", "", closedAtOnce},
	} {
		unset(t)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", c.endpoint)
		t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", c.proto)
		t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", c.insecure)
		t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2000")
		if logged := exportOne(t); len(logged) == 0 || !strings.HasSuffix(logged[0], c.want) {
			t.Errorf("%s over %s (insecure %q): logged %q, want a line ending in %q", c.endpoint, c.proto, c.insecure, logged, c.want)
		}
	}
}

// TestPlainTextToTLSWithABody: a batch sent in plain text to a TLS receiver, big enough that the
// receiver closes with the body unread, is logged with the fix. The client then meets the
// receiver's answer, a reset, a broken pipe or its own connection closed, as the race over the
// wire falls; only the answer got a hint. Five exports, each of whose errors must carry it.
func TestPlainTextToTLSWithABody(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	for range 5 {
		unset(t)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+srv.Listener.Addr().String())
		t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "none")
		t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "5000")
		logged := export(t, func(tp trace.TracerProvider) {
			for range 64 { // 64 spans of 64 KiB: a 4 MiB body
				_, span := tp.Tracer("test").Start(context.Background(), "generation")
				span.SetAttributes(attribute.String("filler", strings.Repeat("x", 64<<10)))
				span.End()
			}
		})
		if len(logged) == 0 {
			t.Error("the export was not logged")
		}
		for _, l := range logged {
			if !strings.HasSuffix(l, resetPlain) && !strings.HasSuffix(l, wantTLS) {
				t.Errorf("logged %q, want the hint that the endpoint expects TLS", l)
			}
		}
	}
}

// grpcServer serves gRPC, with creds (nil: in plain text), on a loopback port until the test ends,
// and returns its address. With unread, a connection the server closes is reset instead of ended:
// it closes with bytes of the client's SETTINGS frame unread. So it goes whenever that frame, which
// gRPC writes apart from its preface, reaches a TLS server after its first read and before it drops
// the connection (seen on a loaded machine); here every time, after the client has written it.
func grpcServer(t *testing.T, creds credentials.TransportCredentials, unread bool) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var opts []grpc.ServerOption
	if creds != nil {
		opts = append(opts, grpc.Creds(creds))
	}
	s := grpc.NewServer(opts...)
	addr := l.Addr().String()
	if unread {
		l = unreadListener{l}
	}
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return addr
}

// unreadListener's connections give the server at most 5 bytes a read (a TLS record's header,
// all a TLS server reads of a plain-text client), and before they close read the rest of gRPC's
// 24-byte preface and the first byte of its SETTINGS frame, waiting for the client to write that
// frame: the rest of it is unread when the connection closes.
type unreadListener struct{ net.Listener }

type unreadConn struct {
	net.Conn
	read atomic.Int64
}

func (l unreadListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &unreadConn{Conn: c}, nil
}

func (c *unreadConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p[:min(len(p), 5)])
	c.read.Add(int64(n))
	return n, err
}

func (c *unreadConn) Close() error {
	if n := 25 - c.read.Swap(25); n > 0 {
		_ = c.Conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.ReadFull(c.Conn, make([]byte, n))
	}
	return c.Conn.Close()
}

const (
	resetPlain   = "(the endpoint reset the connection, as a receiver that expects TLS does when sent plain text: write the endpoint with https://, and leave OTEL_EXPORTER_OTLP_INSECURE unset; if it expects none, it closed the connection for another reason)"
	refusedHint  = "(nothing listens at the endpoint: start the receiver, or point the endpoint at the port it listens on; OTLP/HTTP's default port is 4318, OTLP/gRPC's 4317)"
	toGRPC       = "(the endpoint speaks HTTP/2, as an OTLP/gRPC receiver does: its default port is 4317, OTLP/HTTP's 4318; use OTLP/HTTP's port, or set OTEL_EXPORTER_OTLP_PROTOCOL=grpc)"
	toHTTP       = "(the endpoint does not speak HTTP/2, as an OTLP/HTTP receiver does not: its default port is 4318, OTLP/gRPC's 4317; use OTLP/gRPC's port, or set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf)"
	noTLS        = "(the endpoint does not speak TLS, as a receiver without a tls section does not: write the endpoint with http://, or set OTEL_EXPORTER_OTLP_INSECURE=true)"
	wantTLS      = "(the endpoint speaks TLS: write the endpoint with https://, and leave OTEL_EXPORTER_OTLP_INSECURE unset)"
	closedAtOnce = "(the endpoint closed the connection at once, as a receiver that expects TLS does when spoken to in plain text: write the endpoint with https://, and leave OTEL_EXPORTER_OTLP_INSECURE unset; if it expects none, it is no OTLP/gRPC receiver)"
)

// Which of its errors an export meets can depend on a race over the wire (see mismatch), so each
// is named here, as net/http, crypto/tls and gRPC write them; TestProtocolMismatchHint meets one
// or the other.
func TestMismatchErrors(t *testing.T) {
	for _, c := range []struct {
		err, proto, want string
	}{
		// The gRPC server's SETTINGS frame read as the response to the request.
		{`traces export: Post "http://127.0.0.1:4317/v1/traces": net/http: HTTP/1.x transport connection broken: malformed HTTP response "\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x05\x00\x00@\x00"`, "http/protobuf", toGRPC},
		// The same frame arriving before the request was written.
		{`traces export: Post "http://127.0.0.1:4317/v1/traces": readLoopPeekFailLocked: %!w(<nil>)`, "http/protobuf", toGRPC},
		{`traces export: rpc error: code = Unavailable desc = connection error: desc = "error reading server preface: http2: frame too large"`, "grpc", toHTTP},
		{`traces export: Post "https://127.0.0.1:4318/v1/traces": http: server gave HTTP response to HTTPS client`, "http/protobuf", noTLS},
		{`traces export: exporter export timeout: rpc error: code = Unavailable desc = connection error: desc = "transport: authentication handshake failed: tls: first record does not look like a TLS handshake"`, "grpc", noTLS},
		{`traces export: failed to send to http://127.0.0.1:4318/v1/traces: 400 Bad Request (body: Client sent an HTTP request to an HTTPS server.)`, "http/protobuf", wantTLS},
		{`traces export: rpc error: code = Unavailable desc = connection error: desc = "error reading server preface: EOF"`, "grpc", closedAtOnce},
		// The same close, with bytes of the client's unread (met under load; see grpcServer).
		{`traces export: exporter export timeout: rpc error: code = Unavailable desc = connection error: desc = "error reading server preface: connection reset by peer"`, "grpc", closedAtOnce},
		// Nothing listening: the ports to check.
		{`traces export: Post "http://127.0.0.1:4318/v1/traces": dial tcp 127.0.0.1:4318: connect: connection refused`, "http/protobuf", refusedHint},
		{`traces export: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:4317: connect: connection refused"`, "grpc", refusedHint},
		// Other failures get no hint, nor the right error under the other protocol.
		{`traces export: context deadline exceeded`, "grpc", ""},
		{`traces export: Post "https://127.0.0.1:4318/v1/traces": tls: failed to verify certificate: x509: certificate signed by unknown authority`, "http/protobuf", ""},
		{`readLoopPeekFailLocked: %!w(<nil>)`, "grpc", ""},
		{`error reading server preface: EOF`, "http/protobuf", ""},
		{`error reading server preface: connection reset by peer`, "http/protobuf", ""},
		{`http: server gave HTTP response to HTTPS client`, "grpc", ""},
	} {
		plain := !strings.Contains(c.err, "https://")
		got := mismatch(errors.New(c.err), c.proto, plain)
		if c.want == "" && got != "" || c.want != "" && got != " "+c.want {
			t.Errorf("mismatch(%q, %s, plain %v) = %q, want %q", c.err, c.proto, plain, got, c.want)
		}
	}
	// A reset over plain HTTP: a TLS receiver closing with a body unread. Over TLS it means
	// something else, and gets no hint.
	for _, reset := range []string{
		`traces export: read tcp 127.0.0.1:33336->127.0.0.1:27318: read: connection reset by peer`,
		`traces export: Post "http://127.0.0.1:37593/v1/traces": readfrom tcp 127.0.0.1:34478->127.0.0.1:37593: write tcp 127.0.0.1:34478->127.0.0.1:37593: write: broken pipe`,
		`traces export: read tcp 127.0.0.1:46952->127.0.0.1:33551: use of closed network connection`,
	} {
		if got, want := mismatch(errors.New(reset), "http/protobuf", true), " "+resetPlain; got != want {
			t.Errorf("%q over plain HTTP: %q, want %q", reset, got, want)
		}
		if got := mismatch(errors.New(reset), "http/protobuf", false); got != "" {
			t.Errorf("%q over TLS: %q, want no hint", reset, got)
		}
	}
}

// exportOne exports one span with Tracing as the environment configures it, and returns what Tracing
// logged by the time its shutdown returned.
func exportOne(t *testing.T) []string {
	t.Helper()
	return export(t, func(tp trace.TracerProvider) {
		_, span := tp.Tracer("test").Start(context.Background(), "generation")
		span.End()
	})
}

// export records spans with record on Tracing's provider as the environment configures it, shuts
// it down, and returns what Tracing logged by then.
func export(t *testing.T, record func(trace.TracerProvider)) []string {
	t.Helper()
	var mu sync.Mutex
	var logged []string
	tp, shutdown, _, err := Tracing(context.Background(), "svc", func(format string, args ...any) {
		mu.Lock()
		logged = append(logged, fmt.Sprintf(format, args...))
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	record(tp)
	_ = shutdown(context.Background())
	mu.Lock()
	defer mu.Unlock()
	return append([]string(nil), logged...)
}

// TestRecordsUnsampledCallers: a generation whose caller's traceparent says "not sampled" is still
// recorded (the proxy's and fakellm's job is to record every one); OTEL_TRACES_SAMPLER, when set,
// decides instead. Before, an application sampling a tenth of its traces got a tenth of its
// generations recorded, silently.
func TestRecordsUnsampledCallers(t *testing.T) {
	parent := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, Remote: true, // TraceFlags 0: not sampled
	})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), parent)
	for sampler, want := range map[string]bool{"": true, "parentbased_always_on": false} {
		unset(t)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
		t.Setenv("OTEL_TRACES_SAMPLER", sampler)
		tp, shutdown, _, err := Tracing(context.Background(), "svc", ignore)
		if err != nil {
			t.Fatal(err)
		}
		_, span := tp.Tracer("t").Start(ctx, "chat m")
		if got := span.SpanContext().IsSampled(); got != want {
			t.Errorf("OTEL_TRACES_SAMPLER=%q: sampled %v under an unsampled caller, want %v", sampler, got, want)
		}
		span.End()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = shutdown(sctx)
		cancel()
	}
}

// TestTracingOff: OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none, in any case, turn tracing
// off as the specification has it, whatever endpoint is set: a no-op provider, no exporter, and
// no connection to the endpoint, whose variables are then not read (a malformed one is no error).
// Before, both were ignored and the spans went to the endpoint.
func TestTracingOff(t *testing.T) {
	for _, c := range []struct{ variable, value string }{
		{"OTEL_SDK_DISABLED", "true"},
		{"OTEL_SDK_DISABLED", " TRUE "},
		{"OTEL_TRACES_EXPORTER", "none"},
		{"OTEL_TRACES_EXPORTER", "None"},
	} {
		for _, endpoint := range []string{"", "collector", "127.0.0.1:4318"} {
			unset(t)
			var accepted atomic.Int32
			if endpoint == "collector" {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				go func() {
					for {
						conn, err := l.Accept()
						if err != nil {
							return
						}
						accepted.Add(1)
						conn.Close()
					}
				}()
				endpoint = "http://" + l.Addr().String()
				defer l.Close()
			}
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
			t.Setenv(c.variable, c.value)
			tp, shutdown, desc, err := Tracing(context.Background(), "svc", ignore)
			if err != nil {
				t.Errorf("%s=%q, endpoint %q: %v", c.variable, c.value, endpoint, err)
				continue
			}
			_, span := tp.Tracer("test").Start(context.Background(), "generation")
			span.End()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = shutdown(ctx)
			cancel()
			if _, ok := tp.(noop.TracerProvider); !ok || desc != "" || accepted.Load() != 0 {
				t.Errorf("%s=%q, endpoint %q: %T exporting to %q, %d connections to the endpoint; want a no-op provider, no destination, none", c.variable, c.value, endpoint, tp, desc, accepted.Load())
			}
		}
	}
}

// An OTEL_TRACES_EXPORTER other than otlp or none, and an OTEL_SDK_DISABLED other than true or
// false, fail at start naming the variable, the value and what is supported; otlp and false, in
// any case, leave tracing on.
func TestTracingOffValues(t *testing.T) {
	for _, c := range []struct{ variable, value, want string }{
		{"OTEL_TRACES_EXPORTER", "zipkin", `OTEL_TRACES_EXPORTER="zipkin": the exporters supported are otlp (the default) and none`},
		{"OTEL_TRACES_EXPORTER", "otlp,console", `OTEL_TRACES_EXPORTER="otlp,console": the exporters supported are otlp`},
		{"OTEL_SDK_DISABLED", "1", `OTEL_SDK_DISABLED="1": write true (no spans) or false`},
		{"OTEL_SDK_DISABLED", "yes", `OTEL_SDK_DISABLED="yes"`},
		{"OTEL_TRACES_EXPORTER", "OTLP", ""},
		{"OTEL_TRACES_EXPORTER", " otlp ", ""},
		{"OTEL_SDK_DISABLED", "False", ""},
	} {
		unset(t)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
		t.Setenv(c.variable, c.value)
		_, shutdown, desc, err := Tracing(context.Background(), "svc", ignore)
		if c.want == "" {
			if err != nil || desc == "" {
				t.Errorf("%s=%q: %q, %v; want spans exported", c.variable, c.value, desc, err)
			} else {
				_ = shutdown(context.Background()) // nothing was recorded: nothing to send
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%q: %v, want an error with %q", c.variable, c.value, err, c.want)
		}
	}
}
