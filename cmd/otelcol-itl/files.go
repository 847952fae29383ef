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

	"github.com/otelitl/itl/internal/tlsfile"
)

// tlsFileKeys are the settings of a tls section that name a PEM file.
var tlsFileKeys = []string{"ca_file", "cert_file", "key_file", "client_ca_file"}

// settingFiles refuses, at validate and before start, the files and directories a configuration
// names that the collector could not use: a tls section's file that cannot be read, a CA file that
// is not a PEM certificate, a certificate and a key that are not a pair (tlsSection), and a
// file_storage directory this user cannot write or create, that holds a queue's file this user
// cannot open (queueFiles), or that begins with a ~ nothing expanded (tildeDir). The collector finds them only when the
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
			if len(path) > 0 && path[len(path)-1] == "tls" {
				errs = append(errs, tlsSection(path, v)...)
			}
			for _, k := range keys {
				if len(path) > 0 && path[len(path)-1] == "tls" && slices.Contains(tlsFileKeys, k) {
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
	return errors.Join(onePerProblem(errs)...)
}

// keyError is a setting's error: the key (or keys) and what is wrong with the value.
type keyError struct {
	keys []string
	err  error
}

func keyErr(key string, err error) error { return &keyError{keys: []string{key}, err: err} }

func (e *keyError) Error() string { return joinKeys(e.keys) + ": " + e.err.Error() }
func (e *keyError) Unwrap() error { return e.err }

// onePerProblem returns errs with the errors of keys that name the same file, and found the same
// fault in it, made one, which names every key, where the first stood. gateway.yaml gives both
// receivers, gRPC and HTTP, the same TLS_CERT_FILE, TLS_KEY_FILE and TLS_CLIENT_CA_FILE: a CA
// that was not PEM was printed twice, once a key, the same path and fix in each. The errors of
// keys whose values differ stay apart, each with its own.
func onePerProblem(errs []error) []error {
	var out []error
	first := map[string]*keyError{} // by the fault's text
	for _, err := range errs {
		var ke *keyError
		if !errors.As(err, &ke) {
			out = append(out, err)
			continue
		}
		text := ke.err.Error()
		if f, ok := first[text]; ok {
			f.keys = append(f.keys, ke.keys...)
			continue
		}
		merged := &keyError{keys: slices.Clone(ke.keys), err: ke.err}
		first[text] = merged
		out = append(out, merged)
	}
	return out
}

// joinKeys writes keys as a list: a, a and b, a, b and c.
func joinKeys(keys []string) string {
	if n := len(keys); n > 1 {
		return strings.Join(keys[:n-1], ", ") + " and " + keys[n-1]
	}
	return strings.Join(keys, "")
}

// tlsSection refuses the files of the tls section at path that the component could not load: one
// that cannot be read (readable), a CA file without a PEM certificate in it (caFile), a
// certificate and a key that are not a pair (keyPair), which the collector found only as the
// component started, without the key or the path ("failed to load TLS config: failed to load CA
// CertPool File: failed to parse cert"). What is read is what configtls reads, and the verdict
// its own: x509.CertPool.AppendCertsFromPEM, tls.X509KeyPair.
func tlsSection(path []string, section map[string]any) []error {
	var errs []error
	contents := map[string][]byte{} // the readable files' contents, by key; nil: not checked
	for _, k := range tlsFileKeys {
		// A receiver's certificate and key cannot be left empty: its TLS needs both (gateway.yaml
		// requires TLS_CERT_FILE and TLS_KEY_FILE), where a CA or a client's certificate can.
		emptyOK := !(len(path) > 0 && path[0] == "receivers" && (k == "cert_file" || k == "key_file"))
		if err := readable(section[k], emptyOK); err != nil {
			errs = append(errs, keyErr(strings.Join(append(path, k), "::"), err))
			continue
		}
		if name, _ := section[k].(string); strings.TrimSpace(name) != "" {
			contents[k] = regularFile(name)
		}
	}
	for _, k := range []string{"ca_file", "client_ca_file"} {
		if data := contents[k]; data != nil {
			if err := tlsfile.CA(section[k].(string), data); err != nil {
				errs = append(errs, keyErr(strings.Join(append(path, k), "::"), err))
			}
		}
	}
	if cert, key := contents["cert_file"], contents["key_file"]; cert != nil && key != nil {
		if err := tlsfile.KeyPair("cert_file", section["cert_file"].(string), cert, "key_file", section["key_file"].(string), key); err != nil {
			errs = append(errs, keyErr(strings.Join(append(path, "cert_file"), "::")+", key_file", err))
		}
	}
	return errs
}

// maxTLSFile bounds what regularFile reads: a CA bundle is hundreds of kilobytes.
const maxTLSFile = 16 << 20

// regularFile returns the contents of the regular file name, or nil for one that is not regular (a
// named pipe, a device, which reading could block or never end), larger than maxTLSFile, or that
// cannot be read: the component reads it, and says why, at start.
func regularFile(name string) []byte {
	st, err := os.Stat(name)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxTLSFile {
		return nil
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil
	}
	if data == nil {
		data = []byte{}
	}
	return data
}

// readable reports why the file v names cannot be read, or nil for an empty value (or one that is
// not a string, which the component's own decoding refuses). emptyOK says whether the fix may be
// to leave the setting empty: for a receiver's certificate and key it may not.
func readable(v any, emptyOK bool) error {
	name, ok := v.(string)
	if !ok || strings.TrimSpace(name) == "" {
		return nil
	}
	// Without blocking: a named pipe opened for reading waits for a writer, and validate with it.
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err == nil {
		st, serr := f.Stat()
		f.Close()
		if serr == nil && st.IsDir() {
			return fmt.Errorf("%q is a directory; give the path of the PEM file", name)
		}
		return nil
	}
	switch {
	case errors.Is(err, fs.ErrNotExist) && strings.HasPrefix(name, "~"):
		// OTLP_CA_FILE="~/ca.pem", quoted or in a compose or unit file: nothing expands the ~.
		first, example := tildeFix(name)
		return fmt.Errorf("%q does not exist: it begins with ~, which nothing expanded (a shell does not in quotes, nor do a compose or unit file and the collector), so it names a directory %q in the working directory; give the full path, such as %s", name, first, example)
	case errors.Is(err, fs.ErrNotExist):
		if !emptyOK {
			return fmt.Errorf("%q does not exist; give the path of the PEM file", name)
		}
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
		if err := tildeDir(dir); err != nil {
			errs = append(errs, keyErr("extensions::"+id+"::directory", err))
			continue
		}
		if err := relativeDir(dir); err != nil {
			errs = append(errs, keyErr("extensions::"+id+"::directory", err))
			continue
		}
		create, _ := settings["create_directory"].(bool)
		if err := writableDir(dir, create); err != nil {
			errs = append(errs, keyErr("extensions::"+id+"::directory", err))
			continue
		}
		if err := queueFiles(conf, id, dir); err != nil {
			errs = append(errs, keyErr("extensions::"+id+"::directory", err))
		}
	}
	return errs
}

// queueFiles refuses a queue's file in dir, left by an earlier run, that this user cannot open for
// reading and writing: the directory can be written, but the agent run once as root and then as
// its service user stopped at start with `failed to start "otlp_grpc" exporter: open
// .../exporter_otlp_grpc__traces: permission denied`, which validate had passed, and which named
// neither ITL_QUEUE_DIR nor the fix. The files are those of the exporters whose sending queue is on
// the file_storage extension id (file_storage names them kind_type_name_signal).
func queueFiles(conf *confmap.Conf, id, dir string) error {
	var ids []string
	for exp, settings := range asMap(conf.Get("exporters")) {
		if storage, _ := asMap(asMap(settings)["sending_queue"])["storage"].(string); storage == id {
			ids = append(ids, exp)
		}
	}
	sort.Strings(ids)
	var denied []string
	for _, exp := range ids {
		for _, base := range queueFileNames(dir, exp) {
			f := filepath.Join(dir, base)
			if st, err := os.Lstat(f); err != nil || !st.Mode().IsRegular() {
				continue
			}
			file, err := os.OpenFile(f, os.O_RDWR|syscall.O_NONBLOCK, 0)
			if err == nil {
				file.Close()
				continue
			}
			if errors.Is(err, fs.ErrPermission) {
				denied = append(denied, filepath.Base(f))
			}
		}
	}
	if len(denied) == 0 {
		return nil
	}
	return fmt.Errorf("%q holds the queue's file %s of an earlier run, which this user cannot open for writing (permission denied: left by another user, such as root); give it to the collector's user (chown), or give another directory", dir, strings.Join(denied, ", "))
}

// tildeDir refuses a directory that begins with ~ (ITL_QUEUE_DIR="~/queue", quoted in a shell or
// written in a compose or unit file, where nothing expands it): the collector takes it as written
// and creates a directory named "~" under its working directory, which validate passed and a
// later "rm -rf ~" meant for it would turn into the home directory's removal.
func tildeDir(dir string) error {
	if !strings.HasPrefix(dir, "~") {
		return nil
	}
	first, example := tildeFix(dir)
	return fmt.Errorf("%q begins with ~, which nothing expanded (a shell does not in quotes, nor do a compose or unit file and the collector): it would create a directory named %q in the working directory; give the full path, such as %s", dir, first, example)
}

// relativeDir refuses a relative directory (ITL_QUEUE_DIR=queue): the extension takes it from the
// collector's working directory, which is validate's in a shell and / for a systemd service, so
// validate checked another directory than the service used, and a start from elsewhere found an
// empty queue and left the spans of the one before unsent, with nothing said.
func relativeDir(dir string) error {
	if filepath.IsAbs(dir) {
		return nil
	}
	example := "/var/lib/otelcol-itl/" + filepath.Base(dir)
	if cwd, err := os.Getwd(); err == nil {
		example = filepath.Join(cwd, dir)
	}
	return fmt.Errorf("%q is relative: the collector finds it from its working directory, which differs between a shell and a service (systemd starts one in /), so a start from elsewhere would leave the queue's unsent spans behind; give the full path, such as %s", dir, example)
}

// tildeFix returns, for a path p that begins with ~, its first element (~ or ~NAME) and the path
// to give instead: the user's home for ~/, /home/NAME for ~NAME/.
func tildeFix(p string) (first, example string) {
	first, rest := p, ""
	if i := strings.IndexByte(p, '/'); i >= 0 {
		first, rest = p[:i], p[i:]
	}
	example = "/home/" + strings.TrimPrefix(first, "~") + rest // ~alice/queue
	if first == "~" {
		example = "/home/USER" + rest
		if home, err := os.UserHomeDir(); err == nil {
			example = filepath.Join(home, rest)
		}
	}
	return first, example
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
	}
	// Missing.
	if target := danglingLink(dir); target != "" {
		return fmt.Errorf("%q is a symbolic link to %q, which does not exist, and which the collector does not create through the link; create %q, or give another directory", dir, target, target)
	}
	if !create {
		return fmt.Errorf("%q does not exist; create it, or set create_directory: true", dir)
	}
	// Missing, to be created: the nearest directory above it that exists must be writable.
	for parent := filepath.Dir(filepath.Clean(dir)); ; parent = filepath.Dir(parent) {
		if target := danglingLink(parent); target != "" {
			return fmt.Errorf("%q cannot be created: %q is a symbolic link to %q, which does not exist; create %q, or give another directory", dir, parent, target, target)
		}
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

// danglingLink returns the target of path when path is a symbolic link to nothing (a volume not
// mounted, a directory removed), else "". os.Stat says such a path does not exist, and
// file_storage's create_directory then runs os.MkdirAll, which fails at start on the link
// ("mkdir ...: file exists"): it creates no link's target. A relative target is given as the path
// it names, from the link's directory.
func danglingLink(path string) string {
	st, err := os.Lstat(path)
	if err != nil || st.Mode()&fs.ModeSymlink == 0 {
		return ""
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	target, err := os.Readlink(path)
	if err != nil {
		return ""
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(path), target)
	}
	return target
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
