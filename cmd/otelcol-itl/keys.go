package main

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/service"

	"github.com/otelitl/itl/internal/suggest"
)

// keyTypos explains the collector's own error for a key that is no setting of a component it
// did not write (the OTLP receiver, the batch processor, the exporters): "'configgrpc.ServerConfig'
// has invalid keys: max_recv_msg_sise_mib" names a Go type, not where the key is in the file, nor
// what it was meant to be. Its converter reads every component's settings against the fields of
// the component's configuration type (and the collector's telemetry against the telemetry
// factory's); main prints, after such an error, each key the error names
// with its place and the setting it most likely misspells. It never refuses a configuration
// itself: the collector's decoding decides, and a type that reads its keys in a way of its own
// (an Unmarshal method) would mislead a check of field names into refusing good keys. Our
// components' keys are refused by their own Unmarshal, which names the key and the fix already.
type keyTypos struct {
	mu       sync.Mutex
	found    []typo
	manifest bool                // the configuration is an ocb manifest
	ids      map[string][]string // the components configured, by section ("exporters")
}

// typo is a key that is no setting of the configuration type where it stands.
type typo struct {
	key  string   // its place, "receivers::otlp::protocols::grpc::max_recv_msg_sise_mib"
	name string   // the key itself, as the collector's error names it
	here []string // the settings where it stands
}

func (k *keyTypos) converter() confmap.ConverterFactory {
	return confmap.NewConverterFactory(func(confmap.ConverterSettings) confmap.Converter { return k })
}

// sections are the configuration's top-level keys, with the components' factories of each kind.
var sections = []string{"receivers", "processors", "exporters", "connectors", "extensions", "service"}

// Convert notes the keys that are no setting; it changes nothing and refuses nothing.
func (k *keyTypos) Convert(_ context.Context, conf *confmap.Conf) error {
	var found []typo
	top := conf.ToStringMap()
	// An ocb manifest (builder-config.yaml): a dist section, and components as lists of Go modules.
	_, dist := top["dist"].(map[string]any)
	_, listed := top["receivers"].([]any)
	_, listedExporters := top["exporters"].([]any)
	manifest := dist && (listed || listedExporters)
	for _, key := range sortedKeys(top) {
		if !slices.Contains(sections, key) {
			found = append(found, typo{key: key, name: key, here: sections})
		}
	}
	if f, err := Components(); err == nil {
		defaults := map[string]func(component.Type) component.Config{
			"receivers":  func(t component.Type) component.Config { return defaultConfig(f.Receivers[t]) },
			"processors": func(t component.Type) component.Config { return defaultConfig(f.Processors[t]) },
			"exporters":  func(t component.Type) component.Config { return defaultConfig(f.Exporters[t]) },
			"connectors": func(t component.Type) component.Config { return defaultConfig(f.Connectors[t]) },
			"extensions": func(t component.Type) component.Config { return defaultConfig(f.Extensions[t]) },
		}
		for _, section := range sections[:5] {
			components := asMap(top[section])
			for _, id := range sortedKeys(components) {
				typ, _, _ := strings.Cut(id, "/")
				t, err := component.NewType(typ)
				if err != nil {
					continue // the collector names a bad component id
				}
				if cfg := defaults[section](t); cfg != nil {
					found = append(found, walk(reflect.TypeOf(cfg), asMap(components[id]), section+"::"+id)...)
				}
			}
		}
		// The collector's own telemetry (logs, metrics and their readers), whose type the
		// service's configuration leaves to the telemetry factory.
		if f.Telemetry != nil {
			found = append(found, walk(reflect.TypeOf(f.Telemetry.CreateDefaultConfig()), asMap(asMap(top["service"])["telemetry"]), "service::telemetry")...)
		}
	}
	found = append(found, walk(reflect.TypeOf(service.Config{}), asMap(top["service"]), "service")...)
	k.mu.Lock()
	ids := map[string][]string{}
	for _, section := range sections[:5] {
		ids[section] = sortedKeys(asMap(top[section]))
	}
	k.found, k.manifest, k.ids = found, manifest, ids
	k.mu.Unlock()
	return nil
}

// defaultConfig is a factory's default configuration, or nil for no factory (a component type
// this distribution does not hold, which the collector names).
func defaultConfig(f interface{ CreateDefaultConfig() component.Config }) component.Config {
	if f == nil || reflect.ValueOf(f).IsNil() {
		return nil
	}
	return f.CreateDefaultConfig()
}

// walk returns the keys of m that are no setting of the type t, at path, and those of the
// settings within it that are structs of their own, or lists of them.
func walk(t reflect.Type, m map[string]any, path string) []typo {
	optional := isOptional(underlying1(t))
	t = underlying(t)
	if m == nil {
		return nil
	}
	if t.Kind() == reflect.Map && underlying(t.Elem()).Kind() == reflect.Struct {
		// A map of settings' structs by any name (service::pipelines, by pipeline).
		var found []typo
		for _, key := range sortedKeys(m) {
			found = append(found, walk(t.Elem(), asMap(m[key]), path+"::"+key)...)
		}
		return found
	}
	if t.Kind() != reflect.Struct {
		return nil // another map, a list or a value: any key, or the decoder's to judge
	}
	fields := map[string]reflect.Type{}
	// A ",remain" field takes every key that is no setting; the settings beside it are still
	// decoded as theirs (telemetry's pull exporter: prometheus and its keys).
	anyKey := !settingsOf(t, fields)
	if _, ok := fields["enabled"]; optional && !ok {
		fields["enabled"] = reflect.TypeFor[bool]() // an optional section's own: enabled: false turns it off
	}
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	slices.Sort(names)
	var found []typo
	for _, key := range sortedKeys(m) {
		ft, ok := fields[key]
		if !ok {
			if !anyKey {
				found = append(found, typo{key: path + "::" + key, name: key, here: names})
			}
			continue
		}
		if lt := underlying(ft); lt.Kind() == reflect.Slice {
			// A list of settings' structs (telemetry's metrics readers), each item by its index,
			// as the collector's errors name it: readers[0].
			items, _ := m[key].([]any)
			for i, item := range items {
				found = append(found, walk(lt.Elem(), asMap(item), fmt.Sprintf("%s::%s[%d]", path, key, i))...)
			}
			continue
		}
		found = append(found, walk(ft, asMap(m[key]), path+"::"+key)...)
	}
	return found
}

