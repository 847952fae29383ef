// Package doccheck keeps the components' READMEs true: every configuration key of a component's
// Config, and every word a test names (metric names, reasons), must appear in its README.
package doccheck

import (
	"fmt"
	"os"
	"reflect"
	"strings"
)

// Keys returns every configuration key of cfg (a struct or a pointer to one) as the collector
// reads it: mapstructure tag names, nested ones joined with ".", squashed structs flattened.
func Keys(cfg any) []string {
	var keys []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		for i := range t.NumField() {
			f := t.Field(i)
			tag, ok := f.Tag.Lookup("mapstructure")
			if !ok || !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case strings.Contains(opts, "squash"):
				walk(ft, prefix)
			case ft.Kind() == reflect.Struct:
				walk(ft, prefix+name+".")
			default:
				keys = append(keys, prefix+name)
			}
		}
	}
	walk(reflect.TypeOf(cfg), "")
	return keys
}

// Missing returns the words that do not appear in the file at path, each as `word` (in backquotes,
// as the READMEs write keys and names).
func Missing(path string, words []string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	text := string(b)
	var missing []string
	for _, w := range words {
		if !strings.Contains(text, "`"+w+"`") {
			missing = append(missing, w)
		}
	}
	return missing, nil
}
