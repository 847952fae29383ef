package main

import (
	"strings"
	"testing"
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
