package main

import (
	"context"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.opentelemetry.io/collector/confmap"
)

// TestTLSFilesReadable: a tls section naming a file that cannot be read is refused with the key,
// the path and the fix, where validate passed it and the collector failed only as the component
// started. Empty values (the system's roots, no client certificate) and settings outside tls
// sections are left alone.
func TestTLSFilesReadable(t *testing.T) {
	dir := t.TempDir()
	pem, _ := writeCertKey(t, dir, "ca")
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
		{"a path beginning with ~", map[string]any{"exporters": map[string]any{"otlp_grpc": map[string]any{"tls": map[string]any{"ca_file": "~/no-such-otelcol-itl-ca.pem"}}}},
			[]string{`exporters::otlp_grpc::tls::ca_file: "~/no-such-otelcol-itl-ca.pem" does not exist: it begins with ~, which nothing expanded`, `so it names a directory "~" in the working directory; give the full path`}},
		{"a directory", map[string]any{"receivers": map[string]any{"otlp": map[string]any{"protocols": map[string]any{"grpc": map[string]any{"tls": map[string]any{"cert_file": dir, "key_file": pem}}}}}},
			[]string{`receivers::otlp::protocols::grpc::tls::cert_file: "` + dir + `" is a directory`}},
		{"every one, in order", map[string]any{"exporters": map[string]any{"otlp_http": map[string]any{"tls": map[string]any{"key_file": missing, "cert_file": missing}}}},
			[]string{"otlp_http::tls::cert_file", "otlp_http::tls::key_file"}},
		{"not a tls section", map[string]any{"extensions": map[string]any{"x": map[string]any{"ca_file": missing, "tls_settings": map[string]any{"ca_file": missing}}}}, nil},
		{"inside a list", map[string]any{"service": map[string]any{"telemetry": map[string]any{"metrics": map[string]any{"readers": []any{map[string]any{"push": map[string]any{"tls": map[string]any{"ca_file": missing}}}}}}}},
			[]string{"service::telemetry::metrics::readers::[0]::push::tls::ca_file"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkFilesRefused(t, c.conf, c.want)
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
	// A symbolic link whose target does not exist (a volume not mounted, a directory removed):
	// os.Stat says it does not exist, and the extension's MkdirAll fails at start on the link,
	// "mkdir ...: file exists", where validate passed it.
	dangling, gone := filepath.Join(dir, "dangling"), filepath.Join(dir, "gone", "queue")
	if err := os.Symlink(gone, dangling); err != nil {
		t.Fatal(err)
	}
	linkedDir := filepath.Join(dir, "linked")
	if err := os.Symlink(dir, linkedDir); err != nil {
		t.Fatal(err)
	}
	cwd, err := os.Getwd()
	if err != nil {
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
		{"beginning with ~", "~/otel-queue", true, `extensions::file_storage/queue::directory: "~/otel-queue" begins with ~, which nothing expanded`, false},
		{"~ alone", "~", true, `it would create a directory named "~" in the working directory; give the full path`, false},
		{"another user's ~", "~alice/queue", true, `it would create a directory named "~alice" in the working directory; give the full path, such as /home/alice/queue`, false},
		{"a ~ further on", filepath.Join(dir, "~", "queue"), true, "", false},
		{"relative", "otel-queue", true, `extensions::file_storage/queue::directory: "otel-queue" is relative: the collector finds it from its working directory, which differs between a shell and a service (systemd starts one in /), so a start from elsewhere would leave the queue's unsent spans behind; give the full path, such as ` + filepath.Join(cwd, "otel-queue"), false},
		{"relative, from here", "./q/../otel-queue", true, `"./q/../otel-queue" is relative`, false},
		{"a link to a directory", linkedDir, false, "", false},
		{"a link to nothing", dangling, true, `extensions::file_storage/queue::directory: "` + dangling + `" is a symbolic link to "` + gone + `", which does not exist, and which the collector does not create through the link; create "` + gone + `", or give another directory`, false},
		{"a link to nothing, not to be created", dangling, false, `"` + dangling + `" is a symbolic link to "` + gone + `", which does not exist`, false},
		{"under a link to nothing", filepath.Join(dangling, "queue"), true, `"` + filepath.Join(dangling, "queue") + `" cannot be created: "` + dangling + `" is a symbolic link to "` + gone + `", which does not exist; create "` + gone + `"`, false},
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

// TestQueueFileOfAnotherUser: a queue's file an earlier run left that this user cannot open for
// writing (the agent run once as root, then as its service user) is refused, naming the directory's
// key, the file and the fix, where validate passed and the start failed with "open ...: permission
// denied". A file of another exporter, or this user's own, is left alone.
func TestQueueFileOfAnotherUser(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root opens any file; checked by hand as nobody (setpriv), see the commit")
	}
	dir := t.TempDir()
	files := map[string]os.FileMode{
		"exporter_otlp_grpc__traces":  0o400, // not writable by this user, as root's 0600 file is not
		"exporter_otlp_http__traces":  0o400, // another exporter's
		"exporter_otlp_grpc_b_traces": 0o600,
	}
	for name, mode := range files {
		if err := os.WriteFile(filepath.Join(dir, name), nil, mode); err != nil {
			t.Fatal(err)
		}
	}
	conf := func(exporter string) *confmap.Conf {
		return confmap.NewFromStringMap(map[string]any{
			"extensions": map[string]any{"file_storage": map[string]any{"directory": dir, "create_directory": true}},
			"exporters":  map[string]any{exporter: map[string]any{"sending_queue": map[string]any{"storage": "file_storage"}}}})
	}
	err := settingFilesConverter{}.Convert(context.Background(), conf("otlp_grpc"))
	want := `extensions::file_storage::directory: "` + dir + `" holds the queue's file exporter_otlp_grpc__traces of an earlier run, which this user cannot open for writing`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
	if err := (settingFilesConverter{}).Convert(context.Background(), conf("otlp_grpc/b")); err != nil {
		t.Errorf("this user's own file refused: %v", err)
	}
}

// TestValidateRefusesUnusableQueueDir: validate refuses gateway.yaml and agent.yaml, whose queues
// are on disk, when the queue directory cannot be created, or begins with a ~ nothing expanded
// (which validate passed, and the collector created as a directory named "~"), naming
// ITL_QUEUE_DIR.
func TestValidateRefusesUnusableQueueDir(t *testing.T) {
	setConfigEnv(t)
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ queue, want string }{
		{filepath.Join(file, "queue"), "cannot be created"},
		{"~/otel-queue", "begins with ~, which nothing expanded"},
		{"otel-queue", "is relative"},
	} {
		for _, config := range []string{"gateway.yaml", "agent.yaml"} {
			out, code := otelcolItl(t, []string{"ITL_QUEUE_DIR=" + c.queue}, "validate", "--config", filepath.Join("..", "..", "exporter-config", config))
			if code != 1 {
				t.Errorf("%s, ITL_QUEUE_DIR=%s: exit status %d, want 1\n%s", config, c.queue, code, out)
				continue
			}
			for _, want := range []string{`extensions::file_storage::directory: "` + c.queue + `" ` + c.want, `ITL_QUEUE_DIR="` + c.queue + `"`} {
				if !strings.Contains(out, want) {
					t.Errorf("%s: the output lacks %q:\n%s", config, want, out)
				}
			}
		}
	}
}

// TestTLSFileContents: a tls section's files are refused at validate when the component could not
// load them, with the key, the path and the fix, where validate passed them and the collector
// failed at start without either ("failed to load CA CertPool File: failed to parse cert"): a CA
// file that is not a PEM certificate (DER, text, a key, empty), a certificate and a key given
// swapped or not a pair. What configtls takes is taken: a bundle with other blocks beside a
// certificate, one file holding both the certificate and its key.
func TestTLSFileContents(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeCertKey(t, dir, "client")
	_, otherKey := writeCertKey(t, dir, "other")
	write := func(name string, data []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	certPEM, _ := os.ReadFile(cert)
	keyPEM, _ := os.ReadFile(key)
	block, _ := pem.Decode(certPEM)
	der := write("ca.der", block.Bytes)
	text := write("ca.txt", []byte("not a certificate\n"))
	empty := write("empty.pem", nil)
	broken := write("broken.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")}))
	bundle := write("bundle.pem", append(pem.EncodeToMemory(&pem.Block{Type: "TRUSTED COMMENT", Bytes: []byte("x")}), certPEM...))
	both := write("both.pem", append(append([]byte{}, certPEM...), keyPEM...))
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	exporter := func(tls map[string]any) map[string]any {
		return map[string]any{"exporters": map[string]any{"otlp_grpc": map[string]any{"tls": tls}}}
	}
	const fix = "; give the CA's certificate as a PEM file (-----BEGIN CERTIFICATE-----)"
	for _, c := range []struct {
		name string
		conf map[string]any
		want []string // substrings of the error, in order; none: no error
	}{
		{"a PEM CA, a certificate and its key", exporter(map[string]any{"ca_file": cert, "cert_file": cert, "key_file": key}), nil},
		{"a bundle with another block", exporter(map[string]any{"ca_file": bundle}), nil},
		{"the certificate and its key in one file", exporter(map[string]any{"cert_file": both, "key_file": both}), nil},
		{"a named pipe is not read", exporter(map[string]any{"ca_file": fifo}), nil},
		{"a certificate without its key (configtls says so)", exporter(map[string]any{"cert_file": text}), nil},
		{"a DER CA", exporter(map[string]any{"ca_file": der}),
			[]string{`exporters::otlp_grpc::tls::ca_file: "` + der + `" is not a PEM certificate: it is a DER (binary) certificate; convert it (openssl x509 -inform der -in ` + der + ` -out ca.pem) and give the PEM file`}},
		{"a text file as CA", exporter(map[string]any{"ca_file": text}),
			[]string{`exporters::otlp_grpc::tls::ca_file: "` + text + `" is not a PEM certificate: it holds no PEM block` + fix}},
		{"a key as CA", exporter(map[string]any{"ca_file": key}),
			[]string{`ca_file: "` + key + `" is not a PEM certificate: it holds a private key (a "PRIVATE KEY" block)` + fix}},
		{"an empty CA", exporter(map[string]any{"ca_file": empty}), []string{`ca_file: "` + empty + `" is not a PEM certificate: it is empty` + fix}},
		{"a CERTIFICATE block that does not parse", exporter(map[string]any{"ca_file": broken}),
			[]string{`ca_file: "` + broken + `" is not a PEM certificate: its CERTIFICATE block does not parse` + fix}},
		{"a receiver's client CA", map[string]any{"receivers": map[string]any{"otlp": map[string]any{"protocols": map[string]any{"grpc": map[string]any{"tls": map[string]any{
			"cert_file": cert, "key_file": key, "client_ca_file": text}}}}}},
			[]string{`receivers::otlp::protocols::grpc::tls::client_ca_file: "` + text + `" is not a PEM certificate`}},
		{"swapped", exporter(map[string]any{"cert_file": key, "key_file": cert}),
			[]string{`exporters::otlp_grpc::tls::cert_file, key_file: "` + key + `" holds a private key and "` + cert + `" a certificate: the two are given swapped; give the certificate in cert_file and its key in key_file`}},
		{"not a pair", exporter(map[string]any{"cert_file": cert, "key_file": otherKey}),
			[]string{`exporters::otlp_grpc::tls::cert_file, key_file: "` + cert + `" and "` + otherKey + `" are not a certificate and its private key (tls: private key does not match public key); give the certificate's PEM file in cert_file and the PEM file of its private key in key_file`}},
		{"a DER certificate", exporter(map[string]any{"cert_file": der, "key_file": key}),
			[]string{`exporters::otlp_grpc::tls::cert_file, key_file: "` + der + `" is a DER (binary) certificate, where cert_file takes PEM; convert it (openssl x509 -inform der -in ` + der + ` -out cert.pem) and give the PEM file`}},
		{"a certificate as the key", exporter(map[string]any{"cert_file": cert, "key_file": cert}),
			[]string{`are not a certificate and its private key (tls: found a certificate rather than a key in the PEM for the private key)`}},
		{"each, in order", exporter(map[string]any{"ca_file": text, "cert_file": key, "key_file": cert}),
			[]string{"tls::ca_file: ", "tls::cert_file, key_file: "}},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkFilesRefused(t, c.conf, c.want)
		})
	}
}

