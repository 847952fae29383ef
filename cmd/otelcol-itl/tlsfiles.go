package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/confmap"
)

// tlsFileKeys are the settings of a tls section that name a PEM file.
var tlsFileKeys = []string{"ca_file", "cert_file", "key_file", "client_ca_file"}

// tlsFiles refuses a tls section that names a file which cannot be read. The collector reads
// them only when a component starts, so that validate passed a config whose OTLP_CA_FILE named
// no file, and the error came at start, after the rest of the collector had started. Empty
// values are left alone: they mean the system's roots, or no client certificate.
func tlsFiles() confmap.ConverterFactory {
	return confmap.NewConverterFactory(func(confmap.ConverterSettings) confmap.Converter { return tlsFilesConverter{} })
}

type tlsFilesConverter struct{}

func (tlsFilesConverter) Convert(_ context.Context, conf *confmap.Conf) error {
	var errs []error
	var walk func(path []string, v any)
	walk = func(path []string, v any) {
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys) // one error for each, in a stable order
			for _, k := range keys {
				if len(path) > 0 && path[len(path)-1] == "tls" && slices.Contains(tlsFileKeys, k) {
					if err := readable(v[k]); err != nil {
						errs = append(errs, fmt.Errorf("%s: %w", strings.Join(append(path, k), "::"), err))
					}
					continue
				}
				walk(append(path[:len(path):len(path)], k), v[k])
			}
		case []any:
			for i, e := range v {
				walk(append(path[:len(path):len(path)], fmt.Sprintf("[%d]", i)), e)
			}
		}
	}
	walk(nil, conf.ToStringMap())
	return errors.Join(errs...)
}

// readable reports why the file v names cannot be read, or nil for an empty value (or one that is
// not a string, which the component's own decoding refuses).
func readable(v any) error {
	name, ok := v.(string)
	if !ok || strings.TrimSpace(name) == "" {
		return nil
	}
	f, err := os.Open(name)
	if err == nil {
		st, serr := f.Stat()
		f.Close()
		if serr == nil && st.IsDir() {
			return fmt.Errorf("%q is a directory; give the path of the PEM file", name)
		}
		return nil
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%q does not exist; give the path of the PEM file, or leave the setting empty", name)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%q cannot be read by this user (permission denied); make it readable to the collector", name)
	}
	return fmt.Errorf("%q cannot be read: %w", name, err)
}
