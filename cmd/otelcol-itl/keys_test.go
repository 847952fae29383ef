package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"
	"gopkg.in/yaml.v3"
)

// TestKeyTyposExplained: a misspelt key of a component this distribution holds but did not write,
// which the collector refuses naming a Go type ("'configgrpc.ServerConfig' has invalid keys:
// max_recv_msg_sise_mib"), is shown with its place in the file and the setting it likely
// misspells; so is one at the top level and in a pipeline. A misspelt key of ours already says
// both (its Unmarshal's message), and a good configuration gets no note.
func TestKeyTyposExplained(t *testing.T) {
	const head = "Where those keys are (each with the setting it likely misspells):"
	base := `
receivers: {otlp: {protocols: {grpc: {endpoint: 127.0.0.1:4317}}}}
processors: {batch: {}, itl: {}}
exporters: {debug: {}, otlp_grpc: {endpoint: "backend:4317", sending_queue: {queue_size: 10}}}
service: {pipelines: {traces: {receivers: [otlp], processors: [itl, batch], exporters: [debug, otlp_grpc]}}}
`
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"a receiver's setting, within an optional protocol", "endpoint: 127.0.0.1:4317}", "endpoint: 127.0.0.1:4317, max_recv_msg_sise_mib: 4}",
			"receivers::otlp::protocols::grpc::max_recv_msg_sise_mib: not a setting; did you mean max_recv_msg_size_mib?"},
		{"a processor's setting", "batch: {}", "batch: {send_batch_sise: 5}",
			"processors::batch::send_batch_sise: not a setting; did you mean send_batch_size?"},
		{"an exporter's squashed client setting", `endpoint: "backend:4317",`, `endpont: "backend:4317",`,
			"exporters::otlp_grpc::endpont: not a setting; did you mean endpoint?"},
		{"a nested section of an exporter", "queue_size: 10", "queue_sise: 10",
			"exporters::otlp_grpc::sending_queue::queue_sise: not a setting; did you mean queue_size?"},
		{"a top-level section", "\nexporters:", "\nexporter:",
			"  exporter: not a setting; did you mean exporters?"},
		{"a pipeline's list", "processors: [itl", "processor: [itl",
			"service::pipelines::traces::processor: not a setting; did you mean processors?"},
		{"the collector's telemetry", "service: {", "service: {telemetry: {metric: {level: none}}, ",
			"service::telemetry::metric: not a setting; did you mean metrics?"},
		{"the collector's logs", "service: {", "service: {telemetry: {logs: {levle: info}}, ",
			"service::telemetry::logs::levle: not a setting; did you mean level?"},
		{"a telemetry reader, in a list", "service: {", "service: {telemetry: {metrics: {readers: [{pull: {exporter: {prometheus: {hots: 127.0.0.1, port: 8888}}}}]}}, ",
			"service::telemetry::metrics::readers[0]::pull::exporter::prometheus::hots: not a setting; did you mean host?"},
		{"nothing near: the settings there", "batch: {}", "batch: {flush_every: 5}",
			"processors::batch::flush_every: not a setting; the settings there are metadata_cardinality_limit, metadata_keys, send_batch_max_size, send_batch_size, timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(base, tc.from) {
				t.Fatalf("the base configuration has no %q", tc.from)
			}
			out := validateConfig(t, strings.Replace(base, tc.from, tc.to, 1))
			if !strings.Contains(out, "has invalid keys") || !strings.Contains(out, head+"\n") || !strings.Contains(out, tc.want) {
				t.Errorf("want the collector's error, then %q:\n%s", tc.want, out)
			}
			if n := strings.Count(out, "not a setting"); n != 1 {
				t.Errorf("%d keys noted, want the one misspelt:\n%s", n, out)
			}
		})
	}
	t.Run("ours", func(t *testing.T) {
		out := validateConfig(t, strings.Replace(base, "itl: {}", "itl: {stall_treshold: 5s}", 1))
		if !strings.Contains(out, "stall_treshold: not a setting; did you mean stall_threshold?") || strings.Contains(out, head) {
			t.Errorf("want the processor's own message alone:\n%s", out)
		}
	})
	t.Run("good", func(t *testing.T) {
		if out := validateConfig(t, base); strings.Contains(out, head) || strings.Contains(out, "Error") {
			t.Errorf("a good configuration:\n%s", out)
		}
	})
}

