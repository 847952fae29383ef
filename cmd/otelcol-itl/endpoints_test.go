package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"
)

// TestOTLPHTTPEndpointIsABase: an OTLP/HTTP exporter's endpoint that already ends in a signal's
// path is refused at start with the base to write; the exporter would send to
// .../v1/traces/v1/traces and drop every span on the backend's 404. A base with a path of the
// intake's own, and whole URLs in traces_endpoint, are taken.
func TestOTLPHTTPEndpointIsABase(t *testing.T) {
	config := func(exporter string) string {
		return `
receivers: {otlp: {protocols: {grpc: {endpoint: 127.0.0.1:4317}}}}
exporters: {` + exporter + `}
service: {pipelines: {traces: {receivers: [otlp], exporters: [` + strings.SplitN(exporter, ":", 2)[0] + `]}}}
`
	}
	for _, c := range []struct{ exporter, want string }{
		{`otlp_http: {endpoint: "http://127.0.0.1:4318/v1/traces"}`,
			`exporters::otlp_http::endpoint: "http://127.0.0.1:4318/v1/traces" ends in /v1/traces, and the exporter appends /v1/traces and /v1/metrics to its endpoint (here: http://127.0.0.1:4318/v1/traces/v1/traces): write the base, http://127.0.0.1:4318,`},
		{`otlp_http/backend: {endpoint: "https://intake.example/otlp/v1/metrics/"}`, `write the base, https://intake.example/otlp,`},
		{`otlp_http: {endpoint: "https://user:secret@intake.example/v1/logs"}`, `"https://user:xxxxx@intake.example/v1/logs" ends in /v1/logs`},
		{`otlp_http: {endpoint: "https://intake.example/otlp"}`, ""},
		{`otlp_http: {traces_endpoint: "http://127.0.0.1:4318/v1/traces"}`, ""},
	} {
		err := dryRun(t, "yaml:"+config(c.exporter))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.exporter, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error with %q", c.exporter, err, c.want)
		case c.want != "" && strings.Contains(err.Error(), "secret"):
			t.Errorf("%s: the error shows the password: %v", c.exporter, err)
		}
	}
}

