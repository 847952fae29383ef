package itlprocessor

import (
	"context"
	"math"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.uber.org/zap"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/itlconv"
)

type itlProcessor struct {
	cfg      *Config
	logger   *zap.Logger
	decoders sync.Pool // *genaispan.Decoder: each holds buffers and is used by one goroutine at a time

	annotated metric.Int64Counter
	kept      metric.Int64Counter
	malformed metric.Int64Counter
	// keep says whether the figures otelitl's client wrote are kept (Config.KeepClientFigures,
	// where the processor would compute the same ones).
	keep    bool
	self    metric.AddOption // processor: the instance's id, as the collector's own processor metrics carry it
	reasons map[genaispan.Reason]metric.AddOption
}

func newITLProcessor(set processor.Settings, cfg *Config) (*itlProcessor, error) {
	p := &itlProcessor{cfg: cfg, logger: set.Logger, reasons: map[genaispan.Reason]metric.AddOption{},
		keep: cfg.KeepClientFigures && !cfg.DropTimeline && cfg.StallThreshold == itlconv.DefaultStallThreshold}
	p.decoders.New = func() any { return genaispan.New(cfg.Config) }

	if cfg.KeepClientFigures && !p.keep {
		// Not an error: the setting is on by default, and these settings are reasons to turn it off.
		set.Logger.Info("keep_client_figures applies to no span: the processor computes every span's figures from its timeline",
			zap.String("why", keepOffReason(cfg)))
	}

	meter := set.TelemetrySettings.MeterProvider.Meter(ScopeName)
	var err error
	if p.annotated, err = meter.Int64Counter("otelcol_processor_itl_spans_annotated",
		metric.WithDescription("Generation spans the itl processor annotated with their figures."),
		metric.WithUnit("{span}")); err != nil {
		return nil, err
	}
	if p.kept, err = meter.Int64Counter("otelcol_processor_itl_spans_kept",
		metric.WithDescription("Generation spans of otelitl's client whose figures the itl processor kept as the client wrote them (keep_client_figures), without reading their timeline."),
		metric.WithUnit("{span}")); err != nil {
		return nil, err
	}
	if p.malformed, err = meter.Int64Counter("otelcol_processor_itl_spans_malformed",
		metric.WithDescription("Model calls whose spans hold a malformed value (a timeline, a time to first chunk, a token count, a start or end); they pass through untouched. The reason attribute says which rule the value broke; a span breaking two counts once under each."),
		metric.WithUnit("{span}")); err != nil {
		return nil, err
	}
	// The instance's id, as processorhelper puts it on otelcol_processor_incoming_items: without
	// it, two itl processors in one collector count into one series (the collector adds the id
	// itself only with its telemetry.newPipelineTelemetry gate on).
	id := attribute.String("processor", set.ID.String())
	p.self = metric.WithAttributeSet(attribute.NewSet(id))
	for _, r := range genaispan.Reasons {
		p.reasons[r] = metric.WithAttributeSet(attribute.NewSet(id, attribute.String("reason", string(r))))
	}
	return p, nil
}

func (p *itlProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	d := p.decoders.Get().(*genaispan.Decoder)
	defer p.putDecoder(d)
	var annotated, kept int64
	pwalk.SpansOutside(td, p.cfg.ExcludedScopes, func(_ pcommon.Map, scope pcommon.InstrumentationScope, span ptrace.Span) {
		if p.keeps(scope, span) {
			kept++
			return
		}
		if p.processSpan(ctx, d, span) == outcomeAnnotated {
			annotated++
		}
	})
	if annotated > 0 {
		p.annotated.Add(ctx, annotated, p.self)
	}
	if kept > 0 {
		p.kept.Add(ctx, kept, p.self)
	}
	return td, nil
}

// keeps reports whether span is one of otelitl's client whose figures are kept as they are.
// With compact_events, a span with events is read, to compact a timeline of chunk events.
func (p *itlProcessor) keeps(scope pcommon.InstrumentationScope, span ptrace.Span) bool {
	return p.keep && scope.Name() == itlconv.ClientScope && (!p.cfg.CompactEvents || span.Events().Len() == 0) &&
		carriesFigures(span.Attributes())
}

