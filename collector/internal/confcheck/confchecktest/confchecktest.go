// Package confchecktest checks, for the components' tests, that a configuration refuses what
// package confcheck refuses: kept apart so that the components do not link package testing.
package confchecktest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"

	"github.com/otelitl/itl/collector/internal/confcheck"
)

// EveryCountAndDuration unmarshals, onto a default configuration from newConfig, every setting of
// an integer type with a fraction and every duration without its unit, each of which must be
// refused naming the setting, and every duration as 0, which needs no unit.
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
	}
	for _, k := range durations {
		want := confcheck.Name(k) + ": 250 has no unit"
		if err := unmarshal(k, 250); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: 250 gave %v, want an error with %q", k, err, want)
		}
		if err := unmarshal(k, 0); strings.Contains(fmt.Sprint(err), "no unit") {
			t.Errorf("%s: 0 gave %v; zero needs no unit", k, err)
		}
	}
}
