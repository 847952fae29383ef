// Package confchecktest checks, for the components' tests, that a configuration refuses what
// package confcheck refuses: kept apart so that the components do not link package testing.
package confchecktest

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"

	"github.com/otelitl/itl/collector/internal/confcheck"
	"github.com/otelitl/itl/collector/requiredenvprovider"
)

// EveryCountAndDuration unmarshals, onto a default configuration from newConfig, every setting of
// an integer type with a fraction, as true and as a list, every duration without its unit, as text that is no duration
// and empty, and every boolean as text, a number and empty, each of which must be refused naming
// the setting; and every duration as 0, which needs no unit.
func EveryCountAndDuration(t *testing.T, newConfig func() any) {
	t.Helper()
	whole, durations := confcheck.Keys(reflect.TypeOf(newConfig()).Elem())
	if len(whole) == 0 || len(durations) == 0 {
		t.Fatalf("settings: %d counts and %d durations; the configuration has both", len(whole), len(durations))
	}
	unmarshal := func(key string, v any) error {
		conf := map[string]any{}
		parts := strings.Split(key, "::")
		m := conf
		for _, p := range parts[:len(parts)-1] {
			m[p] = map[string]any{}
			m = m[p].(map[string]any)
		}
		m[parts[len(parts)-1]] = v
		return confmap.NewFromStringMap(conf).Unmarshal(newConfig())
	}
	for _, k := range whole {
		want := confcheck.Name(k) + ": 2.5 is not a whole number"
		if err := unmarshal(k, 2.5); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: 2.5 gave %v, want an error with %q", k, err, want)
		}
		for v, want := range map[string]string{"true": ": true is not a number", "[]": ": [1] is not a number"} {
			var value any = true
			if v == "[]" {
				value = []any{1}
			}
			if err := unmarshal(k, value); err == nil || !strings.Contains(err.Error(), confcheck.Name(k)+want) {
				t.Errorf("%s: %s gave %v, want an error with %q", k, v, err, confcheck.Name(k)+want)
			}
		}
	}
	for _, k := range durations {
		want := confcheck.Name(k) + ": 250 has no unit"
		if err := unmarshal(k, 250); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: 250 gave %v, want an error with %q", k, err, want)
		}
		if err := unmarshal(k, 0); strings.Contains(fmt.Sprint(err), "no unit") {
			t.Errorf("%s: 0 gave %v; zero needs no unit", k, err)
		}
		for v, want := range map[any]string{
			"fast": `: "fast" is not a duration; write a number with its unit`, nil: ": has no value; write a duration",
			" 15s": `: " 15s" is not a duration`, "15s\n": `: "15s\n" is not a duration`, "0.0": `: "0.0" has no unit; write 0s`,
			"9999999999h": `: "9999999999h" is beyond the longest duration`,
		} {
			if err := unmarshal(k, v); err == nil || !strings.Contains(err.Error(), confcheck.Name(k)+want) {
				t.Errorf("%s: %v gave %v, want an error with %q", k, v, err, confcheck.Name(k)+want)
			}
		}
		if err := unmarshal(k, []any{"5s"}); err == nil || !strings.Contains(err.Error(), confcheck.Name(k)+": [5s] is not a duration") {
			t.Errorf("%s: [5s] gave %v, want an error naming the setting", k, err)
		}
	}
	bools := confcheck.BoolKeys(reflect.TypeOf(newConfig()).Elem())
	if len(bools) == 0 {
		t.Fatalf("no boolean setting found; the configuration has some")
	}
	for _, k := range bools {
		for v, want := range map[any]string{"yes": `: "yes" is not true or false; write true or false`, 1: ": 1 is not true or false", nil: ": has no value"} {
			if err := unmarshal(k, v); err == nil || !strings.Contains(err.Error(), confcheck.Name(k)+want) {
				t.Errorf("%s: %v gave %v, want an error with %q", k, v, err, confcheck.Name(k)+want)
			}
		}
		if err := unmarshal(k, true); err != nil {
			t.Errorf("%s: true gave %v", k, err)
		}
	}
}

// FromVariables does what EveryCountAndDuration does with each setting's value coming from an
// environment variable, which holds the whole value of the setting's top-level key (for
// histogram::exponential::max_size, histogram: ${env:V} with V={exponential: {max_size: 2.5}}), as
// the collector resolves it; and it misspells each setting's key inside such a value, which must
// be refused naming the setting.
func FromVariables(t *testing.T, newConfig func() any) {
	t.Helper()
	whole, durations := confcheck.Keys(reflect.TypeOf(newConfig()).Elem())
	const variable = "CONFCHECKTEST_VALUE"
	// unmarshal resolves "top: ${env:V}" with V the rest of key set to value, in YAML's flow style.
	unmarshal := func(key, value string) error {
		parts := strings.Split(key, "::")
		v := value
		for i := len(parts) - 1; i > 0; i-- {
			v = "{" + parts[i] + ": " + v + "}"
		}
		t.Setenv(variable, v)
		yaml := parts[0] + ": ${env:" + variable + "}\n"
		r, err := confmap.NewResolver(confmap.ResolverSettings{
			URIs: []string{"yaml:config"},
			ProviderFactories: []confmap.ProviderFactory{
				confmap.NewProviderFactory(func(confmap.ProviderSettings) confmap.Provider { return yamlProvider(yaml) }),
				requiredenvprovider.NewFactory(),
			},
			DefaultScheme: "env",
		})
		if err != nil {
			t.Fatal(err)
		}
		conf, err := r.Resolve(context.Background())
		if err != nil {
			t.Fatalf("%s from %s=%s: %v", key, variable, v, err)
		}
		return conf.Unmarshal(newConfig())
	}
	check := func(key, value, want string) {
		t.Helper()
		if err := unmarshal(key, value); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %s from a variable gave %v, want an error with %q", key, value, err, want)
		}
	}
	nested := 0
	for _, k := range whole {
		check(k, "2.5", confcheck.Name(k)+": 2.5 is not a whole number")
	}
	for _, k := range durations {
		check(k, "250", confcheck.Name(k)+": 250 has no unit")
	}
	for _, k := range append(whole, durations...) {
		if strings.Contains(k, "::") {
			nested++
			check(k+"x", "1", confcheck.Name(k+"x")+": not a setting; did you mean "+confcheck.Name(k)+"?")
		}
	}
	if nested == 0 {
		t.Logf("no nested setting: only top-level values came from a variable")
	}
}

// yamlProvider serves its YAML for any URI of the scheme "yaml".
type yamlProvider string

func (p yamlProvider) Retrieve(context.Context, string, confmap.WatcherFunc) (*confmap.Retrieved, error) {
	return confmap.NewRetrievedFromYAML([]byte(p))
}

func (yamlProvider) Scheme() string { return "yaml" }

func (yamlProvider) Shutdown(context.Context) error { return nil }