// keepOffReason says why the client's figures cannot be kept under cfg.
func keepOffReason(cfg *Config) string {
	if cfg.DropTimeline {
		return "drop_timeline reads the timeline to remove it"
	}
	return "stall_threshold is " + cfg.StallThreshold.String() + ", and the client counts stalls at " + itlconv.DefaultStallThreshold.String()
}

// carriesFigures reports whether attrs hold the figures otelitl's client writes, each once and
// plausible: otelitl.stalls, a count; the gap percentiles and largest gap, all four or none,
// finite, not negative and in order; the time per output token, when present, finite and not
// negative. Figures that fail it are computed again from the timeline, overwriting them, as on
// any other span.
func carriesFigures(attrs pcommon.Map) bool {
	var stalls, tpot int
	var gaps [4]int
	var gap [4]float64
	ok := true
	attrs.Range(func(k string, v pcommon.Value) bool {
		if len(k) < len("otelitl.") || k[:len("otelitl.")] != "otelitl." {
			return true
		}
		i := -1
		switch attribute.Key(k) {
		case itlconv.StallsKey:
			stalls++
			ok = v.Type() == pcommon.ValueTypeInt && v.Int() >= 0
		case itlconv.TPOTKey:
			tpot++
			ok = seconds(v)
		case itlconv.GapP50Key:
			i = 0
		case itlconv.GapP90Key:
			i = 1
		case itlconv.GapP99Key:
			i = 2
		case itlconv.GapMaxKey:
			i = 3
		}
		if i >= 0 {
			gaps[i]++
			ok = seconds(v)
			gap[i] = v.Double()
		}
		return ok
	})
	if !ok || stalls != 1 || tpot > 1 {
		return false
	}
	switch gaps {
	case [4]int{}:
		return true
	case [4]int{1, 1, 1, 1}:
		return gap[0] <= gap[1] && gap[1] <= gap[2] && gap[2] <= gap[3]
	}
	return false
}

// seconds reports whether v is a figure in seconds: a double, finite and not negative.
func seconds(v pcommon.Value) bool {
	if v.Type() != pcommon.ValueTypeDouble {
		return false
	}
	f := v.Double()
	return f >= 0 && !math.IsInf(f, 1) // NaN fails f >= 0
}

// putDecoder puts d back in the pool, without the buffers a long timeline grew
// (genaispan.KeepChunks).
func (p *itlProcessor) putDecoder(d *genaispan.Decoder) {
	d.Trim()
	p.decoders.Put(d)
}

type outcome int

const (
	outcomeUntouched outcome = iota
	outcomeAnnotated
	outcomeMalformed
)

