package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/confmap"

	"github.com/otelitl/itl/internal/urlpass"
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

// addresses refuses, at validate and before start, an address no component could use, which
// validate passed: a listen address (a receiver's, the health check's, the profiler's, a
// Prometheus exporter's, the collector's own telemetry) without a port, with a port beyond 65535,
// a scheme, or a host that is no host name (a space in it); an exporter's endpoint with such a
// port or host, and an OTLP/HTTP endpoint without http:// or https://. A listen address failed
// only as the collector started ("listen tcp: address 70000: invalid port"); an exporter's endpoint
// only at its first send, every span and metric then dropped or retried with nothing said at start.
// Only what needs no network is checked: whether a host resolves or an endpoint answers is not.
func addresses() confmap.ConverterFactory {
	return confmap.NewConverterFactory(func(confmap.ConverterSettings) confmap.Converter { return addressesConverter{} })
}

type addressesConverter struct{}

func (addressesConverter) Convert(_ context.Context, conf *confmap.Conf) error {
	var errs []error
	check := func(key string, v any, valid func(string) error) {
		var s string
		switch v := v.(type) {
		case string:
			s = v
		case int, int64, uint64: // a variable's digits, which the resolver makes a number and the component's decoding a string again
			s = fmt.Sprint(v)
		}
		if strings.TrimSpace(s) == "" {
			return // no value: the component's default or its own check, or a type its decoding refuses
		}
		if err := valid(s); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
	}
	// listen checks a listen address. An empty one is not the component's default: a receiver
	// hands "" to net.Listen, which takes it as every interface at a random port, so the
	// collector started listening where nobody asked it to. The health check, pprof and a
	// Prometheus exporter refuse it themselves, without the fix.
	listen := func(key string, v any, receiver bool) {
		if s, ok := v.(string); ok && strings.TrimSpace(s) == "" {
			what := "is empty"
			if receiver {
				what += ", and listens on every interface at a random port"
			}
			errs = append(errs, fmt.Errorf("%s: %q %s; %s", key, s, what, emptyListenFix))
			return
		}
		check(key, v, listenAddress)
	}
	section := func(name string) (map[string]map[string]any, []string) {
		m, _ := conf.Get(name).(map[string]any)
		out := map[string]map[string]any{}
		for id, v := range m {
			out[id], _ = v.(map[string]any)
		}
		return out, sortedKeys(m)
	}
	receivers, ids := section("receivers")
	for _, id := range ids {
		protocols, _ := receivers[id]["protocols"].(map[string]any)
		for _, p := range sortedKeys(protocols) {
			settings, _ := protocols[p].(map[string]any)
			if t, _ := settings["transport"].(string); t != "" && !strings.HasPrefix(t, "tcp") {
				continue // a unix socket's path
			}
			key := "receivers::" + id + "::protocols::" + p + "::endpoint"
			// No value (endpoint: with nothing after it, or ${env:OTLP_GRPC_ENDPOINT} with the
			// variable unset and no default, which resolves to no value, not to "") is not the
			// default either: the decoder zeroes the setting, and the receiver listened on every
			// interface at a random port, with only the env provider's warning of the unset
			// variable. The extensions and the Prometheus exporter refuse it themselves.
			if v, set := settings["endpoint"]; set && v == nil {
				errs = append(errs, fmt.Errorf("%s: has no value (nothing after the colon, or a variable unset without a default), and listens on every interface at a random port; %s", key, emptyListenFix))
				continue
			}
			listen(key, settings["endpoint"], true)
		}
	}
	extensions, ids := section("extensions")
	for _, id := range ids {
		if typ, _, _ := strings.Cut(id, "/"); typ == "health_check" || typ == "pprof" || typ == "zpages" {
			listen("extensions::"+id+"::endpoint", extensions[id]["endpoint"], false)
		}
	}
	exporters, ids := section("exporters")
	for _, id := range ids {
		settings := exporters[id]
		switch typ, _, _ := strings.Cut(id, "/"); typ {
		case "prometheus":
			listen("exporters::"+id+"::endpoint", settings["endpoint"], false)
		case "otlp", "otlp_grpc":
			check("exporters::"+id+"::endpoint", settings["endpoint"], grpcTarget)
		case "otlp_http", "otlphttp":
			for _, k := range []string{"endpoint", "traces_endpoint", "metrics_endpoint", "logs_endpoint"} {
				check("exporters::"+id+"::"+k, settings[k], httpURL)
			}
		case "prometheus_remote_write", "prometheusremotewrite":
			// The exporter refused one without a scheme as "invalid endpoint", without the key,
			// and took a port beyond 65535 until its first send.
			check("exporters::"+id+"::endpoint", settings["endpoint"], httpURL)
		}
	}
	readers, _ := conf.Get("service::telemetry::metrics::readers").([]any)
	for i, r := range readers {
		prom, _ := confmap.NewFromStringMap(asMap(r)).Get("pull::exporter::prometheus").(map[string]any)
		if prom == nil {
			continue
		}
		key := fmt.Sprintf("service::telemetry::metrics::readers[%d]::pull::exporter::prometheus::", i)
		check(key+"host", prom["host"], func(h string) error { return validHost(h, h) })
		check(key+"port", prom["port"], func(p string) error { return listenPort(p, false) })
	}
	return errors.Join(errs...)
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// sortedKeys returns m's keys in order: one error for each, in a stable order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// emptyListenFix is the fix for a listen address with no value or an empty one.
const emptyListenFix = "write host:port (127.0.0.1:<port> for this machine alone, :<port> for every interface), or leave the key out for the component's default"

// listenAddress reports why a cannot be listened on: host:port, the host empty for every
// interface, the port from 0 (any free one) to 65535 or a service's name.
func listenAddress(a string) error {
	if strings.Contains(a, "://") {
		if u, err := url.Parse(a); err == nil && u.Host != "" {
			return fmt.Errorf("%q is a URL; a listen address is host:port, without a scheme: %q", a, u.Host)
		}
		return fmt.Errorf("%q is a URL; a listen address is host:port, without a scheme", a)
	}
	if _, err := strconv.Atoi(a); err == nil {
		return fmt.Errorf("%q is a port alone; write \":%s\" for every interface, or \"127.0.0.1:%s\" for this machine alone", a, a, a)
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) && ae.Err == "missing port in address" {
			return fmt.Errorf("%q has no port; write it as host:port (%s:<port>)", a, a)
		}
		return fmt.Errorf("%q is not host:port (%s); write it as host:port, such as 127.0.0.1:4317", a, errText(err))
	}
	if err := validHost(a, host); err != nil {
		return err
	}
	if err := listenPort(port, true); err != nil {
		return fmt.Errorf("%q: %w", a, err)
	}
	return nil
}

