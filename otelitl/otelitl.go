package otelitl

import (
	"context"
	"math"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl/internal/cycles"
)

// Instrumentation starts generation spans. Make one per application (or per SDK client) with New
// and share it: it is safe for concurrent use.
type Instrumentation struct {
	tracer     trace.Tracer
	encoding   Encoding
	eventLimit int
	attrs      []attribute.KeyValue
	cycles     bool // WithCycleCounter
	maxChunks  int  // WithMaxChunks

	metrics *instruments // nil without WithMeterProvider
}

// instruments are the client metrics, for CLIENT generations, and the server metrics, for SERVER
// ones.
type instruments struct {
	ttft     genaiconv.ClientOperationTimeToFirstChunk
	perChunk genaiconv.ClientOperationTimePerOutputChunk
	duration genaiconv.ClientOperationDuration
	tokens   genaiconv.ClientTokenUsage

	serverTTFT     genaiconv.ServerTimeToFirstToken
	serverTPOT     genaiconv.ServerTimePerOutputToken
	serverDuration genaiconv.ServerRequestDuration
}

// New returns an Instrumentation configured by opts. Nil options are skipped.
func New(opts ...Option) *Instrumentation {
	c := config{encoding: EncodingAuto, eventLimit: itlconv.DefaultEventLimit, cycleCounter: true, maxChunks: itlconv.DefaultMaxChunks}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if c.tracerProvider == nil {
		c.tracerProvider = otel.GetTracerProvider()
	}
	in := &Instrumentation{
		tracer:     c.tracerProvider.Tracer(ScopeName, trace.WithInstrumentationVersion(Version), trace.WithSchemaURL(semconv.SchemaURL)),
		encoding:   c.encoding,
		eventLimit: c.eventLimit,
		attrs:      c.attrs,
		cycles:     c.cycleCounter,
		maxChunks:  c.maxChunks,
	}
	if c.meterProvider != nil {
		in.metrics = newInstruments(c.meterProvider.Meter(ScopeName, metric.WithInstrumentationVersion(Version), metric.WithSchemaURL(semconv.SchemaURL)))
	}
	return in
}

// newInstruments creates the GenAI client and server instruments with the project's bucket
// boundaries. A failure is reported to otel.Handle and leaves that instrument a no-op:
// instrumentation must never stop the application.
func newInstruments(m metric.Meter) *instruments {
	var (
		ins instruments
		err error
	)
	if ins.ttft, err = genaiconv.NewClientOperationTimeToFirstChunk(m, metric.WithExplicitBucketBoundaries(itlconv.TimeToFirstChunk.Buckets...)); err != nil {
		otel.Handle(err)
	}
	if ins.perChunk, err = genaiconv.NewClientOperationTimePerOutputChunk(m, metric.WithExplicitBucketBoundaries(itlconv.TimePerOutputChunk.Buckets...)); err != nil {
		otel.Handle(err)
	}
	if ins.duration, err = genaiconv.NewClientOperationDuration(m, metric.WithExplicitBucketBoundaries(itlconv.Duration.Buckets...)); err != nil {
		otel.Handle(err)
	}
	if ins.tokens, err = genaiconv.NewClientTokenUsage(m, metric.WithExplicitBucketBoundaries(itlconv.TokenUsage.Buckets...)); err != nil {
		otel.Handle(err)
	}
	if ins.serverTTFT, err = genaiconv.NewServerTimeToFirstToken(m, metric.WithExplicitBucketBoundaries(itlconv.ServerTimeToFirstToken.Buckets...)); err != nil {
		otel.Handle(err)
	}
	if ins.serverTPOT, err = genaiconv.NewServerTimePerOutputToken(m, metric.WithExplicitBucketBoundaries(itlconv.ServerTimePerOutputToken.Buckets...)); err != nil {
		otel.Handle(err)
	}
	if ins.serverDuration, err = genaiconv.NewServerRequestDuration(m, metric.WithExplicitBucketBoundaries(itlconv.ServerRequestDuration.Buckets...)); err != nil {
		otel.Handle(err)
	}
	return &ins
}

