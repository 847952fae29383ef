package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"
)

// TestAuthenticators: an itl_auth extension whose authenticator the service does not run is
// refused with the key, the value and the fix, where validate passed it and the start failed with
// "unable to find extension ... on which extension itl_auth/clients depends".
func TestAuthenticators(t *testing.T) {
	conf := func(itlAuth map[string]any, listed ...any) map[string]any {
		return map[string]any{
			"extensions": map[string]any{"bearertokenauth/clients": map[string]any{"token": "x"}, "itl_auth/clients": itlAuth},
			"service":    map[string]any{"extensions": listed},
		}
	}
	auth := func(id string) map[string]any { return map[string]any{"authenticator": id} }
	const key = `extensions::itl_auth/clients::authenticator: `
	for _, c := range []struct {
		name string
		conf map[string]any
		want string // substring of the error; "": none
	}{
		{"both in the service", conf(auth("bearertokenauth/clients"), "bearertokenauth/clients", "itl_auth/clients"), ""},
		{"itl_auth not run: its authenticator not needed", conf(auth("bearertokenauth/other")), ""},
		{"no authenticator: the extension's own check", conf(map[string]any{}, "itl_auth/clients"), ""},
		{"configured, not listed", conf(auth("bearertokenauth/clients"), "itl_auth/clients"),
			key + `"bearertokenauth/clients" is configured but not in service::extensions; list it there, beside itl_auth/clients`},
		{"not configured", conf(auth("bearertokenauth/other"), "bearertokenauth/clients", "itl_auth/clients"),
			key + `"bearertokenauth/other" is not an extension of this configuration; configure it under extensions and list it in service::extensions`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := authenticatorsConverter{}.Convert(context.Background(), confmap.NewFromStringMap(c.conf))
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// TestValidateRefusesUnlistedAuthenticator: gateway.yaml with bearertokenauth/clients left out of
// service::extensions (a user trimming the list) is refused by validate, naming the key and the
// fix; it was said to be valid, and the start failed.
func TestValidateRefusesUnlistedAuthenticator(t *testing.T) {
	setConfigEnv(t)
	out, code := otelcolItl(t, nil, "validate", "--config", filepath.Join("..", "..", "exporter-config", "gateway.yaml"),
		"--config", "yaml:service::extensions: [itl_auth/clients, health_check, file_storage, pprof]")
	want := `extensions::itl_auth/clients::authenticator: "bearertokenauth/clients" is configured but not in service::extensions`
	if code != 1 || !strings.Contains(out, want) {
		t.Errorf("exit status %d, want 1 with %q:\n%s", code, want, out)
	}
}
