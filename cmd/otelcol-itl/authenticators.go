package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/confmap"
)

// authenticators refuses, at validate and before start, an itl_auth extension whose authenticator
// is not among service::extensions. validate passed it, and the start failed with the collector's
// "failed to build extensions: unable to find extension bearertokenauth/clients on which extension
// itl_auth/clients depends", which names neither the key nor the fix: itl_auth declares the
// authenticator a dependency, so the collector fails before the extension's own check can speak.
// Whether the authenticator authenticates servers' requests is left to that check, at start.
func authenticators() confmap.ConverterFactory {
	return confmap.NewConverterFactory(func(confmap.ConverterSettings) confmap.Converter { return authenticatorsConverter{} })
}

type authenticatorsConverter struct{}

func (authenticatorsConverter) Convert(_ context.Context, conf *confmap.Conf) error {
	extensions, _ := conf.Get("extensions").(map[string]any)
	listed, _ := conf.Get("service::extensions").([]any)
	inService := func(id string) bool {
		return slices.ContainsFunc(listed, func(v any) bool { s, _ := v.(string); return strings.TrimSpace(s) == id })
	}
	var errs []error
	for _, id := range sortedKeys(extensions) {
		if typ, _, _ := strings.Cut(id, "/"); typ != "itl_auth" || !inService(id) {
			continue // an extension the service does not run is not started, nor its authenticator needed
		}
		settings, _ := extensions[id].(map[string]any)
		auth, _ := settings["authenticator"].(string)
		auth = strings.TrimSpace(auth)
		if auth == "" || auth == id {
			continue // the extension's own validation names these
		}
		switch _, configured := extensions[auth]; {
		case inService(auth):
		case configured:
			errs = append(errs, fmt.Errorf("extensions::%s::authenticator: %q is configured but not in service::extensions; list it there, beside %s", id, auth, id))
		default:
			errs = append(errs, fmt.Errorf("extensions::%s::authenticator: %q is not an extension of this configuration; configure it under extensions and list it in service::extensions, or name one that is, such as bearertokenauth/clients", id, auth))
		}
	}
	return errors.Join(errs...)
}