// Request describes a streamed generation as it is sent. Never put prompt text here.
type Request struct {
	// Operation is gen_ai.operation.name, such as "chat" or "text_completion". Empty means "chat".
	Operation string
	// Provider is gen_ai.provider.name, such as "openai", "anthropic" or "gcp.vertex_ai".
	Provider string
	// Model is gen_ai.request.model. A value longer than 256 bytes is cut on a rune boundary, and
	// invalid UTF-8 replaced.
	Model string
	// ServerAddress and ServerPort are server.address and server.port. An empty address is
	// omitted, and so is one longer than a host name can be (255 bytes) and a port outside
	// 1..65535, which no server listens on.
	ServerAddress string
	ServerPort    int
	// StartTime is when the request started. Zero means now. Arrivals are measured from it with the
	// monotonic clock when it carries a monotonic reading (as time.Now() does).
	//
	// Any time is taken as given, since a replay (ChunkAt, EndAt) may start long ago. But no arrival
	// is recorded more than itlconv.MaxDuration (24 h) away from it, live or replayed: with a
	// StartTime more than that before now, every live Chunk is dropped (counted in
	// otelitl.chunk.dropped) and End ends the span at its last recorded arrival, or at StartTime;
	// with a StartTime in the future, live arrivals lie before the start and are recorded at the
	// start (dropped if more than 24 h before it), and End ends the span at its start. Leave it zero
	// unless the request really started earlier than Start.
	StartTime time.Time
	// Attributes are added to this generation's span only.
	Attributes []attribute.KeyValue
	// Kind is the span kind: trace.SpanKindClient (the default, also for SpanKindUnspecified) for an
	// application calling a model, or trace.SpanKindServer for a server or gateway answering one,
	// whose timeline is when each chunk was written to the client.
	Kind trace.SpanKind
	// NonStreaming says the request asked for one whole reply rather than a stream (an HTTP
	// instrumentation sees either): gen_ai.request.stream is then left out, which is how the
	// semantic conventions say "not streamed". Its chunks, if any, are still recorded.
	NonStreaming bool
}

// disabled is the Generation handed out when nothing would be recorded: its methods return at once.
// Any Generation not made by Start is inert alike.
var disabled = &Generation{}

// validPort reports whether p is a TCP or UDP port a server can listen on.
func validPort(p int) bool { return p > 0 && p <= 65535 }

// Start starts a generation span as a child of the span in ctx and returns the context that holds
// it. The caller must call End (or EndAt) on the Generation, on every path, as with any span. A nil
// ctx is taken as context.Background(), as instrumentation must never panic where the
// uninstrumented code would not have.
//
// When the span is not recording and no metrics are configured, the Generation returned is an inert
// one whose methods do nothing and allocate nothing. So is the one a nil (or zero) Instrumentation
// returns, with ctx unchanged.
func (in *Instrumentation) Start(ctx context.Context, req Request) (context.Context, *Generation) {
	if ctx == nil {
		ctx = context.Background()
	}
	if in == nil || in.tracer == nil {
		return ctx, disabled
	}
	start := req.StartTime
	if start.IsZero() {
		start = time.Now()
	}
	op := req.Operation
	if op == "" {
		op = string(genaiconv.OperationNameChat)
	}
	// The model may come from whoever sent the request (httpitl reads it from the body or a
	// Gemini URL): bounded as the provider's values are.
	model := truncate(req.Model, maxValueLength)
	name := op
	if model != "" {
		name = op + " " + model
	}

	kind := req.Kind
	if kind != trace.SpanKindServer {
		kind = trace.SpanKindClient
	}

	attrs := make([]attribute.KeyValue, 0, 6+len(in.attrs)+len(req.Attributes))
	attrs = append(attrs, semconv.GenAIOperationNameKey.String(op))
	if req.Provider != "" {
		attrs = append(attrs, semconv.GenAIProviderNameKey.String(req.Provider))
	}
	if model != "" {
		attrs = append(attrs, semconv.GenAIRequestModel(model))
	}
	if !req.NonStreaming {
		attrs = append(attrs, semconv.GenAIRequestStream(true))
	}
	address := ""
	if req.ServerAddress != "" && len(req.ServerAddress) <= maxAddressLength {
		address = req.ServerAddress
		attrs = append(attrs, semconv.ServerAddress(address))
	}
	port := 0
	if validPort(req.ServerPort) {
		port = req.ServerPort
		attrs = append(attrs, semconv.ServerPort(port))
	}
	attrs = append(attrs, in.attrs...)
	attrs = append(attrs, req.Attributes...)

	ctx, span := in.tracer.Start(ctx, name,
		trace.WithSpanKind(kind),
		trace.WithTimestamp(start),
		trace.WithAttributes(attrs...),
	)
	if !span.IsRecording() && in.metrics == nil {
		return ctx, disabled
	}
	g := &Generation{
		on:        true,
		in:        in,
		ctx:       ctx,
		span:      span,
		recording: span.IsRecording(),
		start:     start,
		operation: op,
		provider:  req.Provider,
		model:     model,
		address:   address,
		port:      port,
		server:    kind == trace.SpanKindServer,
		usageIn:   -1,
		usageOut:  -1,
		max:       in.maxChunks,
		firstDrop: math.MaxInt64,
	}
	if in.cycles && cycles.Usable() {
		g.ticks = true
		g.from = cycles.Read(start)
	}
	g.offsets = getBuf()
	return ctx, g
}