// TestTLSFileFaultOnce: the same file with the same fault under several keys (gateway.yaml's gRPC
// and HTTP receivers share TLS_CLIENT_CA_FILE, TLS_CERT_FILE and TLS_KEY_FILE) is one error, naming
// every key, where it was one a key, the same path and fix in each. Keys whose files differ keep an
// error each.
func TestTLSFileFaultOnce(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeCertKey(t, dir, "server")
	text := filepath.Join(dir, "ca.txt")
	if err := os.WriteFile(text, []byte("not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	receivers := func(grpc, http map[string]any) map[string]any {
		return map[string]any{"receivers": map[string]any{"otlp": map[string]any{"protocols": map[string]any{
			"grpc": map[string]any{"tls": grpc}, "http": map[string]any{"tls": http}}}}}
	}
	const grpc, http = "receivers::otlp::protocols::grpc::tls::", "receivers::otlp::protocols::http::tls::"
	for _, c := range []struct {
		name string
		conf map[string]any
		want string // the whole error
	}{
		{"a CA that is not PEM", receivers(map[string]any{"client_ca_file": text}, map[string]any{"client_ca_file": text}),
			grpc + "client_ca_file and " + http + `client_ca_file: "` + text + `" is not a PEM certificate: it holds no PEM block; give the CA's certificate as a PEM file (-----BEGIN CERTIFICATE-----)`},
		{"a missing CA", receivers(map[string]any{"client_ca_file": missing}, map[string]any{"client_ca_file": missing}),
			grpc + "client_ca_file and " + http + `client_ca_file: "` + missing + `" does not exist; give the path of the PEM file, or leave the setting empty`},
		{"a certificate and key swapped", receivers(map[string]any{"cert_file": key, "key_file": cert}, map[string]any{"cert_file": key, "key_file": cert}),
			grpc + "cert_file, key_file and " + http + `cert_file, key_file: "` + key + `" holds a private key and "` + cert + `" a certificate: the two are given swapped; give the certificate in cert_file and its key in key_file`},
		{"each fault once, in order", receivers(map[string]any{"cert_file": missing, "client_ca_file": text}, map[string]any{"cert_file": missing, "client_ca_file": text}),
			grpc + "cert_file and " + http + `cert_file: "` + missing + `" does not exist; give the path of the PEM file` + "\n" +
				grpc + "client_ca_file and " + http + `client_ca_file: "` + text + `" is not a PEM certificate: it holds no PEM block; give the CA's certificate as a PEM file (-----BEGIN CERTIFICATE-----)`},
		{"a missing key, which cannot be left empty", receivers(map[string]any{"cert_file": cert, "key_file": missing}, map[string]any{"cert_file": cert, "key_file": missing}),
			grpc + "key_file and " + http + `key_file: "` + missing + `" does not exist; give the path of the PEM file`},
		{"different files, an error each", receivers(map[string]any{"client_ca_file": text}, map[string]any{"client_ca_file": missing}),
			grpc + `client_ca_file: "` + text + `" is not a PEM certificate: it holds no PEM block; give the CA's certificate as a PEM file (-----BEGIN CERTIFICATE-----)` + "\n" +
				http + `client_ca_file: "` + missing + `" does not exist; give the path of the PEM file, or leave the setting empty`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := settingFilesConverter{}.Convert(context.Background(), confmap.NewFromStringMap(c.conf))
			if err == nil || err.Error() != c.want {
				t.Errorf("error\n%v\nwant\n%s", err, c.want)
			}
		})
	}
}

