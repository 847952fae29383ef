// Package confcheck holds the checks the collector components' configurations share, so that every
// bad value is refused at start with the same kind of message: the key, the value, and the fix.
package confcheck

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/confmap"

	"github.com/otelitl/itl/internal/suggest"
)

// Unmarshal decodes conf onto cfg, a pointer to a component's configuration struct, after refusing
// a key that is not a setting (naming the one it likely misspells), a duration written without its
// unit and a count with a fraction, each checked on the settings of cfg's type that Keys lists.
//
// The checks read conf with every variable's value in place: conf holds a map taken whole from a
// variable (histogram: ${env:H}) as one value, whose keys its own lookups do not reach.
func Unmarshal(conf *confmap.Conf, cfg any) error {
	t := reflect.TypeOf(cfg).Elem()
	whole, durations := Keys(t)
	expanded := confmap.NewFromStringMap(conf.ToStringMap())
	if err := Unknown(expanded, t); err != nil {
		return err
	}
	if err := Units(expanded, durations...); err != nil {
		return err
	}
	if err := Whole(expanded, whole...); err != nil {
		return err
	}
	if err := Bools(expanded, BoolKeys(t)...); err != nil {
		return err
	}
	return conf.Unmarshal(cfg)
}

// Bools refuses a setting that takes true or false given anything else: the decoder's own message
// ("expected type 'bool', got unconvertible type 'string'") names neither the value nor the fix.
// keys are the boolean keys of a component's configuration ("a::b" for nested ones).
func Bools(conf *confmap.Conf, keys ...string) error {
	for _, k := range keys {
		if !conf.IsSet(k) {
			continue
		}
		switch v := conf.Get(k).(type) {
		case bool:
		case string:
			return fmt.Errorf("%s: %q is not true or false; write true or false (in quotes, or from a variable set to anything else, it is text)", Name(k), v)
		case nil:
			return fmt.Errorf("%s: has no value; write true or false, or leave the key out for its default", Name(k))
		default:
			return fmt.Errorf("%s: %v is not true or false; write true or false", Name(k), v)
		}
	}
	return nil
}

// BoolKeys lists the settings of a configuration struct that take true or false, as "a::b" for
// nested ones.
func BoolKeys(t reflect.Type) (keys []string) {
	settings(t, "", func(key string, typ reflect.Type) {
		if typ.Kind() == reflect.Bool {
			keys = append(keys, key)
		}
	})
	return keys
}

// Name writes a setting's key as the messages and the READMEs do: histogram.exponential.max_size
// for confmap's histogram::exponential::max_size.
func Name(key string) string { return strings.ReplaceAll(key, "::", ".") }

// Units refuses a duration written without its unit: "stall_threshold: 250" decodes as 250
// nanoseconds, and a variable set to "15" as 15 nanoseconds, which is never what was meant. conf is
// a component's configuration before it is decoded; keys are its duration keys ("a::b" for nested
// ones). Zero needs no unit: 0 is 0 whatever the unit, as the settings whose 0 means "off" say.
//
// A number in quotes ("250") has no unit either; the decoder refuses it, but with a message that
// names neither the value nor the fix, so it gets this one, as does text that is no duration
// ("fast"), and a key left without a value, which would decode as 0.
func Units(conf *confmap.Conf, keys ...string) error {
	for _, k := range keys {
		show := Name(k)
		switch v := conf.Get(k).(type) {
		case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
			if f, _ := strconv.ParseFloat(fmt.Sprint(v), 64); f == 0 {
				continue
			}
			return fmt.Errorf("%s: %v has no unit, and would be read as nanoseconds; write it with one, such as %vs or %vms", show, v, v, v)
		case string:
			n := strings.TrimSpace(v)
			if f, err := strconv.ParseFloat(n, 64); err == nil && f != 0 && !math.IsInf(f, 0) && !math.IsNaN(f) {
				return fmt.Errorf("%s: %q has no unit; write it with one, such as %ss or %sms", show, v, n, n)
			} else if err == nil && v != "0" {
				return fmt.Errorf("%s: %q has no unit; write 0s", show, v)
			}
			// As the decoder reads it: untrimmed, so that " 15s" is named here, not cut off there.
			if _, err := time.ParseDuration(v); err != nil {
				if durationSyntax.MatchString(n) && n == v {
					return fmt.Errorf("%s: %q is beyond the longest duration there is (about 292 years); write a shorter one", show, v)
				}
				return fmt.Errorf("%s: %q is not a duration; write a number with its unit (ns, us, ms, s, m, h), without spaces, such as 250ms, 15s or 1m30s", show, v)
			}
		case nil:
			if conf.IsSet(k) {
				// An empty value would decode as 0, and its error would name a 0s nobody wrote.
				return fmt.Errorf("%s: has no value; write a duration such as 250ms or 15s, or leave the key out for its default", show)
			}
		case []any, map[string]any:
			return fmt.Errorf("%s: %v is not a duration; write one value, such as 250ms or 15s", show, v)
		}
	}
	return nil
}