func (p *itlProcessor) processSpan(ctx context.Context, d *genaispan.Decoder, span ptrace.Span) outcome {
	c := d.Read(span, true)
	if !c.ModelCall {
		return outcomeUntouched // the fast path: nothing allocated
	}
	if bad := c.Malformed(); len(bad) > 0 {
		for _, why := range bad {
			p.malformed.Add(ctx, 1, p.reasons[why])
		}
		if c.Reason == genaispan.ReasonTooManyChunks {
			// Not wrong, only too long to read: say so on the span, so that a missing annotation
			// is explained where it is seen.
			span.Attributes().PutStr(string(itlconv.TimelineSkippedKey), string(c.Reason))
		}
		if ce := p.logger.Check(zap.DebugLevel, "malformed values on a model call's span; span passed through untouched"); ce != nil {
			ce.Write(zap.String("reason", genaispan.JoinReasons(bad)), zap.Stringer("trace_id", span.TraceID()),
				zap.Stringer("span_id", span.SpanID()), zap.String("span_name", span.Name()))
		}
		return outcomeMalformed
	}
	f := &c.Figures
	attrs := span.Attributes()
	addTTFT := f.HasTTFT && !has(attrs, string(semconv.GenAIResponseTimeToFirstChunkKey))
	addCount := c.HasTimeline() && c.Complete && !has(attrs, string(itlconv.ChunkCountKey))
	// Room for every attribute below at once, and no more: the receiver's slice often has room to
	// spare (it grew by appending), and then the span's attributes are not copied at all.
	attrs.EnsureCapacity(attrs.Len() + added(c, addTTFT, addCount))
	if addTTFT {
		attrs.PutDouble(string(semconv.GenAIResponseTimeToFirstChunkKey), f.TTFT)
		attrs.PutStr(string(itlconv.TTFTSourceKey), c.TTFTSource)
	}
	if !c.HasTimeline() {
		if addTTFT {
			return outcomeAnnotated
		}
		return outcomeUntouched
	}
	if addCount {
		attrs.PutInt(string(itlconv.ChunkCountKey), int64(f.Chunks))
	}
	if f.HasTPOT {
		attrs.PutDouble(string(itlconv.TPOTKey), f.TPOT)
	}
	if f.HasGaps {
		attrs.PutDouble(string(itlconv.GapP50Key), f.P50)
		attrs.PutDouble(string(itlconv.GapP90Key), f.P90)
		attrs.PutDouble(string(itlconv.GapP99Key), f.P99)
		attrs.PutDouble(string(itlconv.GapMaxKey), f.MaxGap)
	}
	attrs.PutInt(string(itlconv.StallsKey), int64(f.Stalls))

	switch {
	case p.cfg.DropTimeline:
		removeTimeline(span, &c.Result)
	case p.cfg.CompactEvents && c.Source == genaispan.SourceEvents:
		if c.Complete {
			compact(span, &c.Result)
		} else if ce := p.logger.Check(zap.DebugLevel, "event timeline left as events: it is incomplete, and the compact form could not say so"); ce != nil {
			ce.Write(zap.Stringer("trace_id", span.TraceID()), zap.Stringer("span_id", span.SpanID()))
		}
	}
	return outcomeAnnotated
}

// has says whether attrs holds key.
func has(attrs pcommon.Map, key string) bool {
	_, ok := attrs.Get(key)
	return ok
}

// added is how many attributes processSpan adds to a model call's span at most (it overwrites a
// figure the span already holds, such as one an earlier collector wrote).
func added(c *genaispan.Call, addTTFT, addCount bool) int {
	n := 0
	if addTTFT {
		n += 2 // the time to first chunk and its source
	}
	if !c.HasTimeline() {
		return n
	}
	if addCount {
		n++
	}
	if c.Figures.HasTPOT {
		n++
	}
	if c.Figures.HasGaps {
		n += 4 // p50, p90, p99, max
	}
	return n + 1 // stalls
}

// compact writes the decoded event timeline as the compact attributes and removes its events.
func compact(span ptrace.Span, r *genaispan.Result) {
	attrs := span.Attributes()
	offs := attrs.PutEmptySlice(string(itlconv.ChunkOffsetsKey))
	offs.EnsureCapacity(r.Timeline.Len())
	for _, ns := range r.Timeline.Offsets {
		offs.AppendEmpty().SetInt(itlconv.Micros(ns))
	}
	if r.Timeline.Tokens != nil {
		toks := attrs.PutEmptySlice(string(itlconv.ChunkTokensKey))
		toks.EnsureCapacity(r.Timeline.Len())
		for _, c := range r.Timeline.Tokens {
			toks.AppendEmpty().SetInt(c)
		}
	}
	name := r.EventName
	span.Events().RemoveIf(func(e ptrace.SpanEvent) bool { return e.Name() == name })
}

// removeTimeline removes the source the timeline was read from.
func removeTimeline(span ptrace.Span, r *genaispan.Result) {
	switch r.Source {
	case genaispan.SourceCompact:
		span.Attributes().Remove(string(itlconv.ChunkOffsetsKey))
		span.Attributes().Remove(string(itlconv.ChunkTokensKey))
	case genaispan.SourceEvents:
		name := r.EventName
		span.Events().RemoveIf(func(e ptrace.SpanEvent) bool { return e.Name() == name })
	}
}