// TestValidateNamesASharedFileOnce: validate with gateway.yaml and a TLS_CLIENT_CA_FILE that is not
// PEM, or does not exist, prints the fault once, naming both receivers' keys, and the variable once.
func TestValidateNamesASharedFileOnce(t *testing.T) {
	setConfigEnv(t)
	dir := t.TempDir()
	text := filepath.Join(dir, "ca.txt")
	if err := os.WriteFile(text, []byte("not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const keys = "receivers::otlp::protocols::grpc::tls::client_ca_file and receivers::otlp::protocols::http::tls::client_ca_file"
	for _, c := range []struct{ file, fault string }{
		{text, "is not a PEM certificate"},
		{filepath.Join(dir, "missing.pem"), "does not exist"},
	} {
		out, code := otelcolItl(t, []string{"TLS_CLIENT_CA_FILE=" + c.file}, "validate", "--config", filepath.Join("..", "..", "exporter-config", "gateway.yaml"))
		if code != 1 {
			t.Fatalf("exit status %d, want 1\n%s", code, out)
		}
		for _, want := range []string{
			keys + `: "` + c.file + `" ` + c.fault,
			"\n  " + keys + ` are "${env:TLS_CLIENT_CA_FILE:-}" in ` + filepath.Join("..", "..", "exporter-config", "gateway.yaml") + `: TLS_CLIENT_CA_FILE="` + c.file + `"`,
		} {
			if strings.Count(out, want) != 1 {
				t.Errorf("the output holds %q %d times, want once:\n%s", want, strings.Count(out, want), out)
			}
		}
		if n := strings.Count(out, c.fault); n != 1 {
			t.Errorf("%q printed %d times, want once:\n%s", c.fault, n, out)
		}
	}
}

// TestValidateRefusesBadTLSFiles: otelcol-itl validate refuses agent.yaml with a CA file that is
// not PEM, or a client certificate and key given swapped, naming the key, the path and the
// variables behind them, where it said the configuration was valid.
func TestValidateRefusesBadTLSFiles(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeCertKey(t, dir, "agent")
	certPEM, _ := os.ReadFile(cert)
	block, _ := pem.Decode(certPEM)
	der := filepath.Join(dir, "gateway-ca.der")
	if err := os.WriteFile(der, block.Bytes, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env  []string
		want []string
	}{
		{[]string{"OTLP_CA_FILE=" + der},
			[]string{`exporters::otlp_grpc::tls::ca_file: "` + der + `" is not a PEM certificate`, `OTLP_CA_FILE="` + der + `"`}},
		{[]string{"OTLP_CLIENT_CERT_FILE=" + key, "OTLP_CLIENT_KEY_FILE=" + cert},
			[]string{`exporters::otlp_grpc::tls::cert_file, key_file: "` + key + `" holds a private key and "` + cert + `" a certificate: the two are given swapped`,
				`OTLP_CLIENT_CERT_FILE="` + key + `"`, `OTLP_CLIENT_KEY_FILE="` + cert + `"`}},
	} {
		out, code := otelcolItl(t, append([]string{"OTLP_ENDPOINT=gateway.example:4317", "OTLP_TOKEN=t"}, c.env...),
			"validate", "--config", filepath.Join("..", "..", "exporter-config", "agent.yaml"))
		if code != 1 {
			t.Fatalf("%v: exit status %d, want 1\n%s", c.env, code, out)
		}
		for _, want := range c.want {
			if !strings.Contains(out, want) {
				t.Errorf("%v: the output lacks %q:\n%s", c.env, want, out)
			}
		}
	}
}

// checkFilesRefused runs the setting-files converter on conf: with want empty it must accept it,
// else refuse it with an error naming each of want, in that order.
func checkFilesRefused(t *testing.T, conf map[string]any, want []string) {
	t.Helper()
	err := settingFilesConverter{}.Convert(context.Background(), confmap.NewFromStringMap(conf))
	if len(want) == 0 {
		if err != nil {
			t.Errorf("refused: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("accepted, want %q", want)
	}
	last := -1
	for _, w := range want {
		i := strings.Index(err.Error(), w)
		if i < 0 || i < last {
			t.Errorf("the error lacks %q (or names it out of order):\n%v", w, err)
		}
		last = i
	}
}
