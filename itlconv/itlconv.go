package itlconv

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
)

// The span contract: what otelitl writes on a generation span besides the GenAI semantic
// conventions' attributes. Readers depend on these names, so they never change within a major
// version.
const (
	// ChunkEventName names the span event written per chunk in the event encoding. The event's
	// timestamp is the chunk's arrival.
	ChunkEventName = "otelitl.chunk"

	// ChunkCountKey is the number of chunks the generation received (int), always written. A reader
	// compares it with the chunks it finds to tell a complete timeline from one that lost events.
	ChunkCountKey = attribute.Key("otelitl.chunk.count")
	// ChunkTokensKey is, on a chunk event, that chunk's token count when it is not 1 (int); on the
	// span in the compact encoding, every chunk's token count (int array, same length as the
	// offsets), left out when every chunk carried 1 token.
	ChunkTokensKey = attribute.Key("otelitl.chunk.tokens")
	// ChunkOffsetsKey is, in the compact encoding, the microseconds from the span's start to each
	// chunk's arrival (int array, non-decreasing). See [Micros].
	ChunkOffsetsKey = attribute.Key("otelitl.chunk.offsets_us")
	// ChunkDroppedKey is the number of chunks a generation received and did not record (int): those
	// beyond its chunk cap, and those at an impossible time, more than [MaxDuration] away from the
	// start. It is written only when some were dropped. Their arrivals are lost; past the cap the
	// first chunks, and so the time to first chunk, are kept.
	ChunkDroppedKey = attribute.Key("otelitl.chunk.dropped")
)

// ClientScope is the instrumentation scope of otelitl's Go client (the module
// github.com/otelitl/itl/otelitl), on every span it writes, otelitl-proxy's and the SDK wrappers'
// included. Its spans carry the figures below, computed by the client as the itl processor
// computes them, at DefaultStallThreshold; the processor keeps them (keep_client_figures) instead
// of reading the timeline again.
const ClientScope = "github.com/otelitl/itl/otelitl"

// Attributes the itl collector processor writes on a generation span, and otelitl's Go client
// writes on its own (see [ClientScope]). The time to first chunk goes
// to the semantic conventions' gen_ai.response.time_to_first_chunk.
const (
	// TPOTKey is the decode time per output token after the first chunk, in seconds (double).
	TPOTKey = attribute.Key("otelitl.time_per_output_token")
	// GapP50Key, GapP90Key and GapP99Key are percentiles of the span's own gaps between chunks, in
	// seconds (double), by linear interpolation between the closest ranks.
	GapP50Key = attribute.Key("otelitl.chunk.gap.p50")
	GapP90Key = attribute.Key("otelitl.chunk.gap.p90")
	GapP99Key = attribute.Key("otelitl.chunk.gap.p99")
	// GapMaxKey is the span's largest gap between chunks, in seconds (double).
	GapMaxKey = attribute.Key("otelitl.chunk.gap.max")
	// StallsKey is the number of gaps above the stall threshold (int).
	StallsKey = attribute.Key("otelitl.stalls")
	// TimelineSkippedKey marks a timeline the processor did not read; its value is the reason
	// (too_many_chunks).
	TimelineSkippedKey = attribute.Key("otelitl.timeline.skipped")
	// TTFTSourceKey names where the time to first chunk the processor wrote came from, when the span
	// did not carry gen_ai.response.time_to_first_chunk itself: the attribute or event another
	// instrumentation wrote it as (for example "ai.response.msToFirstChunk"), or the timeline it was
	// read from ("otelitl.chunk.offsets_us", or a chunk event name).
	TTFTSourceKey = attribute.Key("otelitl.ttft.source")
)

// FigureKeys are the figures a generation span's writer or the itl processor derives from its
// timeline (SPEC.md §3): a span carries each at most once.
var FigureKeys = []attribute.Key{TPOTKey, GapP50Key, GapP90Key, GapP99Key, GapMaxKey, StallsKey}

// Chunk event names other instrumentations write, read as chunk arrivals after otelitl's own:
// OpenLLMetry writes one per streamed chunk, 1 token each.
const (
	OpenLLMetryChunkEventName       = "gen_ai.content.completion.chunk"
	OpenLLMetryLegacyChunkEventName = "llm.content.completion.chunk"
)

// DefaultChunkEventNames are the span event names read as chunks, highest priority first.
var DefaultChunkEventNames = []string{ChunkEventName, OpenLLMetryChunkEventName, OpenLLMetryLegacyChunkEventName}

