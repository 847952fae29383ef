// Package otelitl instruments streamed LLM generations with OpenTelemetry so that their rhythm can
// be observed: the time to the first chunk (TTFT), every gap between later chunks (inter-token
// latency, ITL), the time per output token (TPOT) and the output rate.
//
// One [Generation] is one CLIENT span (or a SERVER span, for a model server or gateway answering:
// see [Request].Kind) named "{gen_ai.operation.name} {gen_ai.request.model}" that follows the
// OpenTelemetry GenAI semantic conventions v1.41. While the reply streams, [Generation.Chunk]
// only appends the chunk's arrival, read from the CPU's cycle counter where the kernel keeps the
// monotonic clock with it and converted to a monotonic offset from the start at End
// ([WithCycleCounter]); nothing touches the span until [Generation.End], which writes the whole
// timeline at once, either as one "otelitl.chunk" span event per chunk or as the compact int64
// array attribute "otelitl.chunk.offsets_us". The default,
// [EncodingAuto], writes events while they fit in the SDK's event limit and switches to the compact
// form beyond it, so that a long reply never loses its first chunks (the Go SDK drops the oldest
// events past its limit, and the TTFT with them).
//
// At End the span also gets the figures of the span contract (itlconv SPEC.md §3) that a trace
// backend filters and sorts generations by: otelitl.time_per_output_token, the gap percentiles
// otelitl.chunk.gap.p50, .p90 and .p99, otelitl.chunk.gap.max and otelitl.stalls (gaps above 250
// ms), computed from the timeline as the span carries it, with the code the collector uses. A
// backend without the collector shows them, and the collector's itl processor keeps them instead
// of reading the timeline again, which is most of what it would cost. They add about 200 bytes to
// a span and a microsecond or two to End.
//
// The collector components in github.com/otelitl/itl/collector read the span back and derive the
// metrics for any backend; with [WithMeterProvider] the library also records the GenAI client
// metrics itself (the server metrics, for a SERVER generation).
//
// # Bounds
//
// Nothing a caller, a provider or a clock does can make a generation unbounded. A generation
// records at most [WithMaxChunks] arrivals (262,144 by default, the collector's own cap): past it,
// and for an arrival more than 24 hours from the start (itlconv.MaxDuration), a chunk is only
// counted, and the span carries otelitl.chunk.dropped next to otelitl.chunk.count, the chunks
// received. An end more than 24 hours after the start is moved back to the last arrival. Values
// that come back from the provider (response model and id, finish reasons) and error.type are cut
// to fixed lengths, and a port outside 1..65535 is left out.
//
// # Errors
//
// A generation ended with an error carries error.type (see [ErrorType]) and an error status whose
// description is that same error.type: never the error's message, which may quote the provider's
// reply and so the prompt. The wrappers add the error types "cancelled" (the application closed the
// stream before the reply finished, or cancelled its context) and "incomplete_stream" (the stream
// ended cleanly without its protocol's end marker, or the connection failed under it: reset,
// closed, the body cut short, as httpitl names it), and never change what the application sees from
// the SDK.
//
// The package depends on the OpenTelemetry API only, never on the SDK: an application chooses its
// SDK and exporters. Prompt and completion text is never recorded.
//
// Wrappers for the common Go LLM SDKs live in the sub-packages openaiitl, anthropicitl and
// goopenaiitl.
package otelitl