// TestAddresses: an address no component could use is refused with the key, the value and the
// fix, where validate passed it and the collector failed at start (a listen address) or at every
// send (an exporter's endpoint). Addresses a component takes are taken: every interface, IPv6, a
// service's name for a port, a gRPC resolver's target, a unix socket.
func TestAddresses(t *testing.T) {
	receiver := func(endpoint any) map[string]any {
		return map[string]any{"receivers": map[string]any{"otlp": map[string]any{"protocols": map[string]any{"grpc": map[string]any{"endpoint": endpoint}}}}}
	}
	exporter := func(id, key string, endpoint any) map[string]any {
		return map[string]any{"exporters": map[string]any{id: map[string]any{key: endpoint}}}
	}
	telemetry := func(host, port any) map[string]any {
		return map[string]any{"service": map[string]any{"telemetry": map[string]any{"metrics": map[string]any{"readers": []any{
			map[string]any{"pull": map[string]any{"exporter": map[string]any{"prometheus": map[string]any{"host": host, "port": port}}}}}}}}}
	}
	const grpcKey = "receivers::otlp::protocols::grpc::endpoint: "
	for _, c := range []struct {
		name string
		conf map[string]any
		want string // substring of the error; "": none
	}{
		{"loopback", receiver("127.0.0.1:4317"), ""},
		{"every interface", receiver(":4317"), ""},
		{"IPv6", receiver("[::1]:4317"), ""},
		{"a host name", receiver("collector-0.internal_zone.example:4317"), ""},
		{"a service's name as port", receiver("127.0.0.1:http"), ""},
		// No value (endpoint: with nothing after it, or ${env:VAR} with VAR unset and no default,
		// which resolves to no value, not to "") is no default either: the receiver listened on
		// every interface at a random port, as for "".
		{"no value: every interface, a random port", receiver(nil), grpcKey + `has no value (nothing after the colon, or a variable unset without a default), and listens on every interface at a random port; write host:port (127.0.0.1:<port> for this machine alone, :<port> for every interface), or leave the key out for the component's default`},
		{"no endpoint key: the default", map[string]any{"receivers": map[string]any{"otlp": map[string]any{"protocols": map[string]any{"grpc": map[string]any{}}}}}, ""},
		{"no protocol settings: the default", map[string]any{"receivers": map[string]any{"otlp": map[string]any{"protocols": map[string]any{"grpc": nil}}}}, ""},
		// An empty string is no default: the receiver listened on every interface at a random
		// port, which validate passed with only the env provider's warning of an unset variable.
		{"empty: every interface, a random port", receiver(""), grpcKey + `"" is empty, and listens on every interface at a random port; write host:port (127.0.0.1:<port> for this machine alone, :<port> for every interface), or leave the key out for the component's default`},
		{"spaces", receiver("  "), grpcKey + `"  " is empty`},
		// The health check, pprof and a Prometheus exporter refuse an empty endpoint themselves
		// ("http endpoint required", as pprof starts, as the exporter is built): refused here with
		// the fix, but they would not listen at a random port, which the message said.
		{"an empty health check", map[string]any{"extensions": map[string]any{"health_check": map[string]any{"endpoint": ""}}},
			`extensions::health_check::endpoint: "" is empty; write host:port (127.0.0.1:<port> for this machine alone, :<port> for every interface), or leave the key out for the component's default`},
		{"an empty Prometheus exporter", exporter("prometheus", "endpoint", " "),
			`exporters::prometheus::endpoint: " " is empty; write host:port`},
		{"an empty exporter endpoint: the exporter says", exporter("otlp", "endpoint", ""), ""},
		{"a variable's digits, resolved as a number", receiver(14317), grpcKey + `"14317" is a port alone`},
		{"another type: the component's decoding says", receiver([]any{"x"}), ""},
		{"a unix socket", map[string]any{"receivers": map[string]any{"otlp": map[string]any{"protocols": map[string]any{"grpc": map[string]any{
			"endpoint": "/run/otel.sock", "transport": "unix"}}}}}, ""},
		// One range, the one taken: the message said "outside 0 to 65535; give a port from 1 to 65535".
		{"a port beyond 65535", receiver("127.0.0.1:70000"), grpcKey + `"127.0.0.1:70000": port 70000 is outside 0 to 65535; give a port from 0 to 65535 (0: any free port, chosen at start)`},
		{"a negative port", receiver("127.0.0.1:-1"), `port -1 is outside 0 to 65535; give a port from 0 to 65535`},
		{"port 0: any free one", receiver("127.0.0.1:0"), ""},
		{"a port that is no number", receiver("127.0.0.1:abc"), grpcKey + `"127.0.0.1:abc": port "abc" is neither a number nor a service's name; give a port from 0 to 65535 (0: any free port, chosen at start)`},
		{"no port", receiver("127.0.0.1"), grpcKey + `"127.0.0.1" has no port; write it as host:port (127.0.0.1:<port>)`},
		{"a port alone", receiver("14317"), grpcKey + `"14317" is a port alone; write ":14317" for every interface, or "127.0.0.1:14317" for this machine alone`},
		{"a URL", receiver("http://0.0.0.0:4317"), grpcKey + `"http://0.0.0.0:4317" is a URL; a listen address is host:port, without a scheme: "0.0.0.0:4317"`},
		{"a space in the host", receiver("gate way:4317"), grpcKey + `"gate way:4317": "gate way" is not a host name or an IP address`},
		{"too many colons", receiver("1:2:3"), grpcKey + `"1:2:3" is not host:port (too many colons in address)`},
		{"the health check", map[string]any{"extensions": map[string]any{"health_check": map[string]any{"endpoint": "0.0.0.0:99999"}}},
			`extensions::health_check::endpoint: "0.0.0.0:99999": port 99999 is outside`},
		{"a Prometheus exporter listens", exporter("prometheus", "endpoint", "8889"), `exporters::prometheus::endpoint: "8889" is a port alone`},
		{"the telemetry's port", telemetry("127.0.0.1", 70000),
			`service::telemetry::metrics::readers[0]::pull::exporter::prometheus::port: port 70000 is outside 0 to 65535; give a port from 0 to 65535 (0: any free port, chosen at start)`},
		{"the telemetry's port 0: any free one", telemetry("127.0.0.1", 0), ""},
		{"the telemetry's port, no number", telemetry("127.0.0.1", "abc"),
			`prometheus::port: port "abc" is not a number; give a port from 0 to 65535 (0: any free port, chosen at start)`},
		// An int in the collector's configuration: a service's name is refused here, not only as
		// the collector decodes it.
		{"the telemetry's port, a service's name", telemetry("127.0.0.1", "http"), `prometheus::port: port "http" is not a number`},
		{"the telemetry's host", telemetry("my host", 8888), `readers[0]::pull::exporter::prometheus::host: "my host": "my host" is not a host name`},
		{"the telemetry's defaults", telemetry("127.0.0.1", 8888), ""},
		{"a gRPC backend", exporter("otlp_grpc", "endpoint", "gateway.example:4317"), ""},
		{"a gRPC backend, with https://", exporter("otlp_grpc", "endpoint", "https://gateway.example:443"), ""},
		{"a gRPC resolver's target", exporter("otlp_grpc", "endpoint", "dns:///gateway.example:4317"), ""},
		{"a gRPC backend's port beyond 65535", exporter("otlp_grpc/gateway", "endpoint", "gateway.example:70000"),
			`exporters::otlp_grpc/gateway::endpoint: "gateway.example:70000": port 70000 is outside 1 to 65535; give the port of the backend`},
		{"a gRPC backend's port alone", exporter("otlp_grpc", "endpoint", "4317"),
			`exporters::otlp_grpc::endpoint: "4317" is a port alone; write the backend's host and port, such as backend.example.com:4317`},
		{"a gRPC backend's port alone, resolved as a number", exporter("otlp_grpc", "endpoint", 4317), `"4317" is a port alone`},
		{"a gRPC backend without a port", exporter("otlp_grpc", "endpoint", "gateway.example"),
			`exporters::otlp_grpc::endpoint: "gateway.example" has no port; write it as host:port, such as gateway.example:4317`},
		{"a gRPC backend without a port, with https://", exporter("otlp_grpc", "endpoint", "https://gateway.example"),
			`"https://gateway.example" has no port; write it as host:port, such as https://gateway.example:4317`},
		{"a scheme alone", exporter("otlp_grpc", "endpoint", "http://"),
			`exporters::otlp_grpc::endpoint: "http://" has no host or port; write the backend's host and port, such as http://backend.example.com:4317`},
		{"a gRPC backend's port 0", exporter("otlp_grpc", "endpoint", "gateway.example:0"), `port 0 is outside 1 to 65535`},
		{"a gRPC backend's host", exporter("otlp_grpc", "endpoint", "gate way:4317"), `exporters::otlp_grpc::endpoint: "gate way:4317": "gate way" is not a host name`},
		{"a gRPC backend with a password", exporter("otlp_grpc", "endpoint", "https://user:s3cr3t@gateway.example:4317"),
			`exporters::otlp_grpc::endpoint: "https://user:xxxxx@gateway.example:4317" has a user or password before its host, which an OTLP/gRPC endpoint cannot carry; write the backend's host and port alone, such as https://gateway.example:4317, and send the credentials with the exporter's auth`},
		{"a gRPC backend with a password, no scheme", exporter("otlp_grpc", "endpoint", "user:s3cr3t@gateway.example:4317"),
			`"user:xxxxx@gateway.example:4317" has a user or password before its host`},
		{"a unix socket's name with an @", exporter("otlp_grpc", "endpoint", "unix-abstract:@otel"), ""},
		{"a gRPC backend with a user", exporter("otlp_grpc", "endpoint", "user@gateway.example:4317"),
			`"user@gateway.example:4317" has a user or password before its host, which an OTLP/gRPC endpoint cannot carry; write the backend's host and port alone, such as gateway.example:4317`},
		{"a remote-write backend", exporter("prometheus_remote_write", "endpoint", "https://mimir.example/api/v1/push"), ""},
		{"a remote-write backend without a scheme", exporter("prometheus_remote_write", "endpoint", "mimir.example/api/v1/push"),
			`exporters::prometheus_remote_write::endpoint: "mimir.example/api/v1/push" has no scheme; write http://mimir.example/api/v1/push or https://mimir.example/api/v1/push`},
		{"a remote-write backend's port, its password hidden", exporter("prometheus_remote_write", "endpoint", "https://user:s3cr3t@mimir.example:99999/api/v1/push"),
			`exporters::prometheus_remote_write::endpoint: "https://user:xxxxx@mimir.example:99999/api/v1/push": port 99999 is outside 1 to 65535`},
		{"an OTLP/HTTP backend", exporter("otlp_http", "endpoint", "https://intake.example/otlp"), ""},
		{"an OTLP/HTTP backend without a scheme", exporter("otlp_http", "endpoint", "gateway.example:4318"),
			`exporters::otlp_http::endpoint: "gateway.example:4318" has no scheme; write http://gateway.example:4318 or https://gateway.example:4318`},
		{"an OTLP/HTTP backend's port alone", exporter("otlp_http", "endpoint", "4318"),
			`exporters::otlp_http::endpoint: "4318" is a port alone; write the backend's URL with its host, such as http://backend.example.com:4318 or https://backend.example.com:4318`},
		{"an OTLP/HTTP backend's port alone, resolved as a number", exporter("otlp_http", "endpoint", 4318), `"4318" is a port alone`},
		{"an OTLP/HTTP backend's port without a host", exporter("otlp_http", "traces_endpoint", ":4318"), `":4318" is a port alone; write the backend's URL with its host, such as http://backend.example.com:4318`},
		{"an IP without a scheme", exporter("otlphttp", "traces_endpoint", "127.0.0.1:4318"), `exporters::otlphttp::traces_endpoint: "127.0.0.1:4318" has no scheme`},
		{"another scheme", exporter("otlp_http", "endpoint", "grpc://gateway:4317"), `"grpc://gateway:4317": the scheme is "grpc", where the exporter speaks http or https`},
		{"an OTLP/HTTP backend's port", exporter("otlp_http", "metrics_endpoint", "http://gateway:70000/v1/metrics"),
			`exporters::otlp_http::metrics_endpoint: "http://gateway:70000/v1/metrics": port 70000 is outside 1 to 65535`},
		{"no host", exporter("otlp_http", "endpoint", "http:///v1"), `"http:///v1" has no host`},
		{"a URL that does not parse, its password hidden", exporter("otlp_http", "endpoint", "https://user:s3cr3t@gate way:4318"),
			`"https://user:xxxxx@gate way:4318" is not a URL (invalid character " " in host name)`},
		// A password holding a /, ? or # as it was pasted, not percent-encoded: url.Parse ends the
		// host there, and its error quoted the password's first part ("invalid port \":s3cr3t\"").
		{"a password with a # not percent-encoded", exporter("otlp_http", "endpoint", "https://user:s3cr3t#x@backend.example:4318"),
			`exporters::otlp_http::endpoint: "https://user:xxxxx@backend.example:4318": its user or password holds a /, ? or #, which ends the host of a URL; write each percent-encoded (/ as %2F, ? as %3F, # as %23)`},
		{"a password with a ? not percent-encoded", exporter("otlp_http", "endpoint", "https://user:s3cr3t?x@backend.example:4318/otlp"),
			`"https://user:xxxxx@backend.example:4318/otlp": its user or password holds a /, ? or #`},
		{"a password with a / not percent-encoded", exporter("prometheus_remote_write", "endpoint", "https://user:s3cr3t/x@mimir.example/api/v1/push"),
			`"https://user:xxxxx@mimir.example/api/v1/push": its user or password holds a /, ? or #`},
		{"a gRPC backend with a password with a # not percent-encoded", exporter("otlp_grpc", "endpoint", "https://user:s3cr3t#x@gateway.example:4317"),
			`"https://user:xxxxx@gateway.example:4317" has a user or password before its host, which an OTLP/gRPC endpoint cannot carry; write the backend's host and port alone, such as https://gateway.example:4317,`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := addressesConverter{}.Convert(context.Background(), confmap.NewFromStringMap(c.conf))
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("error %v, want %q", err, c.want)
			case err != nil && strings.Contains(err.Error(), "s3cr3t"):
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// TestValidateRefusesAnUnsetListenAddress: a receiver's endpoint from a variable without a
// default (${env:VAR}), the variable unset, is refused at validate naming the key and the
// variable, where validate said the configuration was valid (after the env provider's warning)
// and the receiver listened on every interface at a random port.
func TestValidateRefusesAnUnsetListenAddress(t *testing.T) {
	out := validateConfig(t, `
receivers: {otlp: {protocols: {grpc: {endpoint: 127.0.0.1:0}, http: {endpoint: "${env:ITL_TEST_UNSET_ENDPOINT}"}}}}
exporters: {debug: {}}
service:
  telemetry: {metrics: {level: none}}
  pipelines: {traces: {receivers: [otlp], exporters: [debug]}}
`)
	for _, want := range []string{
		"receivers::otlp::protocols::http::endpoint: has no value (nothing after the colon, or a variable unset without a default), and listens on every interface at a random port",
		"ITL_TEST_UNSET_ENDPOINT is unset",
	} {
		if !strings.Contains(out, want) || strings.Contains(out, validated) {
			t.Errorf("the output lacks %q, or says the configuration is valid:\n%s", want, out)
		}
	}
}

// TestValidateRefusesBadAddresses: validate refuses a shipped config whose variable gives an
// address no component could use, naming the key, the value and the variable, where it said the
// configuration was valid and the collector failed at start, or at every send.
func TestValidateRefusesBadAddresses(t *testing.T) {
	setConfigEnv(t)
	for _, c := range []struct {
		config, env string
		want        []string
	}{
		{"agent.yaml", "OTLP_GRPC_ENDPOINT=127.0.0.1:70000",
			[]string{`receivers::otlp::protocols::grpc::endpoint: "127.0.0.1:70000": port 70000 is outside`, `OTLP_GRPC_ENDPOINT="127.0.0.1:70000"`}},
		{"gateway.yaml", "GATEWAY_GRPC_ENDPOINT=14317",
			[]string{`receivers::otlp::protocols::grpc::endpoint: "14317" is a port alone`, `GATEWAY_GRPC_ENDPOINT="14317"`}},
		{"agent.yaml", "OTLP_ENDPOINT=4317",
			[]string{`exporters::otlp_grpc::endpoint: "4317" is a port alone; write the backend's host and port`, `OTLP_ENDPOINT="4317"`}},
		{"agent.yaml", "OTLP_ENDPOINT=https://user:s3cr3t@gateway.example:4317",
			[]string{`exporters::otlp_grpc::endpoint: "https://user:xxxxx@gateway.example:4317" has a user or password before its host`, `OTLP_ENDPOINT="https://user:xxxxx@gateway.example:4317"`}},
		{"prometheusremotewrite.yaml", "PROMETHEUS_REMOTE_WRITE_URL=mimir.example/api/v1/push",
			[]string{`exporters::prometheus_remote_write::endpoint: "mimir.example/api/v1/push" has no scheme; write http://mimir.example/api/v1/push`, `PROMETHEUS_REMOTE_WRITE_URL="mimir.example/api/v1/push"`}},
		{"otlphttp.yaml", "OTLP_HTTP_URL=gateway.example:4318",
			[]string{`exporters::otlp_http::endpoint: "gateway.example:4318" has no scheme; write http://gateway.example:4318`, `OTLP_HTTP_URL="gateway.example:4318"`}},
		{"gateway.yaml", "OTLP_HTTP_URL=https://user:s3cr3t#x@backend.example:4318",
			[]string{`exporters::otlp_http::endpoint: "https://user:xxxxx@backend.example:4318": its user or password holds a /, ? or #`, `OTLP_HTTP_URL="https://user:xxxxx@backend.example:4318"`}},
		{"agent.yaml", "OTLP_ENDPOINT=https://user:s3cr3t/x@gateway.example:4317",
			[]string{`exporters::otlp_grpc::endpoint: "https://user:xxxxx@gateway.example:4317" has a user or password before its host`, `OTLP_ENDPOINT="https://user:xxxxx@gateway.example:4317"`}},
		{"gateway.yaml", "OTLP_HTTP_URL=https://user:s3cr3t@backend.example:99999",
			[]string{`exporters::otlp_http::endpoint: "https://user:xxxxx@backend.example:99999": port 99999 is outside`, `OTLP_HTTP_URL="https://user:xxxxx@backend.example:99999"`}},
		{"otlp.yaml", "TELEMETRY_PORT=70000",
			[]string{`service::telemetry::metrics::readers[0]::pull::exporter::prometheus::port: port 70000 is outside 0 to 65535; give a port from 0 to 65535 (0: any free port, chosen at start)`, `TELEMETRY_PORT="70000"`}},
		{"gateway.yaml", "TELEMETRY_PORT=abc",
			[]string{`service::telemetry::metrics::readers[0]::pull::exporter::prometheus::port: port "abc" is not a number; give a port from 0 to 65535 (0: any free port, chosen at start)`, `TELEMETRY_PORT="abc"`}},
	} {
		out, code := otelcolItl(t, []string{c.env}, "validate", "--config", filepath.Join("..", "..", "exporter-config", c.config))
		if code != 1 {
			t.Errorf("%s with %s: exit status %d, want 1\n%s", c.config, c.env, code, out)
			continue
		}
		for _, want := range c.want {
			if !strings.Contains(out, want) {
				t.Errorf("%s with %s: the output lacks %q:\n%s", c.config, c.env, want, out)
			}
		}
		if strings.Contains(out, "s3cr3t") {
			t.Errorf("%s with %s: the output shows the URL's password:\n%s", c.config, c.env, out)
		}
	}
}
