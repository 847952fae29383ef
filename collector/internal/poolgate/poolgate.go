// Package poolgate warns when the collector runs with pdata's proto pooling on, the alpha feature
// gate pdata.useProtoPooling, under which collector v0.165 loses data in the layout the
// itl_metrics connector's README recommends.
//
// Why: with the gate on, each node of a pipeline takes ownership of the data it is handed, unless
// the data is owned already, and gives the data's protos back to pdata's pools when it returns. A
// batch processor hands each new batch to the pipeline's exporters and connectors one after the
// other; the first of them takes ownership of the batch, and gives it back to the pools when it
// returns, while the next still has to read it. The next consumer then exports recycled protos:
// spans go out empty, or the exporter panics while it encodes them. bench/pipeline's fanout_pool
// configuration shows it with no component of ours (a batch processor fanned out to the debug
// exporter and an OTLP exporter); with the batching in the exporter, the receiver's request is
// owned before the fanout and nothing is lost.
//
// Nothing in a component can tell its pipeline's layout, so the warning is given whenever the gate
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
const Message = "the " + ID + " feature gate is on: in collector v0.165 it loses spans where a batch processor feeds " +
	"more than one exporter or connector (processors: [itl, batch] with exporters: [itl_metrics, otlp]): " +
	"each batch goes back to pdata's pools when the first of them returns, while the next still reads it, " +
	"which then exports empty spans or panics. Batch in the exporter instead (sending_queue::batch, as " +
	"exporter-config/otlp.yaml does), or turn the gate off (--feature-gates=-" + ID + ")"

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
