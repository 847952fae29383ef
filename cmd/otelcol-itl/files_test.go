package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"
)

// TestTLSFilesReadable: a tls section naming a file that cannot be read is refused with the key,
// the path and the fix, where validate passed it and the collector failed only as the component
// started. Empty values (the system's roots, no client certificate) and settings outside tls
// sections are left alone.
func TestTLSFilesReadable(t *testing.T) {
	dir := t.TempDir()
	pem := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(pem, []byte("-----BEGIN CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	for _, c := range []struct {
		name string
		conf map[string]any
		want []string // substrings of the error; none: no error
	}{
		{"a readable file", map[string]any{"exporters": map[string]any{"otlp_grpc": map[string]any{"tls": map[string]any{"ca_file": pem}}}}, nil},
		{"empty values", map[string]any{"exporters": map[string]any{"otlp_grpc": map[string]any{"tls": map[string]any{"ca_file": "", "cert_file": " ", "key_file": nil}}}}, nil},
		{"a missing CA", map[string]any{"exporters": map[string]any{"otlp_grpc": map[string]any{"tls": map[string]any{"ca_file": missing}}}},
			[]string{`exporters::otlp_grpc::tls::ca_file: "` + missing + `" does not exist; give the path of the PEM file, or leave the setting empty`}},
		{"a directory", map[string]any{"receivers": map[string]any{"otlp": map[string]any{"protocols": map[string]any{"grpc": map[string]any{"tls": map[string]any{"cert_file": dir, "key_file": pem}}}}}},
			[]string{`receivers::otlp::protocols::grpc::tls::cert_file: "` + dir + `" is a directory`}},
		{"every one, in order", map[string]any{"exporters": map[string]any{"otlp_http": map[string]any{"tls": map[string]any{"key_file": missing, "cert_file": missing}}}},
			[]string{"otlp_http::tls::cert_file", "otlp_http::tls::key_file"}},
		{"not a tls section", map[string]any{"extensions": map[string]any{"x": map[string]any{"ca_file": missing, "tls_settings": map[string]any{"ca_file": missing}}}}, nil},
		{"inside a list", map[string]any{"service": map[string]any{"telemetry": map[string]any{"metrics": map[string]any{"readers": []any{map[string]any{"push": map[string]any{"tls": map[string]any{"ca_file": missing}}}}}}}},
			[]string{"service::telemetry::metrics::readers::[0]::push::tls::ca_file"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := settingFilesConverter{}.Convert(context.Background(), confmap.NewFromStringMap(c.conf))
			if len(c.want) == 0 {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want %q", c.want)
			}
			last := -1
			for _, w := range c.want {
				i := strings.Index(err.Error(), w)
				if i < 0 || i < last {
					t.Errorf("the error lacks %q (or names it out of order):\n%v", w, err)
				}
				last = i
			}
		})
	}
}

// TestValidateRefusesMissingTLSFile: otelcol-itl validate refuses a shipped config whose CA file
// does not exist, naming the key and the variable behind it, where it said the config was valid.
func TestValidateRefusesMissingTLSFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gateway-ca.pem")
	out, code := otelcolItl(t, []string{"OTLP_ENDPOINT=gateway.example:4317", "OTLP_TOKEN=t", "OTLP_CA_FILE=" + missing},
		"validate", "--config", filepath.Join("..", "..", "exporter-config", "otlp.yaml"))
	if code != 1 {
		t.Fatalf("exit status %d, want 1\n%s", code, out)
	}
	for _, want := range []string{`exporters::otlp_grpc::tls::ca_file: "` + missing + `" does not exist`, `OTLP_CA_FILE="` + missing + `"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}

// TestStorageDirs: a file_storage directory this user cannot use is refused with the key, the path
// and the fix, where validate passed it and the extension failed at start (found by an operator
// running gateway.yaml as a user other than root, its default ITL_QUEUE_DIR under /var/lib).
func TestStorageDirs(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	locked := filepath.Join(dir, "locked")
	if err := os.Mkdir(locked, 0o500); err != nil {
		t.Fatal(err)
	}
	conf := func(d string, create bool) *confmap.Conf {
		return confmap.NewFromStringMap(map[string]any{"extensions": map[string]any{
			"file_storage/queue": map[string]any{"directory": d, "create_directory": create}}})
	}
	for _, c := range []struct {
		name   string
		dir    string
		create bool
		want   string // substring of the error; "": none
		root   bool   // the case needs a user that permissions bind, not root
	}{
		{"an existing directory", dir, false, "", false},
		{"one to create", filepath.Join(dir, "new", "queue"), true, "", false},
		{"the default", "", false, "", false},
		{"a file", file, true, `extensions::file_storage/queue::directory: "` + file + `" is a file, not a directory`, false},
		{"missing, not to be created", filepath.Join(dir, "missing"), false, `does not exist; create it, or set create_directory: true`, false},
		{"under a file", filepath.Join(file, "queue"), true, `cannot be created: "` + file + `" is a file`, false},
		{"not writable", locked, false, `"` + locked + `" cannot be written by this user`, true},
		{"under one not writable", filepath.Join(locked, "queue"), true, `cannot be created: "` + locked + `" is not writable by this user`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.root && os.Geteuid() == 0 {
				t.Skip("root writes anywhere")
			}
			err := settingFilesConverter{}.Convert(context.Background(), conf(c.dir, c.create))
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// TestValidateRefusesUnusableQueueDir: validate refuses gateway.yaml whose queue directory cannot
// be created, naming ITL_QUEUE_DIR.
func TestValidateRefusesUnusableQueueDir(t *testing.T) {
	setConfigEnv(t)
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	queue := filepath.Join(file, "queue")
	out, code := otelcolItl(t, []string{"ITL_QUEUE_DIR=" + queue}, "validate", "--config", filepath.Join("..", "..", "exporter-config", "gateway.yaml"))
	if code != 1 {
		t.Fatalf("exit status %d, want 1\n%s", code, out)
	}
	for _, want := range []string{`extensions::file_storage::directory: "` + queue + `" cannot be created`, `ITL_QUEUE_DIR="` + queue + `"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}
