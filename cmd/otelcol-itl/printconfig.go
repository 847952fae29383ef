package main

import (
	"context"
	"strings"

	"go.opentelemetry.io/collector/confmap"

	"github.com/otelitl/itl/internal/urlpass"
)

// urlPasswords returns the converter print-config runs last when it prints the configuration
// redacted (its default --mode): it writes the password of every URL in the configuration as
// xxxxx, as url.URL.Redacted does and as the notes on variables already did, and changes nothing
// else. The collector's print-config redacts the values its components mark secret
// (configopaque: headers, tokens) and printed a URL in a plain string field as it was, so that
// OTLP_HTTP_URL=https://user:password@backend showed the password. What is printed is the
// configuration as the collector reads it, the passwords aside: the converter runs after the
// others, which check the real values, and print-config formats the result itself.
func urlPasswords() confmap.ConverterFactory {
	return confmap.NewConverterFactory(func(confmap.ConverterSettings) confmap.Converter { return urlPasswordsConverter{} })
}

type urlPasswordsConverter struct{}

func (urlPasswordsConverter) Convert(_ context.Context, conf *confmap.Conf) error {
	changed, ok := redactedOnly(conf.ToStringMap())
	if !ok {
		return nil
	}
	// Only the keys that change are merged: the others keep what the resolver made of them (a
	// variable's digits, which a string field reads as written).
	return conf.Merge(confmap.NewFromStringMap(changed.(map[string]any)))
}

// redactedOnly returns, of v, the map keys whose values hold a URL with a password, with the
// password redacted, and whether there are any. A list is returned whole, as a merge replaces a
// list whole.
func redactedOnly(v any) (any, bool) {
	m, isMap := v.(map[string]any)
	if !isMap {
		return redactedAll(v)
	}
	out := map[string]any{}
	for k, x := range m {
		if r, ok := redactedOnly(x); ok {
			out[k] = r
		}
	}
	return out, len(out) > 0
}

// redactedAll returns v with the password of every URL in it redacted, and whether there was one.
func redactedAll(v any) (any, bool) {
	switch v := v.(type) {
	case string:
		// A URL: with a scheme, which urlpass.Redact needs to tell user:password@host from other text.
		if r := urlpass.Redact(v); strings.Contains(v, "://") && r != v {
			return r, true
		}
	case map[string]any:
		out, found := make(map[string]any, len(v)), false
		for k, x := range v {
			r, ok := redactedAll(x)
			out[k], found = r, found || ok
		}
		return out, found
	case []any:
		out, found := make([]any, len(v)), false
		for i, x := range v {
			r, ok := redactedAll(x)
			out[i], found = r, found || ok
		}
		return out, found
	}
	return v, false
}