// durationSyntax matches what time.ParseDuration reads, whatever the size: a duration it refuses
// that matches is too long.
var durationSyntax = regexp.MustCompile(`^[-+]?([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+$`)

// Whole refuses a number with a fraction for a setting that counts: the decoder would cut
// "max_chunks: 1.5" to 1 without a word, a setting nobody wrote. It names the value and the fix of
// a count given as text, true or false, a list or a map, too. conf is a component's
// configuration before it is decoded; keys are its whole-number keys ("a::b" for nested ones).
func Whole(conf *confmap.Conf, keys ...string) error {
	for _, k := range keys {
		show := Name(k)
		var f float64
		switch v := conf.Get(k).(type) {
		case float32:
			f = float64(v)
		case float64:
			f = v
		case string:
			// The decoder refuses a number in quotes, naming Go types: say what to write instead.
			n := strings.TrimSpace(v)
			// Digits grouped as in prose (100,000; 100_000; 100 000), which the decoder refused as
			// "expected type 'int', got unconvertible type 'string'".
			if digits := separators.ReplaceAllString(n, ""); digits != n && wholeDigits.MatchString(digits) {
				return fmt.Errorf("%s: %q is not a number as written; write it without separators, as %s", show, v, digits)
			}
			if _, err := strconv.ParseFloat(n, 64); err == nil {
				return fmt.Errorf("%s: %q is in quotes; write the number without them, as %s", show, v, n)
			}
			return fmt.Errorf("%s: %q is not a number; write a whole number, without quotes", show, v)
		// Not a number at all, which the decoder refused in Go's words: "expected type 'int', got
		// unconvertible type 'bool'".
		case bool:
			return fmt.Errorf("%s: %v is not a number; write a whole number", show, v)
		case []any:
			return fmt.Errorf("%s: %v is not a number; write one whole number, not a list", show, v)
		case map[string]any:
			return fmt.Errorf("%s: %v is not a number; write one whole number, not a section", show, v)
		default:
			continue
		}
		if math.Abs(f) >= 1<<63 && !math.IsNaN(f) && !math.IsInf(f, 0) {
			// Whole, but beyond what the setting can hold: the decoder would wrap it around.
			return fmt.Errorf("%s: %v is far beyond any value the setting takes; write a whole number in its range", show, f)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) || f != math.Trunc(f) {
			like := math.Round(f)
			if !(like >= 1 && like <= math.MaxInt32) { // NaN, an infinity, or below 1 (a fraction of one)
				like = 1
			}
			return fmt.Errorf("%s: %v is not a whole number; write a whole number, such as %v", show, f, like)
		}
	}
	return nil
}

var (
	separators  = regexp.MustCompile(`[,_ ']`)
	wholeDigits = regexp.MustCompile(`^-?[0-9]+$`)
)

// Between reports a value outside [lo, hi] as an error naming key, the bounds and the default.
func Between[T int | int32 | int64 | time.Duration](key string, v, lo, hi, def T) error {
	if v < lo || v > hi {
		return fmt.Errorf("%s: %v is outside [%v, %v]; the default is %v", key, v, lo, hi, def)
	}
	return nil
}

// Boundaries checks explicit histogram boundaries: at least one, at most max, finite, strictly
// increasing.
func Boundaries(b []float64, max int) error {
	switch {
	case len(b) == 0:
		return fmt.Errorf("needs at least one boundary")
	case len(b) > max:
		return fmt.Errorf("%d boundaries, more than %d: every series keeps a count per bucket", len(b), max)
	}
	for i, v := range b {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("boundary %d of %d is %v; boundaries must be finite numbers", i+1, len(b), v)
		}
		if i > 0 && v <= b[i-1] {
			return fmt.Errorf("boundaries must increase strictly; %v follows %v", v, b[i-1])
		}
	}
	return nil
}

