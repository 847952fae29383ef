package itlconv

import "go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"

// Metric describes one metric of the contract: what the client records with a MeterProvider and
// what the itl_metrics connector derives from spans, under the same name, unit and default
// boundaries, so that the two can be compared and merged.
type Metric struct {
	Name, Unit, Description string
	// Buckets are the default explicit histogram boundaries; nil for a sum.
	Buckets []float64
}

// Default histogram boundaries.
var (
	// DurationBuckets are the GenAI semantic conventions' advice for time to first chunk and
	// operation duration: 0.01 s to 81.92 s, doubling.
	DurationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	// GapBuckets resolve inter-chunk gaps, time per output token and the largest gap: 1 ms to 10 s,
	// with a boundary at the default stall threshold (250 ms).
	GapBuckets = []float64{0.001, 0.002, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.5, 0.75, 1, 2.5, 5, 10}
	// TokenBuckets are the GenAI semantic conventions' advice for token usage: 1 to 4^13.
	TokenBuckets = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	// ServerTTFTBuckets are the conventions' advice for gen_ai.server.time_to_first_token.
	ServerTTFTBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0}
	// ServerTPOTBuckets are the conventions' advice for gen_ai.server.time_per_output_token.
	ServerTPOTBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5}
)

// The client metrics: names and units from the GenAI semantic conventions (genaiconv), plus the
// otelitl ones the conventions lack, which share their names with the span attributes the itl
// processor writes.
var (
	// TimeToFirstChunk has one observation per generation with a time to first chunk.
	TimeToFirstChunk = Metric{genaiconv.ClientOperationTimeToFirstChunk{}.Name(), genaiconv.ClientOperationTimeToFirstChunk{}.Unit(),
		"Time to receive the first chunk of a streamed response.", DurationBuckets}
	// TimePerOutputChunk has one observation per gap between consecutive chunks: never an average.
	TimePerOutputChunk = Metric{genaiconv.ClientOperationTimePerOutputChunk{}.Name(), genaiconv.ClientOperationTimePerOutputChunk{}.Unit(),
		"Time between consecutive chunks of a streamed response after the first: one observation per gap.", GapBuckets}
	// Duration has one observation per model call, with error.type on failures.
	Duration = Metric{genaiconv.ClientOperationDuration{}.Name(), genaiconv.ClientOperationDuration{}.Unit(),
		"GenAI operation duration.", DurationBuckets}
	// TokenUsage has one observation per model call and token type whose count is known.
	TokenUsage = Metric{genaiconv.ClientTokenUsage{}.Name(), genaiconv.ClientTokenUsage{}.Unit(),
		"Number of input and output tokens used.", TokenBuckets}
	// TimePerOutputToken has one observation per generation with a complete timeline and more
	// output tokens than its first chunk carried.
	TimePerOutputToken = Metric{string(TPOTKey), "s",
		"Decode time per output token after the first chunk.", GapBuckets}
	// GapMax has one observation per generation with two chunks or more: its largest gap.
	GapMax = Metric{string(GapMaxKey), "s",
		"The largest gap between chunks of a streamed response.", GapBuckets}
	// Generations is a monotonic sum of model calls by what their spans hold about timing: TimingKey
	// is TimingTimeline (a timeline of chunk arrivals: every gap is known), TimingTTFT (a time to
	// first chunk only) or TimingNone. It shows, per model, how much of the traffic the per-gap
	// figures cover.
	Generations = Metric{"otelitl.generations", "{generation}",
		"Model calls by the timing their spans hold: a timeline of chunk arrivals, a time to first chunk only, or neither.", nil}
	// Stalls is a monotonic sum of the gaps above the stall threshold. A series exists only for
	// generations with a timeline: elsewhere a stall cannot be seen, and 0 would be a false claim.
	Stalls = Metric{string(StallsKey), "{gap}",
		"Gaps between chunks longer than the stall threshold.", nil}
)

// The server metrics, from SERVER generation spans (a model server or gateway answering): names,
// units and bucket advice from the GenAI semantic conventions.
var (
	// ServerTimeToFirstToken has one observation per generation with a time to first chunk.
	ServerTimeToFirstToken = Metric{genaiconv.ServerTimeToFirstToken{}.Name(), genaiconv.ServerTimeToFirstToken{}.Unit(),
		"Time to generate the first token, as the server wrote it to the client.", ServerTTFTBuckets}
	// ServerTimePerOutputToken has one observation per gap between chunks written after the first,
	// divided by the tokens of the chunk that ends it (a gap, for chunks of one token): the server's
	// counterpart of TimePerOutputChunk, as model servers such as vLLM record it, per step.
	ServerTimePerOutputToken = Metric{genaiconv.ServerTimePerOutputToken{}.Name(), genaiconv.ServerTimePerOutputToken{}.Unit(),
		"Time per output token generated after the first token: one observation per gap between chunks, over the tokens of the later chunk.", ServerTPOTBuckets}
	// ServerRequestDuration has one observation per generation, with error.type on failures.
	ServerRequestDuration = Metric{genaiconv.ServerRequestDuration{}.Name(), genaiconv.ServerRequestDuration{}.Unit(),
		"Generative AI server request duration.", DurationBuckets}
)

// TimingKey is the attribute of Generations, with one of the Timing values.
const (
	TimingKey      = "otelitl.timing"
	TimingTimeline = "timeline"
	TimingTTFT     = "ttft"
	TimingNone     = "none"
)
