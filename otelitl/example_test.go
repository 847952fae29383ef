package otelitl_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelitl/itl/otelitl"
)

// stream stands in for an LLM SDK's streaming iterator.
type stream struct{ left int }

func (s *stream) Next() ([]string, error) {
	if s.left == 0 {
		return nil, io.EOF
	}
	s.left--
	time.Sleep(time.Millisecond)
	return []string{"tok"}, nil
}

// The usual shape: start a generation per request, call Chunk as each chunk arrives, End on every
// path. The spans go to the TracerProvider the application set up with its SDK and exporter.
func Example() {
	in := otelitl.New(otelitl.WithTracerProvider(otel.GetTracerProvider()))

	ctx, g := in.Start(context.Background(), otelitl.Request{
		Operation: "chat", Provider: "openai", Model: "gpt-4o",
		ServerAddress: "api.openai.com", ServerPort: 443,
	})
	_ = ctx // pass ctx to the SDK call so that its HTTP span nests under the generation
	var err error
	defer func() { g.End(err) }()

	s := &stream{left: 3}
	for {
		var toks []string
		toks, err = s.Next()
		if errors.Is(err, io.EOF) {
			err = nil
			break
		}
		if err != nil {
			return
		}
		g.Chunk(len(toks))
	}
	g.SetUsage(12, 3)
	g.AddFinishReason("stop")
}

// Replaying recorded arrivals with ChunkAt and EndAt gives exact, reproducible spans: the compact
// timeline of this one is otelitl.chunk.offsets_us = [250000, 270000, 300000] and
// otelitl.chunk.tokens = [1, 3, 1].
func ExampleGeneration_ChunkAt() {
	in := otelitl.New(otelitl.WithEncoding(otelitl.EncodingCompact))

	start := time.Now()
	_, g := in.Start(context.Background(), otelitl.Request{Provider: "openai", Model: "gpt-4o", StartTime: start})
	g.ChunkAt(start.Add(250*time.Millisecond), 1)
	g.ChunkAt(start.Add(270*time.Millisecond), 3) // a speculative-decoding step: 3 tokens
	g.ChunkAt(start.Add(300*time.Millisecond), 1)
	g.EndAt(start.Add(310*time.Millisecond), nil)
}

// With a MeterProvider the library records the GenAI client metrics too, whatever the trace
// sampler decides.
func ExampleWithMeterProvider() {
	in := otelitl.New(otelitl.WithMeterProvider(otel.GetMeterProvider()))
	_, g := in.Start(context.Background(), otelitl.Request{Provider: "anthropic", Model: "claude-sonnet-4-5"})
	g.Chunk(1)
	g.End(nil)
}

// A model server or gateway records its side of a streamed reply as a SERVER generation: the
// timeline is when it wrote each chunk to the client, and with a MeterProvider it records the
// GenAI server metrics (gen_ai.server.time_to_first_token, one gen_ai.server.time_per_output_token
// per gap, gen_ai.server.request.duration) instead of the client ones.
func ExampleRequest_server() {
	in := otelitl.New(otelitl.WithMeterProvider(otel.GetMeterProvider()))
	_, g := in.Start(context.Background(), otelitl.Request{
		Operation: "chat", Provider: "openai", Model: "llama-3.1-70b",
		Kind: trace.SpanKindServer,
	})
	for _, step := range []int{1, 1, 3} { // tokens per write: 3 from one speculative-decoding step
		g.Chunk(step)
	}
	g.SetUsage(40, 5)
	g.End(nil)
}

// The chunk cap bounds what one generation holds, for a service that replays untrusted recordings
// or streams from servers it does not control. Past the cap the first chunks stay and the rest are
// counted in otelitl.chunk.dropped.
func ExampleWithMaxChunks() {
	in := otelitl.New(otelitl.WithMaxChunks(1000), otelitl.WithEncoding(otelitl.EncodingCompact))
	_, g := in.Start(context.Background(), otelitl.Request{Provider: "openai", Model: "gpt-4o"})
	for range 1500 {
		g.Chunk(1) // the last 500 are only counted: otelitl.chunk.count = 1500, otelitl.chunk.dropped = 500
	}
	g.End(nil)
}

// ErrorType names a failure by its cause, as the span's error.type and the duration metric record
// it.
func ExampleErrorType() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fmt.Println(otelitl.ErrorType(ctx.Err()).Value.AsString())
	fmt.Println(otelitl.ErrorType(fmt.Errorf("reading the stream: %w", context.DeadlineExceeded)).Value.AsString())
	// Output:
	// cancelled
	// timeout
}