// Keys lists the settings of a configuration struct that Whole and Units must check: those of an
// integer type, and those of type time.Duration, as "a::b" for nested ones. The components check
// the settings it lists, so that one added later is not decoded past the checks.
func Keys(t reflect.Type) (whole, durations []string) {
	settings(t, "", func(key string, typ reflect.Type) {
		switch {
		case typ == reflect.TypeFor[time.Duration]():
			durations = append(durations, key)
		case typ.Kind() >= reflect.Int && typ.Kind() <= reflect.Uint64:
			whole = append(whole, key)
		}
	})
	return whole, durations
}

// settings calls fn with every setting of the struct t, by its key ("a::b" for nested ones), and
// goes into nested structs; a squashed one's settings are its parent's.
func settings(t reflect.Type, prefix string, fn func(key string, typ reflect.Type)) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		switch {
		case opts == "squash":
			settings(f.Type, prefix, fn)
			continue
		case !f.IsExported() || name == "" || name == "-":
			continue
		}
		key := prefix + name
		fn(key, f.Type)
		if f.Type.Kind() == reflect.Struct {
			settings(f.Type, key+"::", fn)
		}
	}
}

// Unknown refuses a key that is not a setting of the configuration struct t, naming the setting
// it most likely misspells, or the settings where it stands: the decoder's own message names the
// Go type and the key ("'itlprocessor.Config' has invalid keys: stall_treshold"), but not what to
// write instead. The items of a list of settings (dimensions: [{name: ...}]) are checked alike,
// each named by its place (dimensions[0].nam); keys within a map setting, and list items that are
// not maps, are the decoder's to judge.
func Unknown(conf *confmap.Conf, t reflect.Type) error {
	errs := unknown(conf, t, "")
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// unknown is Unknown's errors for conf, whose keys are shown after label.
func unknown(conf *confmap.Conf, t reflect.Type, label string) []error {
	known := map[string]bool{}         // every key, as "a::b"; true for a struct of its own settings
	lists := map[string]reflect.Type{} // the settings that are lists of structs: their items' type
	settings(t, "", func(key string, typ reflect.Type) {
		known[key] = typ.Kind() == reflect.Struct
		if typ.Kind() == reflect.Slice && typ.Elem().Kind() == reflect.Struct {
			lists[key] = typ.Elem()
		}
	})
	var errs []error
	seen := map[string]bool{}
	for _, leaf := range conf.AllKeys() {
		parts := strings.Split(leaf, "::")
		for i := range parts {
			key := strings.Join(parts[:i+1], "::")
			isStruct, ok := known[key]
			if ok && isStruct {
				continue
			}
			if !ok && !seen[key] {
				seen[key] = true
				errs = append(errs, unknownKey(key, strings.Join(parts[:i], "::"), known, label))
			}
			break // a setting's own value, or a key already reported
		}
	}
	for key, elem := range lists {
		items, _ := conf.Get(key).([]any)
		for i, item := range items {
			if m, ok := item.(map[string]any); ok {
				errs = append(errs, unknown(confmap.NewFromStringMap(m), elem, fmt.Sprintf("%s%s[%d].", label, Name(key), i))...)
			}
		}
	}
	return errs
}

// unknownKey says key is not a setting: which one under parent it is likely a misspelling of, or
// what the settings under parent are. label comes before every key it shows.
func unknownKey(key, parent string, known map[string]bool, label string) error {
	prefix := parent
	if prefix != "" {
		prefix += "::"
	}
	var here []string
	for k := range known {
		if rest, ok := strings.CutPrefix(k, prefix); ok && !strings.Contains(rest, "::") {
			here = append(here, rest)
		}
	}
	slices.Sort(here)
	name := strings.TrimPrefix(key, prefix)
	show := label + Name(key)
	if nested := prefix + strings.ReplaceAll(name, ".", "::"); strings.Contains(name, ".") {
		if _, ok := known[nested]; ok { // the dotted name the messages and READMEs use
			return fmt.Errorf("%s: not a setting as written; write it nested, one key a level (%s:)", show, strings.ReplaceAll(nested, "::", ": "))
		}
	}
	if best := suggest.Closest(name, here); best != "" {
		return fmt.Errorf("%s: not a setting; did you mean %s?", show, label+Name(prefix+best))
	}
	return fmt.Errorf("%s: not a setting; the settings here are %s", show, strings.Join(here, ", "))
}