// optionalPkg holds configoptional.Optional[T], which reads the keys of T.
const optionalPkg = "go.opentelemetry.io/collector/config/configoptional"

// isOptional reports whether t is a configoptional.Optional[T].
func isOptional(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.PkgPath() == optionalPkg && strings.HasPrefix(t.Name(), "Optional[")
}

// underlying1 is t without pointers.
func underlying1(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// underlying is t without pointers, and T for configoptional.Optional[T], whose keys it reads
// (besides its own enabled).
func underlying(t reflect.Type) reflect.Type {
	for {
		t = underlying1(t)
		if !isOptional(t) {
			return t
		}
		f, ok := t.FieldByName("value")
		if !ok {
			return t
		}
		t = f.Type
	}
}

// settingsOf adds the settings of the struct t to fields, by their keys as the collector's decoder
// matches them (the mapstructure tag, case-sensitive; a squashed struct's settings as its
// parent's). It reports false for a struct with a ",remain" field, which takes any other key.
func settingsOf(t reflect.Type, fields map[string]reflect.Type) bool {
	strict := true
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		switch {
		case strings.Contains(opts, "remain"):
			strict = false
			continue
		case strings.Contains(opts, "squash"):
			if st := underlying(f.Type); st.Kind() == reflect.Struct && !settingsOf(st, fields) {
				strict = false
			}
			continue
		case !f.IsExported() || name == "-":
			continue
		case name == "":
			name = f.Name
		}
		fields[name] = f.Type
	}
	return strict
}

// invalidKeys finds the decoder's "'T' has invalid keys: a, b" in an error.
var invalidKeys = regexp.MustCompile(`has invalid keys: ([^\n]+)`)

// invalidKeyNames returns the keys the decoder's "has invalid keys" errors in text name: the
// collector's own words for a key that is no setting of a component it wrote.
func invalidKeyNames(text string) map[string]bool {
	named := map[string]bool{}
	for _, m := range invalidKeys.FindAllStringSubmatch(text, -1) {
		for _, n := range strings.Split(m[1], ",") {
			named[strings.TrimSpace(n)] = true
		}
	}
	return named
}

// explain returns, for an error of keys that are no setting, each of those keys with its place and
// the setting it likely misspells (or the settings where it stands); "" for another error.
func (k *keyTypos) explain(err error) string {
	k.mu.Lock()
	manifest := k.manifest
	k.mu.Unlock()
	if manifest {
		return "This file is an ocb manifest (a builder configuration: dist, and components as lists of Go modules), not a collector configuration. " +
			"Give --config a configuration such as exporter-config/debug.yaml; a manifest is for building a distribution with ocb (make ocb)."
	}
	if note := k.references(err.Error()); note != "" {
		return note
	}
	named := invalidKeyNames(err.Error())
	if len(named) == 0 {
		return ""
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	var lines []string
	for _, t := range k.found {
		if !named[t.name] {
			continue
		}
		if best := suggest.Closest(t.name, t.here); best != "" {
			lines = append(lines, fmt.Sprintf("  %s: not a setting; did you mean %s?", t.key, best))
		} else {
			lines = append(lines, fmt.Sprintf("  %s: not a setting; the settings there are %s", t.key, strings.Join(t.here, ", ")))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "Where those keys are (each with the setting it likely misspells):\n" + strings.Join(lines, "\n")
}

// notConfigured finds the collector's error for a pipeline (or service::extensions) that names a
// component the configuration does not define: `references exporter "debug/spams" which is not
// configured`.
var notConfigured = regexp.MustCompile(`references (receiver|processor|exporter|connector|extension) "([^"]+)" which is not configured`)

// references returns, for each component a pipeline names that is not configured, the one of its
// kind it likely misspells, or those of its kind there are; "" for another error.
func (k *keyTypos) references(msg string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var lines []string
	for _, m := range notConfigured.FindAllStringSubmatch(msg, -1) {
		kind, id := m[1], m[2]
		there := k.ids[kind+"s"]
		if kind == "receiver" || kind == "exporter" {
			// A connector stands among a pipeline's receivers or exporters too.
			there = append(append([]string(nil), there...), k.ids["connectors"]...)
		}
		switch best := suggest.Closest(id, there); {
		case best != "":
			lines = append(lines, fmt.Sprintf("  %s %q: did you mean %s?", kind, id, best))
		case len(there) == 0:
			lines = append(lines, fmt.Sprintf("  %s %q: the configuration defines no %s; add it under %ss", kind, id, kind, kind))
		default:
			lines = append(lines, fmt.Sprintf("  %s %q: the %ss defined are %s; define it under %ss, or name one of those", kind, id, kind, strings.Join(there, ", "), kind))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "Components named but not defined:\n" + strings.Join(lines, "\n")
}
