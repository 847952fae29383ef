package otelitl

import "go.opentelemetry.io/otel/attribute"

// The span contract: the names below are read back by the collector components and by other tools,
// so they never change within a major version.
const (
	// ChunkEventName names the span event recorded per chunk in the event encoding. The event's
	// timestamp is the chunk's arrival.
	ChunkEventName = "otelitl.chunk"

	// ChunkCountKey is the number of chunks in the generation (int). It is always set, and lets a
	// reader detect a timeline that lost events.
	ChunkCountKey = attribute.Key("otelitl.chunk.count")
	// ChunkTokensKey is, on a chunk event, the chunk's token count when it is not 1 (int); on the span
	// in the compact encoding, the token count of every chunk (int64 array), omitted when all are 1.
	ChunkTokensKey = attribute.Key("otelitl.chunk.tokens")
	// ChunkOffsetsKey is, in the compact encoding, the microseconds from the span start to each
	// chunk's arrival (int64 array, non-decreasing).
	ChunkOffsetsKey = attribute.Key("otelitl.chunk.offsets_us")
)

// ScopeName is the instrumentation scope of the tracer and meter this package uses.
const ScopeName = "github.com/otelitl/itl/otelitl"

// Version is the version of this instrumentation, reported in the instrumentation scope.
const Version = "0.1.0"
