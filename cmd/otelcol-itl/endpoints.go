package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/confmap"
)

// signalPaths are the paths the OTLP/HTTP exporter appends to its endpoint, one per signal.
var signalPaths = []string{"/v1/traces", "/v1/metrics", "/v1/logs", "/v1development/profiles"}

// baseEndpoints refuses an OTLP/HTTP exporter whose endpoint already ends in a signal's path. The
// exporter appends /v1/traces and /v1/metrics to its endpoint, so http://backend:4318/v1/traces
// sends to .../v1/traces/v1/traces, which a backend answers 404, a permanent error: every span
// and metric is dropped, with nothing said at start (otlphttp.yaml's OTLP_HTTP_URL is that
// endpoint). traces_endpoint and metrics_endpoint are whole URLs, and are left alone.
func baseEndpoints() confmap.ConverterFactory {
	return confmap.NewConverterFactory(func(confmap.ConverterSettings) confmap.Converter { return baseEndpointsConverter{} })
}

type baseEndpointsConverter struct{}

func (baseEndpointsConverter) Convert(_ context.Context, conf *confmap.Conf) error {
	exporters, _ := conf.Get("exporters").(map[string]any)
	ids := make([]string, 0, len(exporters))
	for id := range exporters {
		ids = append(ids, id)
	}
	sort.Strings(ids) // one error for each, in a stable order
	var errs []error
	for _, id := range ids {
		typ, _, _ := strings.Cut(id, "/")
		if typ != "otlp_http" && typ != "otlphttp" {
			continue
		}
		settings, _ := exporters[id].(map[string]any)
		endpoint, _ := settings["endpoint"].(string)
		u, err := url.Parse(strings.TrimSpace(endpoint))
		if err != nil || endpoint == "" {
			continue // the exporter's own validation speaks of it
		}
		p := strings.TrimSuffix(u.Path, "/")
		for _, tail := range signalPaths {
			if strings.HasSuffix(p, tail) {
				base := *u
				base.Path = strings.TrimSuffix(p, tail)
				errs = append(errs, fmt.Errorf("exporters::%s::endpoint: %q ends in %s, and the exporter appends /v1/traces and /v1/metrics to its endpoint (here: %s%s): write the base, %s, or give whole URLs in traces_endpoint and metrics_endpoint",
					id, u.Redacted(), tail, u.Redacted(), "/v1/traces", base.Redacted()))
				break
			}
		}
	}
	return errors.Join(errs...)
}
