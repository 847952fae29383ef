package itlprocessor

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelitl/itl/internal/decode"
	"github.com/otelitl/itl/internal/pwalk"
	"github.com/otelitl/itl/otelitl"
)

// Attributes the processor writes.
const (
	TPOTKey   = "otelitl.time_per_output_token"
	GapP50Key = "otelitl.chunk.gap.p50"
	GapP90Key = "otelitl.chunk.gap.p90"
	GapP99Key = "otelitl.chunk.gap.p99"
	GapMaxKey = "otelitl.chunk.gap.max"
	StallsKey = "otelitl.stalls"
	// SkippedKey marks a timeline the processor did not read because it has more chunks than
	// max_chunks; its value is the reason.
	SkippedKey = "otelitl.timeline.skipped"
)

type itlProcessor struct {
	cfg      *Config
	logger   *zap.Logger
	decoders sync.Pool // *decode.Decoder: each holds buffers and is used by one goroutine at a time

	annotated metric.Int64Counter
	malformed metric.Int64Counter
	reasons   map[decode.Reason]metric.AddOption
}

func newITLProcessor(set processor.Settings, cfg *Config) (*itlProcessor, error) {
	p := &itlProcessor{cfg: cfg, logger: set.Logger, reasons: map[decode.Reason]metric.AddOption{}}
	dcfg := decode.Config{ChunkEventNames: cfg.ChunkEventNames, MaxChunks: cfg.MaxChunks}
	p.decoders.New = func() any { return decode.New(dcfg) }

	meter := set.TelemetrySettings.MeterProvider.Meter(ScopeName)
	var err error
	if p.annotated, err = meter.Int64Counter("otelcol_processor_itl_spans_annotated",
		metric.WithDescription("Generation spans the itl processor annotated with their figures."),
		metric.WithUnit("{span}")); err != nil {
		return nil, err
	}
	if p.malformed, err = meter.Int64Counter("otelcol_processor_itl_spans_malformed",
		metric.WithDescription("Spans whose chunk timeline is malformed; they pass through untouched. The reason attribute says which rule the timeline broke."),
		metric.WithUnit("{span}")); err != nil {
		return nil, err
	}
	for _, r := range decode.Reasons {
		p.reasons[r] = metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", string(r))))
	}
	return p, nil
}

func (p *itlProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	d := p.decoders.Get().(*decode.Decoder)
	defer p.decoders.Put(d)
	var annotated int64
	pwalk.Spans(td, func(_ pcommon.Map, span ptrace.Span) {
		if p.processSpan(ctx, d, span) == outcomeAnnotated {
			annotated++
		}
	})
	if annotated > 0 {
		p.annotated.Add(ctx, annotated)
	}
	return td, nil
}

type outcome int

const (
	outcomeUntouched outcome = iota
	outcomeAnnotated
	outcomeMalformed
)

func (p *itlProcessor) processSpan(ctx context.Context, d *decode.Decoder, span ptrace.Span) outcome {
	r := d.Decode(span)
	if !r.HasTimeline() {
		return outcomeUntouched // the fast path: nothing allocated
	}
	if !r.Valid {
		p.malformed.Add(ctx, 1, p.reasons[r.Reason])
		if r.Reason == decode.ReasonTooManyChunks {
			// Not wrong, only too long to read: say so on the span, so that a missing annotation
			// is explained where it is seen.
			span.Attributes().PutStr(SkippedKey, string(r.Reason))
		}
		if ce := p.logger.Check(zap.DebugLevel, "malformed chunk timeline; span passed through untouched"); ce != nil {
			ce.Write(zap.String("reason", string(r.Reason)), zap.Stringer("trace_id", span.TraceID()),
				zap.Stringer("span_id", span.SpanID()), zap.String("span_name", span.Name()))
		}
		return outcomeMalformed
	}
	attrs := span.Attributes()
	f, _ := d.Figures(&r, attrs, p.cfg.StallThreshold, true)
	if f.HasTTFT {
		putDoubleIfAbsent(attrs, decode.TTFTKey, f.TTFT)
	}
	if r.Complete {
		if _, ok := attrs.Get(string(otelitl.ChunkCountKey)); !ok {
			attrs.PutInt(string(otelitl.ChunkCountKey), int64(f.Chunks))
		}
	}
	if f.HasTPOT {
		attrs.PutDouble(TPOTKey, f.TPOT)
	}
	if f.HasGaps {
		attrs.PutDouble(GapP50Key, f.P50)
		attrs.PutDouble(GapP90Key, f.P90)
		attrs.PutDouble(GapP99Key, f.P99)
		attrs.PutDouble(GapMaxKey, f.MaxGap)
	}
	attrs.PutInt(StallsKey, int64(f.Stalls))

	switch {
	case p.cfg.DropTimeline:
		removeTimeline(span, &r)
	case p.cfg.CompactEvents && r.Source == decode.SourceEvents:
		if r.Complete {
			compact(span, &r)
		} else if ce := p.logger.Check(zap.DebugLevel, "event timeline left as events: it is incomplete, and the compact form could not say so"); ce != nil {
			ce.Write(zap.Stringer("trace_id", span.TraceID()), zap.Stringer("span_id", span.SpanID()))
		}
	}
	return outcomeAnnotated
}

func putDoubleIfAbsent(m pcommon.Map, k string, v float64) {
	if _, ok := m.Get(k); !ok {
		m.PutDouble(k, v)
	}
}

// compact writes the decoded event timeline as the compact attributes and removes its events.
func compact(span ptrace.Span, r *decode.Result) {
	attrs := span.Attributes()
	offs := attrs.PutEmptySlice(string(otelitl.ChunkOffsetsKey))
	offs.EnsureCapacity(r.Timeline.Len())
	for _, ns := range r.Timeline.Offsets {
		offs.AppendEmpty().SetInt(ns / 1000)
	}
	if r.Timeline.Tokens != nil {
		toks := attrs.PutEmptySlice(string(otelitl.ChunkTokensKey))
		toks.EnsureCapacity(r.Timeline.Len())
		for _, c := range r.Timeline.Tokens {
			toks.AppendEmpty().SetInt(c)
		}
	}
	name := r.EventName
	span.Events().RemoveIf(func(e ptrace.SpanEvent) bool { return e.Name() == name })
}

// removeTimeline removes the source the timeline was read from.
func removeTimeline(span ptrace.Span, r *decode.Result) {
	switch r.Source {
	case decode.SourceCompact:
		span.Attributes().Remove(string(otelitl.ChunkOffsetsKey))
		span.Attributes().Remove(string(otelitl.ChunkTokensKey))
	case decode.SourceEvents:
		name := r.EventName
		span.Events().RemoveIf(func(e ptrace.SpanEvent) bool { return e.Name() == name })
	}
}
