// Package otelitl instruments streamed LLM generations with OpenTelemetry so that their rhythm can
// be observed: the time to the first chunk (TTFT), every gap between later chunks (inter-token
// latency, ITL), the time per output token (TPOT) and the output rate.
//
// One [Generation] is one CLIENT span named "{gen_ai.operation.name} {gen_ai.request.model}" that
// follows the OpenTelemetry GenAI semantic conventions v1.41. While the reply streams, [Generation.Chunk]
// only appends the chunk's arrival, read from the CPU's cycle counter where the kernel keeps the
// monotonic clock with it and converted to a monotonic offset from the start at End
// ([WithCycleCounter]); nothing touches the span until [Generation.End], which writes the whole
// timeline at once, either as one "otelitl.chunk" span event per chunk or as the compact int64
// array attribute "otelitl.chunk.offsets_us". The default,
// [EncodingAuto], writes events while they fit in the SDK's event limit and switches to the compact
// form beyond it, so that a long reply never loses its first chunks (the Go SDK drops the oldest
// events past its limit, and the TTFT with them).
//
// The collector components in github.com/otelitl/itl/processor read the span back and derive the
// figures for any backend; with [WithMeterProvider] the library also records the GenAI client
// metrics itself.
//
// The package depends on the OpenTelemetry API only, never on the SDK: an application chooses its
// SDK and exporters. Prompt and completion text is never recorded.
//
// Wrappers for the common Go LLM SDKs live in the sub-packages openaiitl, anthropicitl and
// goopenaiitl.
package otelitl
