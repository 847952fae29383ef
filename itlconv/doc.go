// Package itlconv is the otelitl contract in one place: every name a generation span or metric of
// otelitl carries, every name of another instrumentation the otelitl collector components read, the
// defaults both sides must agree on (stall threshold, chunk caps, histogram boundaries), and the
// conversion of the compact timeline's microseconds.
//
// The client library (otelitl), the collector components, the examples and the tests all take
// their names from here, or from the OpenTelemetry semantic conventions (semconv v1.41.0 and its
// genaiconv package) where those define them; nothing else spells a name of the contract. SPEC.md,
// beside this file, states the span contract precisely enough to emit it from any language, and
// the figures a reader derives from it; package timeline holds that arithmetic.
package itlconv
