package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusexporter"
	"gopkg.in/yaml.v3"

	"github.com/otelitl/itl/collector/itlmetricsconnector"
)

// The rules every shipped configuration keeps (issue 13). Each test reads the files as YAML, with
// every ${env:NAME:-default} taken at its default and ${env:NAME:?...} left as written, so that a
// rule is judged on what a user gets without setting anything optional.

// maxMessageMiB is the most a receiver may accept in one message: enough for a default OTel SDK
// batch (512 spans) of long replies (5,000 chunks each make about 19 MiB in the compact encoding),
// and bounded, since each message is held whole while it is decoded.
const maxMessageMiB = 64

// backendLimit is the message size a backend accepts by default (gRPC's 4 MiB); every request an
// exporter sends must stay below it.
const backendLimit = 4 << 20

var (
	envDefault  = regexp.MustCompile(`\$\{env:([A-Za-z0-9_]+):-([^}]*)\}`)
	envRequired = regexp.MustCompile(`\$\{env:([A-Za-z0-9_]+):\?[^}]*\}`)
	envAny      = regexp.MustCompile(`\$\{env:([A-Za-z0-9_]+)((?::[-?])[^}]*)?\}`)
)

type shipped struct {
	path string
	raw  string         // the file as written
	cfg  map[string]any // parsed, optional variables at their defaults
}

func loadShipped(t *testing.T) []shipped {
	t.Helper()
	var out []shipped
	for _, f := range shippedConfigs(t) {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		resolved := envDefault.ReplaceAllString(string(raw), "$2")
		var cfg map[string]any
		if err := yaml.Unmarshal([]byte(resolved), &cfg); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, shipped{path: filepath.Base(f), raw: string(raw), cfg: cfg})
	}
	return out
}

