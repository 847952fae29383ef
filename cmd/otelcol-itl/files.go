package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"go.opentelemetry.io/collector/confmap"
)

// tlsFileKeys are the settings of a tls section that name a PEM file.
var tlsFileKeys = []string{"ca_file", "cert_file", "key_file", "client_ca_file"}

// settingFiles refuses, at validate and before start, the files and directories a configuration
// names that the collector could not use: a tls section's file that cannot be read, and a
// file_storage directory this user cannot write or create. The collector finds them only when the
// component starts, so that validate passed a config whose OTLP_CA_FILE named no file, or whose
// ITL_QUEUE_DIR was under /var/lib for a user other than root. Empty values are left alone: they
// mean the system's roots, no client certificate, or the extension's default directory.
func settingFiles() confmap.ConverterFactory {
	return confmap.NewConverterFactory(func(confmap.ConverterSettings) confmap.Converter { return settingFilesConverter{} })
}

type settingFilesConverter struct{}

func (settingFilesConverter) Convert(_ context.Context, conf *confmap.Conf) error {
	errs := storageDirs(conf)
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

// storageDirs refuses a file_storage extension whose directory this user cannot write, or, when
// it does not exist, cannot create (create_directory) or was not told to create.
func storageDirs(conf *confmap.Conf) []error {
	extensions, _ := conf.Get("extensions").(map[string]any)
	ids := make([]string, 0, len(extensions))
	for id := range extensions {
		if typ, _, _ := strings.Cut(id, "/"); typ == "file_storage" {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	var errs []error
	for _, id := range ids {
		settings, _ := extensions[id].(map[string]any)
		dir, _ := settings["directory"].(string)
		if strings.TrimSpace(dir) == "" {
			continue // the extension's default, which it checks itself
		}
		create, _ := settings["create_directory"].(bool)
		if err := writableDir(dir, create); err != nil {
			errs = append(errs, fmt.Errorf("extensions::%s::directory: %w", id, err))
		}
	}
	return errs
}

// writableDir reports why dir cannot hold the collector's files: not writable, not a directory,
// or missing and not creatable. It writes nothing but a probe file, removed at once.
func writableDir(dir string, create bool) error {
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return fmt.Errorf("%q is a file, not a directory; give a directory", dir)
	case err == nil:
		if !canWrite(dir) {
			return fmt.Errorf("%q cannot be written by this user; make it writable to the collector, or give another directory", dir)
		}
		return nil
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR): // ENOTDIR: a file above it
		return fmt.Errorf("%q cannot be used: %w", dir, err)
	case !create:
		return fmt.Errorf("%q does not exist; create it, or set create_directory: true", dir)
	}
	// Missing, to be created: the nearest directory above it that exists must be writable.
	for parent := filepath.Dir(filepath.Clean(dir)); ; parent = filepath.Dir(parent) {
		if st, err := os.Stat(parent); err == nil {
			if !st.IsDir() {
				return fmt.Errorf("%q cannot be created: %q is a file", dir, parent)
			}
			if !canWrite(parent) {
				return fmt.Errorf("%q cannot be created: %q is not writable by this user; give a directory this user can create, or create it for this user beforehand", dir, parent)
			}
			return nil
		}
		if parent == filepath.Dir(parent) {
			return nil // nothing above exists: the extension will say why
		}
	}
}

// canWrite reports whether this user can create a file in dir.
func canWrite(dir string) bool {
	f, err := os.CreateTemp(dir, ".otelcol-itl-probe-*")
	if err != nil {
		return false
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return true
}