// listenPort reports why port is none a listener can take: a number from 0 to 65535, or, where
// names is true, a service's name (http), as net.Listen takes it. 0 is taken: the listener is given
// any free port, as net.Listen gives it, for a receiver and for the collector's telemetry alike
// (otelconf's Prometheus reader listens on host:port as written, and the project's tests run the
// collector so). Its message said "outside 0 to 65535; give a port from 1 to 65535", two ranges in
// one line; it says the one that is taken. The telemetry's port is an int in the collector's
// configuration, which takes no service's name (names false): the collector refused "http" only as
// it decoded the configuration ("expected type 'int', got unconvertible type 'string'").
func listenPort(port string, names bool) error {
	n, err := strconv.Atoi(port)
	switch {
	case err != nil && names:
		if _, lerr := net.LookupPort("tcp", port); lerr == nil {
			return nil
		}
		return fmt.Errorf("port %q is neither a number nor a service's name; %s", port, portFix)
	case err != nil:
		return fmt.Errorf("port %q is not a number; %s", port, portFix)
	case n < 0 || n > 65535:
		return fmt.Errorf("port %d is outside 0 to 65535; %s", n, portFix)
	}
	return nil
}

// portFix is listenPort's fix, the range it takes.
const portFix = "give a port from 0 to 65535 (0: any free port, chosen at start)"

