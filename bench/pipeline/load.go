package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/otelitl/itl/collector/itlprocessor"
	"github.com/otelitl/itl/internal/loadgen"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
)

// load is a generated load: the OTLP export requests the OpenTelemetry Go SDK's OTLP exporter would
// send, encoded once, and what they hold, so that every collector can be fed the same bytes and
// what reaches the sink can be checked exactly.
type load struct {
	kind     string // "compact", "events", "figures-compact" or "figures-events"
	name     string // "compact-200", "events-100", "figures-compact-200", "figures-events-100"
	encoding otelitl.Encoding
	// figures says the spans carry the figures otelitl's client writes beside the timeline, as it
	// writes them today; without, they are removed from every span before it is encoded, as an
	// older client (or another writer of timelines) sends them, and the itl processor must
	// compute them.
	figures  bool
	chunks   int
	spans    int64 // generations
	gaps     int64 // chunks - 1 per generation
	stalls   int64 // gaps above the default stall threshold
	reqs     [][]byte
	reqSpans []int // spans in each request
	bytes    int64 // sum of len(reqs)

	// variants are reqs changed for the configurations fed something else (config.input), made by
	// makeVariants: "annotated", as the itl processor (its defaults) annotates them, and
	// "reencoded", decoded and encoded again by pdata as annotated is, without the annotations.
	// variantBytes are the sums of their lengths.
	variants     map[string][][]byte
	variantBytes map[string]int64
}

func (l *load) chunkCount() int64 { return l.spans * int64(l.chunks) }

// captureClient is an otlptrace.Client that keeps each export request, encoded exactly as
// otlptracegrpc puts it on the wire (an ExportTraceServiceRequest of the exporter's ResourceSpans),
// instead of sending it.
type captureClient struct {
	mu       sync.Mutex
	reqs     [][]byte
	reqSpans []int
	strip    bool // remove the client's figures from every span before encoding it
}

// isFigure says whether key is one of the figures otelitl's client writes (itlconv.FigureKeys).
func isFigure(key string) bool {
	return slices.Contains(itlconv.FigureKeys, attribute.Key(key))
}

func (*captureClient) Start(context.Context) error { return nil }
func (*captureClient) Stop(context.Context) error  { return nil }

func (c *captureClient) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	n := 0
	for _, r := range rs {
		for _, ss := range r.ScopeSpans {
			n += len(ss.Spans)
			if !c.strip {
				continue
			}
			for _, sp := range ss.Spans {
				sp.Attributes = slices.DeleteFunc(sp.Attributes, func(kv *commonpb.KeyValue) bool { return isFigure(kv.Key) })
			}
		}
	}
	b, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: rs})
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.reqs = append(c.reqs, b)
	c.reqSpans = append(c.reqSpans, n)
	c.mu.Unlock()
	return nil
}

// generate writes rate*seconds generations of chunks chunks each with otelitl on the OpenTelemetry
// Go SDK, with the cadence of the load test (loadgen.Generation, as e2e/load_test.go writes it:
// 10-34 ms gaps, a 400 ms stall where (i+k)%97 == 0; 8 models), batched by the SDK's batch span
// processor into requests of batch spans, and returns the encoded requests. Generation i starts
// i/rate seconds after the first, as if it had been paced. Without figures, the figures the client
// writes are removed from every span before it is encoded (load.figures).
func generate(rate, chunks, seconds, batch int, enc otelitl.Encoding, figures bool) (*load, error) {
	ctx := context.Background()
	client := &captureClient{strip: !figures}
	exp, err := otlptrace.New(ctx, client)
	if err != nil {
		return nil, err
	}
	limits := sdktrace.NewSpanLimits()
	limits.EventCountLimit = max(limits.EventCountLimit, chunks) // an event load keeps every chunk
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithBlocking(), sdktrace.WithMaxQueueSize(4*batch),
			sdktrace.WithMaxExportBatchSize(batch), sdktrace.WithBatchTimeout(time.Hour)),
		sdktrace.WithRawSpanLimits(limits),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("loadtest"))))
	in := otelitl.New(otelitl.WithTracerProvider(tp), otelitl.WithEncoding(enc))

	total := int64(rate) * int64(seconds)
	l := &load{encoding: enc, chunks: chunks, spans: total, figures: figures}
	base := time.Now().Add(-time.Duration(seconds)*time.Second - 30*time.Second)
	for i := range total {
		startAt := base.Add(time.Duration(i) * time.Second / time.Duration(rate))
		gaps, stalls := loadgen.Generation(ctx, in, otelitl.Request{Provider: "load", Model: fmt.Sprintf("model-%d", i%8)}, i, startAt, chunks)
		l.gaps += gaps
		l.stalls += stalls
	}
	if err := tp.Shutdown(ctx); err != nil {
		return nil, err
	}
	l.reqs, l.reqSpans = client.reqs, client.reqSpans
	var n int64
	for i, r := range l.reqs {
		l.bytes += int64(len(r))
		n += int64(l.reqSpans[i])
	}
	if n != total {
		return nil, fmt.Errorf("generated %d generations but captured %d spans", total, n)
	}
	return l, nil
}

// schedule returns when each request is due, from the start of the replay, so that spans leave at
// rate per second: request k is due when the spans before it have had their time.
func schedule(reqSpans []int, rate int) []time.Duration {
	due := make([]time.Duration, len(reqSpans))
	var before int64
	for k, n := range reqSpans {
		due[k] = time.Duration(before * int64(time.Second) / int64(rate))
		before += int64(n)
	}
	return due
}

// makeVariants sets ld.variants: every request decoded, annotated by the itl processor with its
// default configuration, and encoded again, as the full pipeline's processor leaves them (the
// batch processor only regroups spans); and, as the control, every request decoded and encoded
// again without it. Fed to a pass-through collector, the two tell what carrying the annotations
// costs a collector (decoding, batching, encoding, compressing and sending them) without any of
// our code running in it.
func makeVariants(ld *load) error {
	ctx := context.Background()
	f := itlprocessor.NewFactory()
	out := new(consumertest.TracesSink)
	p, err := f.CreateTraces(ctx, processortest.NewNopSettings(f.Type()), f.CreateDefaultConfig(), out)
	if err != nil {
		return err
	}
	if err := p.Start(ctx, componenttest.NewNopHost()); err != nil {
		return err
	}
	defer func() { _ = p.Shutdown(ctx) }()
	ld.variants = map[string][][]byte{"annotated": make([][]byte, len(ld.reqs)), "reencoded": make([][]byte, len(ld.reqs))}
	ld.variantBytes = map[string]int64{}
	for i, b := range ld.reqs {
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			return fmt.Errorf("request %d: %w", i, err)
		}
		re, err := req.MarshalProto()
		if err != nil {
			return fmt.Errorf("request %d: %w", i, err)
		}
		out.Reset()
		if err := p.ConsumeTraces(ctx, req.Traces()); err != nil {
			return fmt.Errorf("request %d: %w", i, err)
		}
		if len(out.AllTraces()) != 1 || out.SpanCount() != ld.reqSpans[i] {
			return fmt.Errorf("request %d: the processor passed on %d spans of %d", i, out.SpanCount(), ld.reqSpans[i])
		}
		a, err := ptraceotlp.NewExportRequestFromTraces(out.AllTraces()[0]).MarshalProto()
		if err != nil {
			return fmt.Errorf("request %d: %w", i, err)
		}
		ld.variants["annotated"][i], ld.variants["reencoded"][i] = a, re
		ld.variantBytes["annotated"] += int64(len(a))
		ld.variantBytes["reencoded"] += int64(len(re))
	}
	return nil
}
