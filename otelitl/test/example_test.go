package test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelitl/itl/itlconv"
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
// path.
func Example() {
	tp := sdktrace.NewTracerProvider() // your SDK setup, with its exporter
	defer func() { _ = tp.Shutdown(context.Background()) }()
	in := otelitl.New(otelitl.WithTracerProvider(tp))

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

// Replaying recorded arrivals with ChunkAt and EndAt gives exact, reproducible spans.
func ExampleGeneration_ChunkAt() {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(otelitl.EncodingCompact))

	start := time.Now()
	_, g := in.Start(context.Background(), otelitl.Request{Provider: "openai", Model: "gpt-4o", StartTime: start})
	g.ChunkAt(start.Add(250*time.Millisecond), 1)
	g.ChunkAt(start.Add(270*time.Millisecond), 3) // a speculative-decoding step: 3 tokens
	g.ChunkAt(start.Add(300*time.Millisecond), 1)
	g.EndAt(start.Add(310*time.Millisecond), nil)

	s := exp.GetSpans()[0]
	fmt.Println(s.Name)
	for _, kv := range s.Attributes {
		switch kv.Key {
		case itlconv.ChunkCountKey, itlconv.ChunkOffsetsKey, itlconv.ChunkTokensKey, "gen_ai.response.time_to_first_chunk":
			fmt.Println(kv.Key, kv.Value.String())
		}
	}
	// Output:
	// chat gpt-4o
	// otelitl.chunk.count 3
	// gen_ai.response.time_to_first_chunk 0.25
	// otelitl.chunk.offsets_us [250000,270000,300000]
	// otelitl.chunk.tokens [1,3,1]
}

// With a MeterProvider the library records the GenAI client metrics too, whatever the trace
// sampler decides.
func ExampleWithMeterProvider() {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.TraceIDRatioBased(0.01)))
	in := otelitl.New(
		otelitl.WithTracerProvider(tp),
		otelitl.WithMeterProvider(mp),
	)
	_, g := in.Start(context.Background(), otelitl.Request{Provider: "anthropic", Model: "claude-sonnet-4-5"})
	g.Chunk(1)
	g.End(nil)
}