// get walks a path of map keys; it returns nil when any is missing.
func get(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func str(v any) string {
	if v == nil {
		return ""
	}
	switch x := v.(type) {
	case string:
		return x
	case int:
		return strconv.Itoa(x)
	}
	return ""
}

func duration(v any) time.Duration {
	d, err := time.ParseDuration(str(v))
	if err != nil {
		return 0
	}
	return d
}

func number(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

func isLoopback(endpoint string) bool {
	host, _, err := net.SplitHostPort(endpoint)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// protocols returns every OTLP receiver protocol of a config: name -> settings.
func protocols(c shipped) map[string]map[string]any {
	out := map[string]map[string]any{}
	for rname, r := range asMap(c.cfg["receivers"]) {
		for proto, p := range asMap(get(r, "protocols")) {
			out[rname+"/"+proto] = asMap(p)
		}
	}
	return out
}

func typeOf(id string) string { return strings.SplitN(id, "/", 2)[0] }

// TestNonLoopbackReceiversAuthenticateClients: a receiver protocol that listens beyond loopback must
// both encrypt (TLS) and refuse unknown clients: a required client certificate or an authenticator.
// Before issue 13, gateway.yaml's OTLP/HTTP on 0.0.0.0:4318 took any client.
func TestNonLoopbackReceiversAuthenticateClients(t *testing.T) {
	for _, c := range loadShipped(t) {
		for name, p := range protocols(c) {
			if isLoopback(str(p["endpoint"])) {
				continue
			}
			if get(p, "tls", "cert_file") == nil {
				t.Errorf("%s: %s listens on %v without TLS", c.path, name, p["endpoint"])
			}
			ca := str(get(p, "tls", "client_ca_file"))
			caRequired := envRequired.MatchString(ca) || (ca != "" && !strings.Contains(ca, "${"))
			authn := str(get(p, "auth", "authenticator"))
			if !caRequired && authn == "" {
				t.Errorf("%s: %s listens on %v and accepts any client: require a client certificate (tls.client_ca_file) or set auth.authenticator", c.path, name, p["endpoint"])
			}
			if authn != "" {
				ext := asMap(get(c.cfg, "extensions", authn))
				if ext == nil {
					t.Errorf("%s: %s authenticates with %s, which the config does not define", c.path, name, authn)
				}
				if !listed(c.cfg, authn) {
					t.Errorf("%s: the authenticator %s is not in service.extensions", c.path, authn)
				}
				// itl_auth passes on the decisions of the authenticator it names: that one checks the token.
				if typeOf(authn) == "itl_auth" {
					authn = str(ext["authenticator"])
					if ext = asMap(get(c.cfg, "extensions", authn)); ext == nil || !listed(c.cfg, authn) {
						t.Errorf("%s: %s's itl_auth passes on %q, which the config does not define or list in service.extensions", c.path, name, authn)
					}
				}
				if typeOf(authn) == "bearertokenauth" && !envRequired.MatchString(str(ext["token"])) && ext["filename"] == nil {
					t.Errorf("%s: %s's token must come from a required variable (${env:NAME:?...}) or a file, got %q", c.path, authn, ext["token"])
				}
			}
		}
	}
}

func listed(cfg map[string]any, ext string) bool {
	l, _ := get(cfg, "service", "extensions").([]any)
	for _, e := range l {
		if e == ext {
			return true
		}
	}
	return false
}

// TestReceiversBoundTimeAndSize: every OTLP/HTTP receiver times out slow headers, slow requests and
// idle connections, and every receiver bounds its message size above gRPC's 4 MiB default (a
// default SDK batch of long replies is larger) but below maxMessageMiB. Before issue 13 no
// OTLP/HTTP receiver set a header timeout: a partial header stayed open for 100 s.
func TestReceiversBoundTimeAndSize(t *testing.T) {
	for _, c := range loadShipped(t) {
		for name, p := range protocols(c) {
			switch {
			case strings.HasSuffix(name, "/http"):
				for _, k := range [][]string{{"read_header_timeout"}, {"read_timeout"}, {"write_timeout"}, {"keepalive", "idle_timeout"}} {
					d := duration(get(p, k...))
					if d <= 0 || d > 5*time.Minute {
						t.Errorf("%s: %s: %s = %v; want a timeout above 0 and at most 5m", c.path, name, strings.Join(k, "."), get(p, k...))
					}
				}
				if d := duration(p["read_header_timeout"]); d > 30*time.Second {
					t.Errorf("%s: %s: read_header_timeout %v lets a client hold a connection with a partial header; at most 30s", c.path, name, d)
				}
				if n := number(p["max_request_body_size"]); n <= 4<<20 || n > maxMessageMiB<<20 {
					t.Errorf("%s: %s: max_request_body_size = %v; want above 4 MiB and at most %d MiB", c.path, name, p["max_request_body_size"], maxMessageMiB)
				}
			case strings.HasSuffix(name, "/grpc"):
				if n := number(p["max_recv_msg_size_mib"]); n <= 4 || n > maxMessageMiB {
					t.Errorf("%s: %s: max_recv_msg_size_mib = %v; want above 4 and at most %d", c.path, name, p["max_recv_msg_size_mib"], maxMessageMiB)
				}
				if number(p["max_concurrent_streams"]) <= 0 {
					t.Errorf("%s: %s: max_concurrent_streams is unbounded", c.path, name)
				}
				sp := get(p, "keepalive", "server_parameters")
				for _, k := range []string{"max_connection_idle", "max_connection_age", "time", "timeout"} {
					if d := duration(get(sp, k)); d <= 0 {
						t.Errorf("%s: %s: keepalive.server_parameters.%s is not set", c.path, name, k)
					}
				}
			default:
				t.Errorf("%s: %s: unknown protocol", c.path, name)
			}
		}
	}
}

// TestExportersBoundRequests: every exporter that pushes to a backend cuts its requests below the
// 4 MiB a backend accepts by default. Before issue 13 otlp.yaml sent each connector flush as one
// message, refused with ResourceExhausted past about 2,000 series.
func TestExportersBoundRequests(t *testing.T) {
	for _, c := range loadShipped(t) {
		for id, e := range asMap(c.cfg["exporters"]) {
			switch typeOf(id) {
			case "otlp", "otlp_grpc", "otlphttp", "otlp_http":
				q := get(e, "sending_queue")
				if get(q, "enabled") == false {
					t.Errorf("%s: %s: the sending queue is off, so nothing splits a large request", c.path, id)
				}
				b := get(q, "batch")
				if str(get(b, "sizer")) != "bytes" && str(get(b, "sizer")) != "items" {
					t.Errorf("%s: %s: sending_queue.batch.sizer = %v; want bytes", c.path, id, get(b, "sizer"))
				}
				if n := number(get(b, "max_size")); str(get(b, "sizer")) == "bytes" && (n <= 0 || n >= backendLimit) {
					t.Errorf("%s: %s: sending_queue.batch.max_size = %v; want above 0 and below %d bytes", c.path, id, get(b, "max_size"), backendLimit)
				}
			case "prometheus_remote_write":
				if n := number(get(e, "max_batch_size_bytes")); n <= 0 || n >= backendLimit {
					t.Errorf("%s: %s: max_batch_size_bytes = %v; want it set below %d", c.path, id, get(e, "max_batch_size_bytes"), backendLimit)
				}
			}
		}
	}
}

// TestQueuesOnDisk: the two tiers' configs (agent.yaml, gateway.yaml) keep their exporters'
// sending queues on disk (file_storage), so that a restart or a kill during an outage loses
// nothing; before, agent.yaml's was in memory and lost every span queued. A queue on disk retries
// until the backend is back (a time limit dropped what the disk held: agent.yaml's 5-minute
// default), is bounded in bytes (a bound in requests bounds no size: gateway.yaml's 5,000 requests
// of up to 32 MiB each), holds at least the largest message the receivers take (a larger request is
// refused every time), and no two configs default to one directory, so that an agent beside a
// gateway shares no queue file with it.
func TestQueuesOnDisk(t *testing.T) {
	tiers := map[string]bool{"agent.yaml": false, "gateway.yaml": false} // whether each has a queue on disk
	dirs := map[string]string{}                                          // file_storage default directory -> config
	for _, c := range loadShipped(t) {
		for id, ext := range asMap(c.cfg["extensions"]) {
			if typeOf(id) != "file_storage" {
				continue
			}
			dir := str(get(ext, "directory"))
			if other, ok := dirs[dir]; ok {
				t.Errorf("%s: extensions.%s.directory defaults to %q, as %s's does: two collectors on one host would share the queue's directory", c.path, id, dir, other)
			}
			dirs[dir] = c.path
		}
		var largest int64 // the largest message a receiver takes, in bytes
		for name, p := range protocols(c) {
			n := number(p["max_request_body_size"])
			if strings.HasSuffix(name, "/grpc") {
				n = number(p["max_recv_msg_size_mib"]) << 20
			}
			largest = max(largest, n)
		}
		for id, e := range asMap(c.cfg["exporters"]) {
			q := get(e, "sending_queue")
			if str(get(q, "storage")) == "" {
				continue
			}
			if _, ok := tiers[c.path]; ok {
				tiers[c.path] = true
			}
			if get(e, "retry_on_failure", "enabled") != true || str(get(e, "retry_on_failure", "max_elapsed_time")) != "0" {
				t.Errorf("%s: %s: a queue on disk with retry_on_failure %v; want enabled with max_elapsed_time: 0, or a request is dropped while the disk could hold it", c.path, id, get(e, "retry_on_failure"))
			}
			// A queue on disk takes each request as the receiver took it, up to the largest
			// message, before the batcher cuts it: a bound in requests (the default sizer) or in
			// items (spans) bounds no size on disk; gateway.yaml's 5,000 requests could weigh
			// 156 GiB.
			if sizer := str(get(q, "sizer")); sizer != "bytes" {
				if sizer == "" {
					sizer = "requests, the default"
				}
				t.Errorf("%s: %s: a queue on disk with sizer %s; want sizer: bytes, or queue_size bounds no size on the disk (a request may be %d bytes)", c.path, id, sizer, largest)
			}
			if str(get(q, "sizer")) == "bytes" && number(get(q, "queue_size")) < largest {
				t.Errorf("%s: %s: sending_queue.queue_size %v bytes is below the %d bytes a receiver takes in one message, which the queue would refuse every time", c.path, id, get(q, "queue_size"), largest)
			}
		}
	}
	for path, onDisk := range tiers {
		if !onDisk {
			t.Errorf("%s has no exporter whose sending queue is on disk (sending_queue.storage): a restart during an outage loses what it queued", path)
		}
	}
}

// TestSecretsAndEndpointsAreRequired: a variable holding a secret, and every variable without a
// default that an exporter or a receiver needs, is written ${env:NAME:?message}, and resolving
// the config without it fails naming the variable. Before issue 13 an unset OTLP_TOKEN validated
// and sent "Bearer " with nothing after it.
func TestSecretsAndEndpointsAreRequired(t *testing.T) {
	for _, c := range loadShipped(t) {
		required := map[string]bool{}
		for _, line := range strings.Split(c.raw, "\n") {
			code, _, _ := strings.Cut(line, " #")
			if strings.HasPrefix(strings.TrimSpace(code), "#") {
				continue
			}
			for _, m := range envAny.FindAllStringSubmatch(code, -1) {
				name, op := m[1], m[2]
				switch {
				case strings.HasPrefix(op, ":?"):
					required[name] = true
				case op == "":
					t.Errorf("%s: ${env:%s} has neither a default nor a required mark: an unset %s gives an empty value; write ${env:%s:?message} or ${env:%s:-default}", c.path, name, name, name, name)
				case secretName.MatchString(name) && strings.HasPrefix(op, ":-"):
					t.Errorf("%s: the secret %s has a default; secrets must be required (${env:%s:?message})", c.path, name, name)
				}
			}
		}
		for name := range required {
			t.Run(c.path+"/"+name, func(t *testing.T) {
				setConfigEnv(t)
				for _, unset := range []bool{true, false} {
					if unset {
						t.Setenv(name, "x") // registers the restore; then unset it
						os.Unsetenv(name)
					} else {
						t.Setenv(name, "")
					}
					err := dryRun(t, "file:"+filepath.Join("..", "..", "exporter-config", c.path))
					if err == nil || !strings.Contains(err.Error(), "environment variable "+name+" is") {
						t.Errorf("with %s unset=%v: error %v, want one naming %s", name, unset, err, name)
					}
				}
			})
		}
		// All of them missing at once: one error names each, so that a config needing several is
		// not started once per variable to learn them.
		t.Run(c.path+"/all", func(t *testing.T) {
			setConfigEnv(t)
			for name := range required {
				t.Setenv(name, "")
			}
			err := dryRun(t, "file:"+filepath.Join("..", "..", "exporter-config", c.path))
			if n := len(required); n > 1 && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d environment variables this configuration needs are missing:", n))) {
				t.Errorf("with all %d unset: %v", n, err)
			}
			for name := range required {
				if err == nil || !strings.Contains(err.Error(), "environment variable "+name+" is empty") {
					t.Errorf("with all unset: error %v, want it to name %s", err, name)
				}
			}
		})
	}
}

// TestDebugLogsNoSpanAttributes: a debug exporter that receives spans logs counts only (verbosity
// basic): at normal or detailed it prints every span attribute, prompts and completions included.
func TestDebugLogsNoSpanAttributes(t *testing.T) {
	for _, c := range loadShipped(t) {
		for pname, p := range asMap(get(c.cfg, "service", "pipelines")) {
			if typeOf(pname) != "traces" {
				continue
			}
			ex, _ := get(p, "exporters").([]any)
			for _, e := range ex {
				id := str(e)
				if typeOf(id) != "debug" {
					continue
				}
				if v := str(get(c.cfg, "exporters", id, "verbosity")); v != "basic" {
					t.Errorf("%s: %s logs the spans of pipeline %s at verbosity %q: every attribute, prompts included; use basic", c.path, id, pname, v)
				}
			}
		}
	}
}

// TestNoDeprecatedTypeNames: every component of a shipped configuration is named by its type, not
// by a deprecated alias the collector still accepts with a warning at every start
// (prometheusremotewrite for prometheus_remote_write, otlp for otlp_grpc).
func TestNoDeprecatedTypeNames(t *testing.T) {
	for _, c := range loadShipped(t) {
		checkTypeNames(t, c.path, c.cfg)
	}
}

// checkTypeNames fails t for each component of cfg that otelcol-itl does not have, or that cfg
// names by a deprecated alias.
func checkTypeNames(t *testing.T, path string, cfg map[string]any) {
	t.Helper()
	f, err := Components()
	if err != nil {
		t.Fatal(err)
	}
	// Each kind's names, with the type each stands for: an alias's factory has another type.
	types := map[string]map[string]string{}
	add := func(kind string, name, typ fmt.Stringer) {
		if types[kind] == nil {
			types[kind] = map[string]string{}
		}
		types[kind][name.String()] = typ.String()
	}
	for k, v := range f.Receivers {
		add("receivers", k, v.Type())
	}
	for k, v := range f.Processors {
		add("processors", k, v.Type())
	}
	for k, v := range f.Connectors {
		add("connectors", k, v.Type())
	}
	for k, v := range f.Exporters {
		add("exporters", k, v.Type())
	}
	for k, v := range f.Extensions {
		add("extensions", k, v.Type())
	}
	for kind, known := range types {
		section, _ := cfg[kind].(map[string]any)
		for id := range section {
			name, _, _ := strings.Cut(id, "/")
			switch typ, ok := known[name]; {
			case !ok:
				t.Errorf("%s: %s.%s: %q is not a component of otelcol-itl", path, kind, id, name)
			case typ != name:
				t.Errorf("%s: %s.%s: %q is a deprecated alias, which the collector warns about at every start; write %s", path, kind, id, name, typ)
			}
		}
	}
}

// TestREADMEConfigs: every whole configuration in a README (a YAML block with a service section)
// loads into the distribution, with the variables it reads set, and names its components by their
// types, as a user who copies it expects.
func TestREADMEConfigs(t *testing.T) {
	t.Setenv("TRACES_ENDPOINT", "127.0.0.1:14317")
	t.Setenv("METRICS_ENDPOINT", "http://127.0.0.1:14318")
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```")
	found := 0
	for _, path := range []string{"README.md", "collector/itlprocessor/README.md", "collector/itlmetricsconnector/README.md"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", path))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range block.FindAllStringSubmatch(string(raw), -1) {
			var cfg map[string]any
			if yaml.Unmarshal([]byte(m[1]), &cfg) != nil || cfg["service"] == nil {
				continue // a fragment, such as the ocb manifest's entries
			}
			found++
			where := fmt.Sprintf("%s, the configuration beginning %.40q", path, m[1])
			checkTypeNames(t, where, cfg)
			if err := dryRun(t, "yaml:"+m[1]); err != nil {
				t.Errorf("%s: %v", where, err)
			}
		}
	}
	if found < 2 {
		t.Fatalf("found %d whole configurations in the READMEs, want the processor's and the connector's", found)
	}
}

// TestEveryVariableDocumented: every variable a shipped configuration reads is named in the
// README, so that a user can learn what each one sets without reading the files.
func TestEveryVariableDocumented(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range loadShipped(t) {
		for _, line := range strings.Split(c.raw, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			for _, m := range envAny.FindAllStringSubmatch(line, -1) {
				if !strings.Contains(string(readme), "`"+m[1]+"`") {
					t.Errorf("%s reads %s, which README.md does not name", c.path, m[1])
				}
			}
		}
	}
}

// TestConnectorKeepsSeriesLongerThanTheScrapeEndpoint: where a cumulative itl_metrics connector
// feeds a Prometheus scrape endpoint, the connector keeps an idle series longer than the exporter
// shows it. Otherwise a model idle for between the two expirations comes back with its counters
// restarted from zero under the value the endpoint still shows: 3 generations, then 4 more, read
// 3 then 4, one more to Prometheus, with no reset to see (prometheus.yaml did so, the connector
// at its default 5m against the exporter's 10m).
func TestConnectorKeepsSeriesLongerThanTheScrapeEndpoint(t *testing.T) {
	connDefault := itlmetricsconnector.NewFactory().CreateDefaultConfig().(*itlmetricsconnector.Config).MetricsExpiration
	expDefault := prometheusexporter.NewFactory().CreateDefaultConfig().(*prometheusexporter.Config).MetricExpiration
	checked := 0
	for _, c := range loadShipped(t) {
		for eid, e := range asMap(c.cfg["exporters"]) {
			if typeOf(eid) != "prometheus" {
				continue
			}
			shown := expDefault
			if v := get(e, "metric_expiration"); v != nil {
				shown = duration(v)
			}
			for cid, conn := range asMap(c.cfg["connectors"]) {
				if typeOf(cid) != "itl_metrics" || str(get(conn, "aggregation_temporality")) == "delta" {
					continue
				}
				checked++
				kept := connDefault
				if v := get(conn, "metrics_expiration"); v != nil {
					kept = duration(v)
				}
				if kept != 0 && kept <= shown {
					t.Errorf("%s: connectors.%s.metrics_expiration %v is not longer than exporters.%s.metric_expiration %v: a series idle between the two restarts from zero under the value the endpoint still shows", c.path, cid, kept, eid, shown)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no shipped configuration feeds a Prometheus exporter from a cumulative connector: prometheus.yaml moved?")
	}
}

// TestAgentsForwardSpansOnly: a shipped configuration without the itl_metrics connector
// (agent.yaml, in front of gateway.yaml) forwards spans as they came: no itl processor, whose
// annotations the gateway's would make again, and no metrics pipeline, whose only source would be
// another collector's connector, counting the same generations a second time.
func TestAgentsForwardSpansOnly(t *testing.T) {
	agents := 0
	for _, c := range loadShipped(t) {
		connector := false
		for _, p := range asMap(get(c.cfg, "service", "pipelines")) {
			exps, _ := get(p, "exporters").([]any)
			for _, x := range exps {
				connector = connector || typeOf(str(x)) == "itl_metrics"
			}
		}
		if connector {
			continue
		}
		agents++
		for pname, p := range asMap(get(c.cfg, "service", "pipelines")) {
			if typeOf(pname) != "traces" {
				t.Errorf("%s runs no itl_metrics connector but has the pipeline %s: an agent forwards spans only", c.path, pname)
			}
			procs, _ := get(p, "processors").([]any)
			for _, x := range procs {
				if typeOf(str(x)) == "itl" {
					t.Errorf("%s runs the itl processor (%s) without the connector: the gateway's processor does its work", c.path, pname)
				}
			}
		}
	}
	if agents == 0 {
		t.Error("no shipped configuration forwards spans without the connector: agent.yaml moved?")
	}
}

// TestExcludedScopesFromOneVariable: every shipped configuration that runs our components reads
// excluded_scopes for both from ITL_EXCLUDED_SCOPES, empty by default, so that one variable counts
// a request that two instrumentations describe once (README, "Two instrumentations on one
// request"): a processor and a connector that excluded different scopes would annotate spans the
// metrics leave out, or the other way round. And the variable works: a YAML list in it reaches
// both components of prometheus.yaml, and a name padded with a space is refused naming the key
// and the variable.
func TestExcludedScopesFromOneVariable(t *testing.T) {
	const want = "${env:ITL_EXCLUDED_SCOPES:-[]}"
	checked := 0
	for _, c := range loadShipped(t) {
		var raw map[string]any
		if err := yaml.Unmarshal([]byte(c.raw), &raw); err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		for _, kind := range []string{"processors", "connectors"} {
			for id, comp := range asMap(raw[kind]) {
				if typeOf(id) != "itl" && typeOf(id) != "itl_metrics" {
					continue
				}
				checked++
				if got := str(get(comp, "excluded_scopes")); got != want {
					t.Errorf("%s: %s.%s.excluded_scopes is %q, want %s", c.path, kind, id, got, want)
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d itl and itl_metrics components in the shipped configurations", checked)
	}

	config := filepath.Join("..", "..", "exporter-config", "prometheus.yaml")
	out, code := otelcolItl(t, []string{`ITL_EXCLUDED_SCOPES=["@traceloop/instrumentation-openai", opentelemetry.instrumentation.openai.v1]`}, "print-config", "--config", config)
	if code != 0 {
		t.Fatalf("print-config: exit status %d\n%s", code, out)
	}
	list := "excluded_scopes:\n            - '@traceloop/instrumentation-openai'\n            - opentelemetry.instrumentation.openai.v1\n"
	if n := strings.Count(out, list); n != 1 {
		t.Errorf("the list reached %d components, want 1 (the connector; prometheus.yaml has no itl processor):\n%s", n, out)
	}
	out, code = otelcolItl(t, []string{"ITL_EXCLUDED_SCOPES=a, b"}, "validate", "--config", config)
	for _, w := range []string{`excluded_scopes[1]: " b" has spaces at an end`, `ITL_EXCLUDED_SCOPES="a, b"`} {
		if code != 1 || !strings.Contains(out, w) {
			t.Errorf("ITL_EXCLUDED_SCOPES=a, b: exit status %d, want 1 and %q in:\n%s", code, w, out)
		}
	}
	// A name that begins with @ outside quotes: YAML cannot read the list, and the collector would
	// take the text, brackets and all, as a name that excludes nothing.
	out, code = otelcolItl(t, []string{"ITL_EXCLUDED_SCOPES=[@traceloop/instrumentation-openai]"}, "validate", "--config", config)
	for _, w := range []string{`excluded_scopes: "[@traceloop/instrumentation-openai]" is a list that YAML could not read`, `write ["@traceloop/instrumentation-openai"]`, `ITL_EXCLUDED_SCOPES="[@traceloop/instrumentation-openai]"`} {
		if code != 1 || !strings.Contains(out, w) {
			t.Errorf("ITL_EXCLUDED_SCOPES=[@traceloop/instrumentation-openai]: exit status %d, want 1 and %q in:\n%s", code, w, out)
		}
	}
	// Names in quotes without the brackets: the collector keeps the quotes in each name.
	out, code = otelcolItl(t, []string{`ITL_EXCLUDED_SCOPES="@traceloop/instrumentation-openai","com.anthropic.sdk.typescript"`}, "validate", "--config", config)
	for _, w := range []string{`has names in quotes outside a list's brackets`, `write ["@traceloop/instrumentation-openai", "com.anthropic.sdk.typescript"]`} {
		if code != 1 || !strings.Contains(out, w) {
			t.Errorf("ITL_EXCLUDED_SCOPES with quoted names and no brackets: exit status %d, want 1 and %q in:\n%s", code, w, out)
		}
	}
}
