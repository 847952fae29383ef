package main

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"
)

// TestPrintConfigRedactsURLPasswords: print-config prints an endpoint URL's password as xxxxx, where
// it printed OTLP_HTTP_URL=https://user:s3cr3t@backend as it was, and changes nothing else: the
// output is that of the same URL written with xxxxx, in either format, under either name of the
// subcommand, with the flags before it too. --mode unredacted prints it as it is.
func TestPrintConfigRedactsURLPasswords(t *testing.T) {
	setConfigEnv(t)
	gateway := filepath.Join("..", "..", "exporter-config", "gateway.yaml")
	const secret, redacted = "OTLP_HTTP_URL=https://user:s3cr3t@backend.example:4318", "OTLP_HTTP_URL=https://user:xxxxx@backend.example:4318"
	for _, args := range [][]string{
		{"print-config", "--config", gateway},
		{"print-config", "--format", "json", "--config", gateway},
		{"print-initial-config", "--config", gateway},
		{"--config", gateway, "print-config", "--mode", "Redacted"},
	} {
		got, code := otelcolItl(t, []string{secret}, args...)
		want, wantCode := otelcolItl(t, []string{redacted}, args...)
		if code != 0 || wantCode != 0 {
			t.Fatalf("%v: exit status %d and %d, want 0:\n%s\n%s", args, code, wantCode, got, want)
		}
		if got != want || strings.Contains(got, "s3cr3t") || !strings.Contains(got, "https://user:xxxxx@backend.example:4318") {
			t.Errorf("%v: printed\n%s\nwant what the URL written with xxxxx prints:\n%s", args, got, want)
		}
	}
	got, code := otelcolItl(t, []string{secret}, "print-config", "--mode", "unredacted", "--config", gateway)
	if code != 0 || !strings.Contains(got, "endpoint: https://user:s3cr3t@backend.example:4318") {
		t.Errorf("--mode unredacted: exit status %d; the password is not printed as it is:\n%s", code, got)
	}
}

// TestURLPasswordsConverter: every URL's password is redacted, in a map or a list; what is no
// URL's password is left: text without a scheme, an @ in a query, a URL without a password.
func TestURLPasswordsConverter(t *testing.T) {
	in := map[string]any{
		"exporters": map[string]any{
			"otlp_http":   map[string]any{"endpoint": "https://user:s3cr3t@backend.example", "timeout": "30s"},
			"pasted":      map[string]any{"endpoint": "https://user:s3cr3t#x@backend.example:4318", "path": "https://u:s3cr3t/x@h/p?q=a@b"},
			"other":       map[string]any{"endpoints": []any{"http://a:s3cr3t@one", map[string]any{"url": "dns://b:s3cr3t@two/x"}, 3}},
			"no_password": map[string]any{"endpoint": "https://user@backend.example", "query": "https://backend.example?next=a:b@c", "port": "https://backend.example:8080?next=a:b@c", "ipv6": "https://[::1]?next=a:b@c", "text": "a:b@c"},
		},
		"service": map[string]any{"extensions": []any{"x"}},
	}
	want := map[string]any{
		"exporters": map[string]any{
			"otlp_http":   map[string]any{"endpoint": "https://user:xxxxx@backend.example", "timeout": "30s"},
			"pasted":      map[string]any{"endpoint": "https://user:xxxxx@backend.example:4318", "path": "https://u:xxxxx@h/p?q=a@b"},
			"other":       map[string]any{"endpoints": []any{"http://a:xxxxx@one", map[string]any{"url": "dns://b:xxxxx@two/x"}, 3}},
			"no_password": map[string]any{"endpoint": "https://user@backend.example", "query": "https://backend.example?next=a:b@c", "port": "https://backend.example:8080?next=a:b@c", "ipv6": "https://[::1]?next=a:b@c", "text": "a:b@c"},
		},
		"service": map[string]any{"extensions": []any{"x"}},
	}
	conf := confmap.NewFromStringMap(in)
	if err := (urlPasswordsConverter{}).Convert(context.Background(), conf); err != nil {
		t.Fatal(err)
	}
	if got := conf.ToStringMap(); !reflect.DeepEqual(got, want) {
		t.Errorf("converted to\n%v\nwant\n%v", got, want)
	}
}
