// Package itlmetricsconnector provides the itl_metrics connector: it turns the chunk timelines of
// generation spans into metrics (time to first chunk, one observation per inter-chunk gap, time per
// output token, the largest gap, duration, token usage and stalls) for any metrics backend. SERVER
// spans feed the server metrics (gen_ai.server.*), and otelitl.generations counts the model calls
// by how much of their timing is known.
//
// Its settings (dimensions, histograms, temporality, flush interval, expiry, cardinality limit,
// exemplars, the deduplication of retried spans, and the span reader's settings it shares with the
// itl processor), their defaults and ranges, what it emits, how it delivers on failure and its own
// telemetry are in the README beside this package; every setting is checked at start, and a bad
// one named with its fix.
package itlmetricsconnector

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/internal/poolgate"
	"github.com/otelitl/itl/itlconv"
)

// Type is the connector's type in collector configuration.
var Type = component.MustNewType("itl_metrics")

// Stability of the traces-to-metrics connector.
const Stability = component.StabilityLevelAlpha

// ScopeName is the instrumentation scope of the metrics the connector emits and of its own
// telemetry.
const ScopeName = "github.com/otelitl/itl/collector/itlmetricsconnector"

// Version is reported in the instrumentation scope of the emitted metrics.
const Version = "0.1.0"

const (
	defaultCardinalityLimit = 10000
	defaultValueMaxLength   = itlconv.MaxValueLength
	defaultExemplars        = 5
	defaultFlushInterval    = 15 * time.Second
	defaultExpiration       = 5 * time.Minute
)

// DefaultDimensions are the metric attributes by default.
var DefaultDimensions = []string{
	string(semconv.ServiceNameKey), string(semconv.GenAIOperationNameKey), string(semconv.GenAIProviderNameKey),
	string(semconv.GenAIRequestModelKey), string(semconv.GenAIResponseModelKey), string(semconv.ServerAddressKey),
}

// NewFactory returns the itl_metrics connector's factory.
func NewFactory() connector.Factory {
	return connector.NewFactory(Type, createDefaultConfig,
		connector.WithTracesToMetrics(createTracesToMetrics, Stability))
}

func createDefaultConfig() component.Config {
	dims := make([]Dimension, len(DefaultDimensions))
	for i, n := range DefaultDimensions {
		dims[i] = Dimension{Name: n}
	}
	return &Config{
		Dimensions:                  dims,
		DimensionValueMaxLength:     defaultValueMaxLength,
		AggregationTemporality:      cumulative,
		MetricsFlushInterval:        defaultFlushInterval,
		MetricsExpiration:           defaultExpiration,
		AggregationCardinalityLimit: defaultCardinalityLimit,
		Exemplars:                   ExemplarsConfig{Enabled: true, MaxPerDataPoint: defaultExemplars},
		Config:                      genaispan.DefaultConfig(),
	}
}

func createTracesToMetrics(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Traces, error) {
	poolgate.Warn(set.Logger)
	return newConnector(set, cfg.(*Config), next)
}
