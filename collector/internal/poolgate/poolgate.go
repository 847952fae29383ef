// Package poolgate warns when the collector runs with pdata's proto pooling on, the alpha feature
// gate pdata.useProtoPooling, under which collector v0.165 loses data in layouts our READMEs
// describe.
//
// Why: with the gate on, each node of a pipeline takes ownership of the data it is handed, unless
// the data is owned already, and gives the data's protos back to pdata's pools when it returns.
// Data that no node owns yet and that goes to more than one consumer is then given back when the
// first of them returns, while the next still has to read it; the next exports recycled protos:
// spans go out empty, or the exporter panics while it encodes them. That happens where
//
//   - a batch processor hands its new batches to two exporters or connectors (bench/pipeline's
//     fanout_pool: the debug exporter and an OTLP exporter, no component of ours); and where
//   - a receiver's requests go to two pipelines neither of which changes them, so that the
//     collector makes no copy (split_pool: the itl_metrics connector alone in one, an exporter
//     alone in the other).
//
// With the batching in the exporter and one pipeline, as exporter-config/otlp.yaml has it, the
// first processor owns each request before the fanout, and nothing is lost.
//
// Nothing in a component can tell its pipelines' layout, so the warning is given whenever the gate
// is on, once per process.
package poolgate

import (
	"sync/atomic"

	"go.opentelemetry.io/collector/featuregate"
	"go.uber.org/zap"
)

// ID is the feature gate's id.
const ID = "pdata.useProtoPooling"

// Message is the warning, which says what is lost, where, and what to do.
const Message = "the " + ID + " feature gate is on: in collector v0.165 it loses spans that two exporters or connectors share " +
	"before a processor has taken them: a batch processor before two of them (processors: [itl, batch] with " +
	"exporters: [itl_metrics, otlp]), or a receiver in two pipelines that change nothing. The data goes back to " +
	"pdata's pools when the first of them returns, while the next still reads it, which then exports empty spans " +
	"or panics. Use one pipeline with the batching in the exporter (sending_queue::batch, as " +
	"otelitl's exporter-config/otlp.yaml does, github.com/otelitl/itl), or turn the gate off (--feature-gates=-" + ID + ")"

var warned atomic.Bool

// Enabled reports whether the gate is registered in r and on.
func Enabled(r *featuregate.Registry) bool {
	on := false
	r.VisitAll(func(g *featuregate.Gate) {
		if g.ID() == ID {
			on = g.IsEnabled()
		}
	})
	return on
}

// Warn logs Message at warn level, once per process, when the gate is on in the global registry,
// which the collector's --feature-gates flag sets before any component is made.
func Warn(logger *zap.Logger) {
	if Enabled(featuregate.GlobalRegistry()) && warned.CompareAndSwap(false, true) {
		logger.Warn(Message, zap.String("feature_gate", ID))
	}
}
