package otelitl

import (
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Encoding chooses how a generation's timeline is written to its span.
type Encoding int

const (
	// EncodingAuto writes chunk events while the chunk count is within the event limit and the
	// compact attributes beyond it, so that a timeline is never truncated. It is the default.
	EncodingAuto Encoding = iota
	// EncodingEvents always writes one "otelitl.chunk" event per chunk. Past the SDK's event limit
	// the SDK drops the oldest events; readers then see an incomplete timeline.
	EncodingEvents
	// EncodingCompact always writes the "otelitl.chunk.offsets_us" (and, when needed,
	// "otelitl.chunk.tokens") array attributes: under a third of the wire size of events (7 bytes
	// per chunk against 26 for replies up to 268 s), and a fifteenth of the cost at End.
	EncodingCompact
)

// String returns the encoding's name: "auto", "events" or "compact".
func (e Encoding) String() string {
	switch e {
	case EncodingAuto:
		return "auto"
	case EncodingEvents:
		return "events"
	case EncodingCompact:
		return "compact"
	}
	return fmt.Sprintf("Encoding(%d)", int(e))
}

// config is the resolved configuration of an Instrumentation.
type config struct {
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	encoding       Encoding
	eventLimit     int
	attrs          []attribute.KeyValue
	cycleCounter   bool
	maxChunks      int
}

// Option configures an Instrumentation.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithTracerProvider sets the TracerProvider the spans come from. The default is the global one,
// otel.GetTracerProvider().
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) {
		if tp != nil {
			c.tracerProvider = tp
		}
	})
}

// WithMeterProvider turns on the GenAI metrics, recorded from that MeterProvider. A CLIENT
// generation records the client metrics (time to first chunk, one time per output chunk per gap,
// operation duration and token usage); a SERVER generation ([Request].Kind) records the server
// metrics instead (gen_ai.server.time_to_first_token, gen_ai.server.time_per_output_token per gap
// over the later chunk's tokens, gen_ai.server.request.duration), and no token usage, for which
// semantic conventions v1.41 define no server metric. Without it, or with nil, no metrics are
// recorded: the collector's itl_metrics connector derives the same metrics from the spans.
//
// Metrics do not depend on trace sampling: a generation whose span is not sampled still records
// its metrics.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.meterProvider = mp })
}

// WithEncoding chooses how timelines are written; see [Encoding]. The default is [EncodingAuto].
func WithEncoding(e Encoding) Option {
	return optionFunc(func(c *config) {
		if e >= EncodingAuto && e <= EncodingCompact {
			c.encoding = e
		}
	})
}

// WithEventLimit sets the largest chunk count that [EncodingAuto] still writes as events. Set it to
// your SDK's span event limit (sdk/trace.SpanLimits.EventCountLimit, 128 by default) less the events
// you add to generation spans yourself. Values below 0 are ignored; 0 makes Auto always compact.
func WithEventLimit(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 0 {
			c.eventLimit = n
		}
	})
}

// WithAttributes adds attributes to every generation span, after the GenAI ones. They are not added
// to metrics, whose attributes are limited to the semantic conventions' to bound cardinality.
func WithAttributes(attrs ...attribute.KeyValue) Option {
	return optionFunc(func(c *config) { c.attrs = append(c.attrs, attrs...) })
}

// WithCycleCounter chooses the clock that times chunks. On (the default), Chunk reads the CPU's
// time-stamp counter where the kernel itself keeps the monotonic clock with it (Linux on amd64 with
// the "tsc" clock source), and End converts the readings to the monotonic clock's scale by
// interpolating between readings of both clocks taken at Start and at End: a chunk then costs less
// than half as much, and its arrival is still measured on the monotonic clock. Elsewhere, or with
// WithCycleCounter(false), Chunk reads the monotonic clock (time.Since) itself.
//
// If a generation shows the counter's rate straying from its long-run rate (which a correctly
// working counter never does), the counter is turned off for the rest of the process and the
// global OpenTelemetry error handler is told.
func WithCycleCounter(on bool) Option {
	return optionFunc(func(c *config) { c.cycleCounter = on })
}

// WithMaxChunks caps the chunks one generation records; the default is itlconv.DefaultMaxChunks
// (262,144), the collector's max_chunks, so that every timeline the client writes is one the
// collector reads. Without a cap a runaway stream (a server looping, a replay gone wrong) would grow
// a generation's timeline without end: ten million chunks took 1.15 GB at export.
//
// Past the cap a generation keeps its first n arrivals (so the time to first chunk and the early
// gaps stay true) and only counts the rest: at End the span carries otelitl.chunk.dropped with how
// many were not recorded, while otelitl.chunk.count stays the number received, so a reader sees
// that the timeline is incomplete. The output token count is then known only from the provider's
// usage ([Generation.SetUsage]); without it no output token usage is recorded. A generation's
// timeline then holds at most 8 bytes per chunk of the cap (16 with per-chunk token counts), and
// growing it allocates at most twice that. Values below 1 are ignored.
func WithMaxChunks(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 1 {
			c.maxChunks = n
		}
	})
}