// validateConfig runs otelcol-itl validate on conf and returns what it printed.
func validateConfig(t *testing.T, conf string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := otelcolItl(t, nil, "validate", "--config", path)
	return out
}

// TestWalkSettings: the rules of the decoder that walk follows, on types of its own: a key is a
// field's mapstructure tag, case-sensitive, or its Go name without one; a squashed struct's keys
// are its parent's; a ",remain" field takes any key but its neighbours' own; "-" and unexported
// fields take none; a pointer is what it points to; a list of structs' items are judged each by
// its index; a map's keys, and a list of values', are not.
func TestWalkSettings(t *testing.T) {
	type inner struct {
		Size int `mapstructure:"size"`
	}
	type squashed struct {
		Endpoint string `mapstructure:"endpoint"`
	}
	type cfg struct {
		squashed `mapstructure:",squash"`
		Name     string            `mapstructure:"name"`
		Untagged int               // its key is "Untagged"
		Skipped  int               `mapstructure:"-"`
		Inner    *inner            `mapstructure:"inner"`
		Labels   map[string]string `mapstructure:"labels"`
		Items    []inner           `mapstructure:"items"`
		Tags     []string          `mapstructure:"tags"`
		hidden   int               //nolint:unused // a field the decoder cannot set
	}
	type rest struct {
		Name  string         `mapstructure:"name"`
		Inner inner          `mapstructure:"inner"`
		Rest  map[string]any `mapstructure:",remain"`
	}
	_ = cfg{}.hidden
	m := map[string]any{
		"endpoint": "x", "name": "n", "Untagged": 1, "labels": map[string]any{"anything": "v"},
		"Name": "wrong case", "untagged": 2, "Skipped": 3, "hidden": 4,
		"inner": map[string]any{"size": 1, "sise": 2},
		"items": []any{map[string]any{"size": 1}, 5, map[string]any{"sise": 1}}, "tags": []any{"a", map[string]any{"b": 1}},
	}
	var got []string
	for _, tp := range walk(reflect.TypeOf(&cfg{}), m, "c") {
		got = append(got, tp.key)
	}
	want := []string{"c::Name", "c::Skipped", "c::hidden", "c::inner::sise", "c::items[2]::sise", "c::untagged"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("walk found %q, want %q", got, want)
	}
	if found := walk(reflect.TypeOf(rest{}), map[string]any{"name": "n", "other": 1}, "r"); len(found) != 0 {
		t.Errorf("a struct with a ,remain field takes any key; walk found %v", found)
	}
	// The settings beside a ",remain" field are still decoded as theirs: a key no setting of one
	// of them is refused (telemetry's pull exporter, its prometheus).
	if found := walk(reflect.TypeOf(rest{}), map[string]any{"other": 1, "inner": map[string]any{"sise": 1}}, "r"); len(found) != 1 || found[0].key != "r::inner::sise" {
		t.Errorf("walk found %+v, want r::inner::sise alone", found)
	}
}

// TestManifestGivenAsConfig: the ocb manifest beside the configurations, given to --config, is
// named as one, where the collector printed six errors about lists and unknown keys.
func TestManifestGivenAsConfig(t *testing.T) {
	out, code := otelcolItl(t, nil, "validate", "--config", filepath.Join("..", "..", "exporter-config", "builder-config.yaml"))
	if code != 1 || !strings.Contains(out, "This file is an ocb manifest") || strings.Contains(out, "Where those keys are") {
		t.Errorf("exit status %d; want the manifest named, and no misspelt keys:\n%s", code, out)
	}
}

