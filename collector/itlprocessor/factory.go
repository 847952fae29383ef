// Package itlprocessor provides the itl traces processor: it annotates each generation span (each
// model call) with its derived figures for trace backends: from a chunk timeline, the time to first
// chunk, time per output token, gap percentiles, the largest gap and stalls; without one, the time
// to first chunk another instrumentation wrote under its own name, in seconds.
//
// Its settings (stall_threshold, max_chunks, chunk_event_names, excluded_operations,
// excluded_scopes, compact_events, drop_timeline, keep_client_figures), their defaults and ranges, the attributes it writes and its own
// telemetry are in the README beside this package, with the pipeline that keeps per-gap metrics and
// stores small spans; every setting is checked at start, and a bad one named with its fix. The span
// contract it reads is github.com/otelitl/itl/itlconv (SPEC.md).
package itlprocessor

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/internal/poolgate"
)

// Type is the processor's type in collector configuration.
var Type = component.MustNewType("itl")

// Stability of the traces processor.
const Stability = component.StabilityLevelAlpha

// ScopeName is the instrumentation scope of the processor's own telemetry.
const ScopeName = "github.com/otelitl/itl/collector/itlprocessor"

// NewFactory returns the itl processor's factory.
func NewFactory() processor.Factory {
	return processor.NewFactory(Type, createDefaultConfig, processor.WithTraces(createTraces, Stability))
}

func createDefaultConfig() component.Config {
	return &Config{Config: genaispan.DefaultConfig(), KeepClientFigures: true}
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	poolgate.Warn(set.Logger)
	p, err := newITLProcessor(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	return processorhelper.NewTraces(ctx, set, cfg, next, p.processTraces,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
}
