package httpitl

import (
	"net/http"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelitl/itl/otelitl"
)

// Defaults of the bounds.
const (
	// DefaultMaxEventBytes is the largest event (an SSE event's data, an NDJSON line, a JSON body
	// or array element, an AWS event-stream message's headers and payload) read. A larger event
	// passes through unread: it is not counted as a chunk, and its usage or finish reason is lost.
	DefaultMaxEventBytes = 1 << 20
	// DefaultMaxRequestBytes is how much of a request body is read, and held, before the request is
	// sent, to find its model and stream members there; the rest of the body is read for them as
	// it is sent.
	DefaultMaxRequestBytes = 1 << 20
)

// config is the resolved configuration of a Transport or Handler.
type config struct {
	in              *otelitl.Instrumentation
	tracerProvider  trace.TracerProvider
	propagators     propagation.TextMapPropagator
	filter          func(*http.Request) bool
	maxEventBytes   int
	maxRequestBytes int
}

func newConfig(opts []Option) config {
	c := config{maxEventBytes: DefaultMaxEventBytes, maxRequestBytes: DefaultMaxRequestBytes}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if c.propagators == nil {
		c.propagators = otel.GetTextMapPropagator()
	}
	if c.in == nil {
		var iopts []otelitl.Option
		if c.tracerProvider != nil {
			iopts = append(iopts, otelitl.WithTracerProvider(c.tracerProvider))
		}
		c.in = otelitl.New(iopts...)
	}
	return c
}

// Option configures a Transport or a Handler.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithInstrumentation sets the otelitl Instrumentation that starts the generation spans (and
// records the GenAI metrics, if it was given a MeterProvider). The default is otelitl.New() with
// WithTracerProvider's provider, or the global one.
func WithInstrumentation(in *otelitl.Instrumentation) Option {
	return optionFunc(func(c *config) {
		if in != nil {
			c.in = in
		}
	})
}

// WithTracerProvider sets the TracerProvider of the default Instrumentation. It is ignored when
// WithInstrumentation is given.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) { c.tracerProvider = tp })
}

// WithPropagators sets how trace context crosses HTTP. A Transport injects its generation span's
// context into the headers of the request it sends, so that the server's spans (a Handler's, vLLM's,
// a gateway's) join the trace as children of the generation; a Handler extracts the caller's
// context from the request's headers, unless the request's context already holds a span. The
// default is the global propagators (otel.GetTextMapPropagator), which carry nothing until the
// application sets them, as otelhttp's default does.
func WithPropagators(p propagation.TextMapPropagator) Option {
	return optionFunc(func(c *config) { c.propagators = p })
}

// WithFilter makes requests for which f returns false pass through without a span, even when they
// are generation requests.
func WithFilter(f func(*http.Request) bool) Option {
	return optionFunc(func(c *config) { c.filter = f })
}

// WithMaxEventBytes bounds the memory read per event; see [DefaultMaxEventBytes]. Values below 1
// are ignored.
func WithMaxEventBytes(n int) Option {
	return optionFunc(func(c *config) {
		if n > 0 {
			c.maxEventBytes = n
		}
	})
}

// WithMaxRequestBytes bounds how much of a request body is held before the request is sent, to
// find its "model" and "stream" members before the span starts; see [DefaultMaxRequestBytes]. Members that come later are read as the rest of the body is sent, and
// reach the span before it ends: the span's name and gen_ai.request.model (a model, when none came
// before) and gen_ai.request.stream (true, when no "stream" came before). A body larger than the
// bound is still sent whole. Values below 1 are ignored.
func WithMaxRequestBytes(n int) Option {
	return optionFunc(func(c *config) {
		if n > 0 {
			c.maxRequestBytes = n
		}
	})
}