// TestShippedConfigsHaveNoTypos: every setting of every shipped configuration is one that walk
// finds in its component's configuration type, so that the rules walk follows (optional
// sections, squashed structs, maps of pipelines, the service's own) are the decoder's on real
// files: a setting walk cannot find would be called misspelt beside an error about another key.
// Hostile shapes (a section that is a list, a component that is a number, a component type not
// built in, deep nesting) are noted or passed over, never a panic.
func TestShippedConfigsHaveNoTypos(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "exporter-config", "*.yaml"))
	if err != nil || len(files) < 8 {
		t.Fatalf("%d shipped configurations found (%v)", len(files), err)
	}
	for _, f := range files {
		if filepath.Base(f) == "builder-config.yaml" {
			continue // the ocb manifest: TestManifestGivenAsConfig
		}
		var m map[string]any
		b, err := os.ReadFile(f)
		if err == nil {
			err = yaml.Unmarshal(b, &m)
		}
		if err != nil {
			t.Fatal(err)
		}
		k := &keyTypos{}
		if err := k.Convert(context.Background(), confmap.NewFromStringMap(m)); err != nil {
			t.Fatal(err)
		}
		if len(k.found) != 0 || k.manifest {
			t.Errorf("%s: walk takes these settings for misspellings: %+v", f, k.found)
		}
	}
	deep := map[string]any{"x": 1}
	for range 100 {
		deep = map[string]any{"grpc": deep}
	}
	for _, conf := range []map[string]any{
		{"receivers": []any{"otlp"}},
		{"receivers": map[string]any{"otlp": 5, "no_such_type": map[string]any{"a": 1}, "Bad Type!": map[string]any{}, "": nil}},
		{"receivers": map[string]any{"otlp": map[string]any{"protocols": deep}}},
		{"exporters": map[string]any{"otlp_grpc/a/b": map[string]any{"sending_queue": []any{1}}}},
		{"service": map[string]any{"pipelines": map[string]any{"traces": []any{}, "metrics": map[string]any{"receiver": 1}}}},
		{"service": "text"},
		nil,
	} {
		k := &keyTypos{}
		if err := k.Convert(context.Background(), confmap.NewFromStringMap(conf)); err != nil {
			t.Errorf("%v: %v", conf, err)
		}
	}
}

// TestReferencesExplained: a pipeline that names a component the configuration does not define
// (the collector says only `references exporter "debug/spams" which is not configured`) is
// followed by the one of its kind it likely misspells, a connector among a pipeline's receivers
// and exporters too, or by those of its kind there are.
func TestReferencesExplained(t *testing.T) {
	const head = "Components named but not defined:"
	base := `
receivers: {otlp: {protocols: {grpc: {endpoint: 127.0.0.1:4317}}}}
processors: {batch: {}}
connectors: {itl_metrics: {}}
exporters: {debug/spans: {}, debug/figures: {}}
service: {pipelines: {traces: {receivers: [otlp], processors: [batch], exporters: [itl_metrics, debug/spans]},
  metrics: {receivers: [itl_metrics], exporters: [debug/figures]}}}
`
	for _, tc := range []struct{ name, from, to, want string }{
		{"an exporter", "[itl_metrics, debug/spans]", "[itl_metrics, debug/spams]", `  exporter "debug/spams": did you mean debug/spans?`},
		{"a receiver", "receivers: [otlp]", "receivers: [otpl]", `  receiver "otpl": did you mean otlp?`},
		{"a processor", "processors: [batch]", "processors: [bacth]", `  processor "bacth": did you mean batch?`},
		{"a connector as receiver", "receivers: [itl_metrics]", "receivers: [itl_metricz]", `  receiver "itl_metricz": did you mean itl_metrics?`},
		{"none near", "receivers: [otlp]", "receivers: [zipkin]", `  receiver "zipkin": the receivers defined are otlp, itl_metrics; define it under receivers, or name one of those`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := validateConfig(t, strings.Replace(base, tc.from, tc.to, 1))
			if !strings.Contains(out, "which is not configured") || !strings.Contains(out, head+"\n"+tc.want) {
				t.Errorf("want the collector's error, then %q:\n%s", tc.want, out)
			}
		})
	}
	if out := validateConfig(t, base); strings.Contains(out, head) || strings.Contains(out, "Error") {
		t.Errorf("a good configuration:\n%s", out)
	}
}