// grpcTarget reports why the OTLP/gRPC exporter's endpoint a cannot be dialled: a port alone or
// no port, its port beyond 65535 or 0, its host no host name, a user or password before the host
// (written xxxxx in the error). configgrpc refuses the first two
// itself, but says "address 4317: missing port in address" of a port alone (agent.yaml's
// OTLP_ENDPOINT=4317), which has one, and names no fix for either. What else it refuses (a port
// that is not a number) and what it passes to a gRPC resolver (dns:///..., unix://) are left to it.
func grpcTarget(a string) error {
	target := a
	switch {
	case strings.HasPrefix(target, "http://"), strings.HasPrefix(target, "https://"):
		_, target, _ = strings.Cut(target, "://")
	case strings.Contains(target, "://"):
		return nil
	}
	scheme := a[:len(a)-len(target)]
	if at, _ := urlpass.UserinfoAt(target); at >= 0 && !strings.HasPrefix(a, "unix:") && !strings.HasPrefix(a, "unix-abstract:") {
		host := target[at+1:] // the host and port after the user information
		if i := strings.IndexAny(host, "/?#"); i >= 0 {
			host = host[:i]
		}
		// configgrpc takes all before the port as the host and refuses it ("address
		// user:PASSWORD@host:4317: too many colons in address"), printing the password at
		// validate; user@host was refused as no host name, without saying why.
		return fmt.Errorf("%q has a user or password before its host, which an OTLP/gRPC endpoint cannot carry; write the backend's host and port alone, such as %s%s, and send the credentials with the exporter's auth (bearertokenauth, as OTLP_TOKEN) or headers", urlpass.Redact(a), scheme, host)
	}
	if strings.TrimSpace(target) == "" {
		return fmt.Errorf("%q has no host or port; write the backend's host and port, such as %sbackend.example.com:4317", a, scheme)
	}
	if _, err := strconv.Atoi(target); err == nil {
		return fmt.Errorf("%q is a port alone; write the backend's host and port, such as %sbackend.example.com:%s", a, scheme, target)
	}
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) && ae.Err == "missing port in address" {
			return fmt.Errorf("%q has no port; write it as host:port, such as %s%s:4317 (OTLP/gRPC's usual port)", a, scheme, target)
		}
		return nil
	}
	if err := validHost(a, host); err != nil {
		return err
	}
	if n, err := strconv.Atoi(port); err == nil && (n < 1 || n > 65535) {
		return fmt.Errorf("%q: port %d is outside 1 to 65535; give the port of the backend", a, n)
	}
	return nil
}

// httpURL reports why the OTLP/HTTP exporter's endpoint a cannot be sent to: not an http:// or
// https:// URL with a host, its port beyond 65535. Without a scheme, "backend:4318" is a URL of
// scheme "backend", which the exporter takes, and every request fails ("unsupported protocol
// scheme").
func httpURL(a string) error {
	u, err := url.Parse(a)
	shown := urlpass.Redact(a) // a password in the URL is not printed
	port := strings.TrimPrefix(a, ":")
	_, portErr := strconv.Atoi(port)
	switch {
	case portErr == nil:
		// "write http://4318" would make the port a host name.
		return fmt.Errorf("%q is a port alone; write the backend's URL with its host, such as http://backend.example.com:%s or https://backend.example.com:%s", a, port, port)
	case !strings.Contains(a, "://"):
		return fmt.Errorf("%q has no scheme; write http://%s or https://%s", shown, shown, shown)
	case err != nil && urlpass.Pasted(a):
		// url.Parse's error quotes the host it read, user:PASSWORD's first part.
		return fmt.Errorf("%q: its user or password holds a /, ? or #, which ends the host of a URL; write each percent-encoded (/ as %%2F, ? as %%3F, # as %%23)", shown)
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which holds the password
		}
		return fmt.Errorf("%q is not a URL (%v); write it as http://host:port or https://host[:port]", shown, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q: the scheme is %q, where the exporter speaks http or https; write http:// or https://", u.Redacted(), u.Scheme)
	case u.Hostname() == "":
		return fmt.Errorf("%q has no host; write it as %s://host:port", u.Redacted(), u.Scheme)
	}
	if err := validHost(u.Redacted(), u.Hostname()); err != nil {
		return err
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%q: port %s is outside 1 to 65535; give the port of the backend", u.Redacted(), p)
		}
	}
	return nil
}

// validHost reports why host, in the address a, is neither empty, an IP address nor a host name
// (labels of letters, digits, hyphens and underscores, joined by dots).
func validHost(a, host string) error {
	if host == "" {
		return nil
	}
	ip, _, _ := strings.Cut(host, "%") // an IPv6 address's zone
	if net.ParseIP(ip) != nil {
		return nil
	}
	name := strings.TrimSuffix(host, ".")
	ok := len(name) > 0 && len(name) <= 253
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			ok = false
		}
		for _, c := range label {
			if !(c == '-' || c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
				ok = false
			}
		}
	}
	if !ok {
		return fmt.Errorf("%q: %q is not a host name or an IP address; give the host's name or address", a, host)
	}
	return nil
}

// errText is err's text without the address net's errors repeat: "too many colons".
func errText(err error) string {
	var ae *net.AddrError
	if errors.As(err, &ae) {
		return ae.Err
	}
	return err.Error()
}
