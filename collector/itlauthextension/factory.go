// Package itlauthextension provides the itl_auth extension: a server authenticator that passes on
// the decisions of another one (contrib's bearertokenauth, say), and makes its refusals visible on
// the receiving side. A request the other authenticator refuses is counted in
// otelcol_extension_itl_auth_refused{protocol, reason} and logged, at most one line every
// log_interval, with the client's address, the refusals since the previous line and the fix; never
// a token.
//
// Why: a receiver that refuses a client's token (gRPC Unauthenticated, HTTP 401) counts and logs
// nothing in collector v0.165 (neither configgrpc's and confighttp's auth interceptors nor
// bearertokenauth do); the refusal shows only in the client's log, and only the client's data is
// lost (a permanent error, not retried). The collector's own rpc.server.* and http.server.*
// metrics carry the status code only at service.telemetry.metrics.level: detailed, which also
// turns on every other detailed instrument, and nothing logs a line. Its settings are in the README
// beside this package.
package itlauthextension

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
)

// Type is the extension's type in collector configuration.
var Type = component.MustNewType("itl_auth")

// Stability of the extension.
const Stability = component.StabilityLevelAlpha

// ScopeName is the instrumentation scope of the extension's own telemetry.
const ScopeName = "github.com/otelitl/itl/collector/itlauthextension"

// defaultLogInterval is the least time between two log lines of one extension.
const defaultLogInterval = time.Minute

// NewFactory returns the itl_auth extension's factory.
func NewFactory() extension.Factory {
	return extension.NewFactory(Type, createDefaultConfig, createExtension, Stability)
}

func createDefaultConfig() component.Config {
	return &Config{LogInterval: defaultLogInterval}
}

func createExtension(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newAuth(set, cfg.(*Config))
}