// Defaults shared by the client and the collector, so that both sides agree on a span.
const (
	// DefaultStallThreshold is the gap above which a gap counts as a stall: a pause a reader
	// notices as the text freezing.
	DefaultStallThreshold = 250 * time.Millisecond
	// DefaultMaxChunks is the most chunks one timeline may hold: the client's cap on the chunks a
	// generation records and the collector's cap on the chunks it reads from one span. 262,144 is
	// above the longest replies models produce today.
	DefaultMaxChunks = 1 << 18
	// DefaultEventLimit is the OpenTelemetry Go SDK's default span event limit
	// (sdk/trace.DefaultEventCountLimit): the most chunk events a span can hold without the SDK
	// dropping the oldest.
	DefaultEventLimit = 128
)

// Bounds both sides apply, so that no value a client or a bug sends becomes an unbounded label,
// timestamp or sum.
const (
	// MaxDuration is the longest generation either side accepts: a client records no arrival more
	// than this away from the start, after or before it (it counts it in [ChunkDroppedKey]), and the
	// collector reads no figure from a span that lasts longer (its start is missing or wrong).
	// Reasoning models stream for tens of minutes, not days.
	MaxDuration = 24 * time.Hour
	// MaxErrorTypeLength is the longest error.type either side records, in bytes; a longer one is
	// cut on a rune boundary (invalid UTF-8 replaced).
	MaxErrorTypeLength = 128
	// MaxValueLength is the longest string value the client records (gen_ai.response.model,
	// gen_ai.response.id, a finish reason) and the connector's default for a dimension value.
	MaxValueLength = 256
	// MaxTokens is the most tokens one generation, or one chunk, may report: a larger count (or a
	// non-integral, negative or non-finite one) is malformed and yields no token figure.
	MaxTokens = 1_000_000_000
)

// The error.type values otelitl gives failures that have no error type of their own.
const (
	// ErrorTypeCancelled: the caller gave up on the reply (a context cancellation, a stream closed
	// before the reply finished).
	ErrorTypeCancelled = "cancelled"
	// ErrorTypeTimeout: a deadline passed.
	ErrorTypeTimeout = "timeout"
	// ErrorTypeIncompleteStream: the stream ended cleanly, but without its protocol's end marker
	// (a finish event, [DONE], message_stop): the reply was cut off.
	ErrorTypeIncompleteStream = "incomplete_stream"
	// ErrorTypeStreamError: an error event inside the stream, whose type or code is missing or not
	// a code (free text is never recorded).
	ErrorTypeStreamError = "stream_error"
	// ErrorTypeResponseFailed: an OpenAI Responses stream ended in response.failed without a code.
	ErrorTypeResponseFailed = "response_failed"
	// ErrorTypePanic: the handler serving a generation panicked.
	ErrorTypePanic = "panic"
)

// The error.type values of a generation whose request got no response (the server could not be
// reached), given alike by httpitl's transport, the SDK wrappers and otelitl-proxy, where the
// error's Go type (*net.OpError) said nothing and an error message would name the address. A
// deadline that passed is [ErrorTypeTimeout].
const (
	// ErrorTypeConnectionRefused: the server refused the connection: nothing listens at its
	// address.
	ErrorTypeConnectionRefused = "connection_refused"
	// ErrorTypeDNS: the server's name did not resolve.
	ErrorTypeDNS = "dns_error"
	// ErrorTypeTLS: the TLS handshake failed: a certificate not trusted, or a server that does not
	// speak TLS where the URL says https.
	ErrorTypeTLS = "tls_error"
	// ErrorTypeConnection: any other failure before a response: the connection was reset, or
	// closed before the server answered.
	ErrorTypeConnection = "connection_error"
)

// Values of metric attributes.
const (
	// OverflowKey marks the one series that takes every span once a cardinality limit is reached.
	OverflowKey = attribute.Key("otel.metric.overflow")
	// CollectorInstanceIDKey carries the collector's service.instance.id on every series of a
	// connector that adds it, so that replicas behind a load balancer never write the same series.
	CollectorInstanceIDKey = attribute.Key("collector.instance.id")
	// OtherValue stands for a value that is not recorded as itself: an error.type beyond the bound
	// kept per series, or an error status without an error.type.
	OtherValue = "_OTHER"
)

// The gen_ai.token.type values of token usage.
var (
	TokenTypeInput  = string(genaiconv.TokenTypeInput)
	TokenTypeOutput = string(genaiconv.TokenTypeOutput)
)

// Micros converts a nanosecond offset to the microseconds of [ChunkOffsetsKey], truncating.
func Micros(ns int64) int64 { return ns / 1000 }

// Nanos converts a microsecond offset of [ChunkOffsetsKey] to nanoseconds. A reader bounds us
// first (an offset past the span's end is invalid anyway): the product of an unbounded us can
// overflow.
func Nanos(us int64) int64 { return us * 1000 }
