package itlmetricsconnector

import (
	"context"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.uber.org/zap"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/itlconv/timeline"
)

const (
	truncatedMark  = "..."
	keySep         = 0xff // never in UTF-8 text: separates dimension values in a series key
	keyMissing     = 0xfe // marks a dimension the span does not have
	overflowSeries = "\xfd"
	// maxErrorTypes bounds the error.type values one series keeps duration points for (success
	// included, and itlconv.OtherValue itself); further values are recorded as itlconv.OtherValue.
	maxErrorTypes = 16
)

// series holds the aggregates of one combination of dimension values.
type series struct {
	attrs    pcommon.Map
	start    pcommon.Timestamp
	lastSeen time.Time
	dirty    bool // recorded since the last successful flush

	hists     [numHists]hist // hDuration and hTokens are unused here: see durations and tokens
	durations map[string]hist
	tokensIn  hist
	tokensOut hist
	stalls    int64
	hasStalls bool
}

type itlMetrics struct {
	cfg      *Config
	logger   *zap.Logger
	next     consumer.Metrics
	dims     []Dimension
	instance string
	delta    bool

	decoders sync.Pool
	bounds   [numHists]*bounds // explicit boundaries per histogram

	mu       sync.Mutex
	series   map[string]*series
	keyBuf   []byte
	lastFlus pcommon.Timestamp

	stop     chan struct{}
	done     chan struct{}
	started  bool
	shutOnce sync.Once

	malformed   metric.Int64Counter
	flushErrors metric.Int64Counter
	overflowed  metric.Int64Counter
	reasons     map[genaispan.Reason]metric.AddOption
}

func newConnector(set connector.Settings, cfg *Config, next consumer.Metrics) (*itlMetrics, error) {
	c := &itlMetrics{
		cfg:     cfg,
		logger:  set.Logger,
		next:    next,
		delta:   cfg.isDelta(),
		series:  map[string]*series{},
		reasons: map[genaispan.Reason]metric.AddOption{},
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	excluded := map[string]bool{}
	for _, n := range cfg.ExcludeDimensions {
		excluded[n] = true
	}
	for _, d := range cfg.Dimensions {
		if !excluded[d.Name] {
			c.dims = append(c.dims, d)
		}
	}
	if cfg.AddInstanceID {
		if v, ok := set.Resource.Attributes().Get(string(semconv.ServiceInstanceIDKey)); ok {
			c.instance = v.AsString()
		}
	}
	for h, def := range metricDefs {
		b := def.buckets(&cfg.Histogram.Explicit.Buckets)
		if b == nil {
			b = def.Buckets
		}
		c.bounds[h] = newBounds(b)
	}
	c.decoders.New = func() any { return genaispan.New(cfg.Config) }
	c.lastFlus = pcommon.NewTimestampFromTime(time.Now())

	meter := set.TelemetrySettings.MeterProvider.Meter(ScopeName)
	var err error
	if c.malformed, err = meter.Int64Counter("otelcol_connector_itl_metrics_spans_malformed",
		metric.WithDescription("Spans whose chunk timeline is malformed: no chunk figures are derived from them. The reason attribute says which rule the timeline broke."),
		metric.WithUnit("{span}")); err != nil {
		return nil, err
	}
	if c.flushErrors, err = meter.Int64Counter("otelcol_connector_itl_metrics_flush_errors",
		metric.WithDescription("Flushes the next consumer refused; with delta temporality their data is kept for the next flush."),
		metric.WithUnit("{flush}")); err != nil {
		return nil, err
	}
	if c.overflowed, err = meter.Int64Counter("otelcol_connector_itl_metrics_spans_overflowed",
		metric.WithDescription("Spans aggregated into the overflow series because the cardinality limit was reached."),
		metric.WithUnit("{span}")); err != nil {
		return nil, err
	}
	for _, r := range genaispan.Reasons {
		c.reasons[r] = metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", string(r))))
	}
	return c, nil
}

func (c *itlMetrics) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

// Start starts the flush loop.
func (c *itlMetrics) Start(context.Context, component.Host) error {
	c.started = true
	go c.loop()
	return nil
}

func (c *itlMetrics) loop() {
	defer close(c.done)
	t := time.NewTicker(c.cfg.MetricsFlushInterval)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			if err := c.flush(context.Background()); err != nil {
				c.logger.Warn("flushing metrics failed", zap.Error(err))
			}
		}
	}
}

// Shutdown stops the flush loop and flushes what is left.
func (c *itlMetrics) Shutdown(ctx context.Context) error {
	var err error
	c.shutOnce.Do(func() {
		if !c.started {
			return
		}
		close(c.stop)
		<-c.done
		err = c.flush(ctx)
	})
	return err
}

// spanFigures is what one span contributes, computed outside the lock.
type spanFigures struct {
	genai       bool
	valid       bool
	f           timeline.Figures
	tl          timeline.Timeline
	duration    float64
	hasDuration bool
	errType     string
	inputTokens int64
	hasInput    bool
	ex          exemplar
}

// ConsumeTraces aggregates the spans; the metrics leave at the next flush.
func (c *itlMetrics) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	d := c.decoders.Get().(*genaispan.Decoder)
	defer c.decoders.Put(d)
	now := time.Now()
	pwalk.Spans(td, func(res pcommon.Map, span ptrace.Span) { c.consumeSpan(ctx, d, span, res, now) })
	return nil
}

func (c *itlMetrics) consumeSpan(ctx context.Context, d *genaispan.Decoder, span ptrace.Span, res pcommon.Map, now time.Time) {
	r := d.Decode(span)
	if !r.GenAI {
		return
	}
	attrs := span.Attributes()
	sf := spanFigures{genai: true, errType: genaispan.ErrorType(span)}
	sf.duration, sf.hasDuration = r.Duration()
	if !r.Valid {
		c.malformed.Add(ctx, 1, c.reasons[r.Reason])
		if ce := c.logger.Check(zap.DebugLevel, "malformed chunk timeline; no chunk figures derived"); ce != nil {
			ce.Write(zap.String("reason", string(r.Reason)), zap.Stringer("trace_id", span.TraceID()), zap.Stringer("span_id", span.SpanID()))
		}
	} else {
		sf.valid = true
		sf.f, _ = d.Figures(&r, attrs, false)
		sf.tl = r.Timeline
	}
	if v, ok := attrs.Get(string(semconv.GenAIUsageOutputTokensKey)); ok && !sf.f.HasOutputTokens && v.Type() == pcommon.ValueTypeInt && v.Int() >= 0 {
		// A provider-reported count is not a chunk figure: it stands even when the timeline is malformed.
		sf.f.OutputTokens, sf.f.HasOutputTokens = v.Int(), true
	}
	if v, ok := attrs.Get(string(semconv.GenAIUsageInputTokensKey)); ok && v.Type() == pcommon.ValueTypeInt && v.Int() >= 0 {
		sf.inputTokens, sf.hasInput = v.Int(), true
	}
	sf.ex = exemplar{ts: span.EndTimestamp(), traceID: span.TraceID(), spanID: span.SpanID()}

	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.seriesFor(attrs, res, now)
	c.record(s, &sf)
}

// seriesFor returns the series of the span's dimension values, creating it, or the overflow series
// once the cardinality limit is reached. Called with c.mu held.
func (c *itlMetrics) seriesFor(attrs, res pcommon.Map, now time.Time) *series {
	key := c.keyBuf[:0]
	for _, d := range c.dims {
		if v, ok := lookup(d.Name, attrs, res); ok {
			key = appendTruncated(key, v, c.cfg.DimensionValueMaxLength)
		} else if d.Default != nil {
			key = appendTruncated(key, *d.Default, c.cfg.DimensionValueMaxLength)
		} else {
			key = append(key, keyMissing)
		}
		key = append(key, keySep)
	}
	c.keyBuf = key
	if s, ok := c.series[string(key)]; ok { // no allocation: the compiler reads the bytes in place
		s.lastSeen = now
		return s
	}
	if len(c.series) >= c.cfg.AggregationCardinalityLimit {
		c.overflowed.Add(context.Background(), 1)
		s, ok := c.series[overflowSeries]
		if !ok {
			m := pcommon.NewMap()
			m.PutBool(string(itlconv.OverflowKey), true)
			s = c.newSeries(m, now)
			c.series[overflowSeries] = s
		}
		s.lastSeen = now
		return s
	}
	m := pcommon.NewMap()
	m.EnsureCapacity(len(c.dims) + 1)
	for _, d := range c.dims {
		if v, ok := lookup(d.Name, attrs, res); ok {
			m.PutStr(d.Name, truncate(v, c.cfg.DimensionValueMaxLength))
		} else if d.Default != nil {
			m.PutStr(d.Name, truncate(*d.Default, c.cfg.DimensionValueMaxLength))
		}
	}
	if c.instance != "" {
		m.PutStr(string(itlconv.CollectorInstanceIDKey), c.instance)
	}
	s := c.newSeries(m, now)
	c.series[string(key)] = s
	return s
}

func lookup(name string, attrs, res pcommon.Map) (string, bool) {
	if v, ok := attrs.Get(name); ok {
		return v.AsString(), true
	}
	if v, ok := res.Get(name); ok {
		return v.AsString(), true
	}
	return "", false
}

func appendTruncated(b []byte, v string, max int) []byte {
	return append(b, truncate(v, max)...)
}

// truncate shortens v to at most max bytes, on a rune boundary, marking the cut.
func truncate(v string, max int) string {
	if len(v) <= max {
		return v
	}
	cut := max - len(truncatedMark)
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut] + truncatedMark
}

func (c *itlMetrics) newHist(h int) hist {
	ex := 0
	if c.cfg.Exemplars.Enabled {
		ex = c.cfg.Exemplars.MaxPerDataPoint
	}
	if c.cfg.Histogram.Exponential.MaxSize > 0 {
		return newExpo(c.cfg.Histogram.Exponential.MaxSize, ex)
	}
	return newExplicit(c.bounds[h], ex)
}

func (c *itlMetrics) newSeries(attrs pcommon.Map, now time.Time) *series {
	s := &series{attrs: attrs, lastSeen: now, durations: map[string]hist{}, start: c.lastFlus}
	if !c.delta {
		s.start = pcommon.NewTimestampFromTime(now)
	}
	for _, h := range []int{hTTFT, hGap, hTPOT, hGapMax} {
		s.hists[h] = c.newHist(h)
	}
	s.tokensIn, s.tokensOut = c.newHist(hTokens), c.newHist(hTokens)
	return s
}

// record adds one span's figures to s. Called with c.mu held.
func (c *itlMetrics) record(s *series, sf *spanFigures) {
	s.dirty = true
	ex := sf.ex
	if sf.hasDuration {
		et := sf.errType
		if _, ok := s.durations[et]; !ok && len(s.durations) >= maxErrorTypes-1 {
			et = itlconv.OtherValue // a client inventing error types must not grow the series without bound
		}
		h, ok := s.durations[et]
		if !ok {
			h = c.newHist(hDuration)
			s.durations[et] = h
		}
		h.observe(sf.duration)
		ex.value = sf.duration
		h.exemplars().offer(ex)
	}
	if sf.hasInput {
		s.tokensIn.observe(float64(sf.inputTokens))
	}
	if sf.f.HasOutputTokens {
		s.tokensOut.observe(float64(sf.f.OutputTokens))
	}
	if !sf.valid {
		return
	}
	f := &sf.f
	if f.HasTTFT {
		s.hists[hTTFT].observe(f.TTFT)
		ex.value = f.TTFT
		s.hists[hTTFT].exemplars().offer(ex)
	}
	if f.HasTPOT {
		s.hists[hTPOT].observe(f.TPOT)
		ex.value = f.TPOT
		s.hists[hTPOT].exemplars().offer(ex)
	}
	if f.HasGaps {
		g := s.hists[hGap]
		g.observeGaps(sf.tl.Offsets)
		ex.value = f.MaxGap // the span's worst gap is the one worth linking
		g.exemplars().offer(ex)
		s.hists[hGapMax].observe(f.MaxGap)
		s.hists[hGapMax].exemplars().offer(ex)
	}
	s.stalls += int64(f.Stalls)
	s.hasStalls = true
}

// flush sends the aggregates on. With delta temporality a successful flush starts the next
// interval; a failed one keeps the data, which the next flush sends with the new observations
// merged in (memory stays bounded by the cardinality limit), unless the error is permanent.
func (c *itlMetrics) flush(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	ts := pcommon.NewTimestampFromTime(now)
	md := c.build(ts)

	var err error
	if md.DataPointCount() > 0 {
		if c.delta {
			// The lock stays held through the send: the reset below must not wipe observations
			// recorded while the metrics were on their way. Spans wait meanwhile, which is the
			// backpressure a slow next consumer should cause.
			err = c.next.ConsumeMetrics(ctx, md)
		} else {
			// Cumulative: what is sent is a snapshot and nothing is reset, so spans need not wait.
			c.mu.Unlock()
			err = c.next.ConsumeMetrics(ctx, md)
			c.mu.Lock()
		}
	}
	if err != nil {
		c.flushErrors.Add(ctx, 1)
		if !c.delta || !consumererror.IsPermanent(err) {
			c.expire(now)
			return err
		}
		c.logger.Error("the next consumer refused the metrics permanently; this interval's delta data is dropped", zap.Error(err))
	}
	if c.delta {
		for k, s := range c.series {
			if !s.dirty {
				delete(c.series, k) // idle for a whole interval: nothing to keep
				continue
			}
			c.resetSeries(s, ts)
		}
	}
	c.lastFlus = ts
	c.expire(now)
	return err
}

func (c *itlMetrics) resetSeries(s *series, start pcommon.Timestamp) {
	for _, h := range s.hists {
		if h != nil {
			h.reset()
		}
	}
	clear(s.durations)
	s.tokensIn.reset()
	s.tokensOut.reset()
	s.stalls, s.hasStalls, s.dirty = 0, false, false
	s.start = start
}

// expire drops series idle for longer than metrics_expiration. Called with c.mu held.
func (c *itlMetrics) expire(now time.Time) {
	if c.cfg.MetricsExpiration <= 0 {
		return
	}
	for k, s := range c.series {
		if now.Sub(s.lastSeen) > c.cfg.MetricsExpiration && !(c.delta && s.dirty) {
			delete(c.series, k)
		}
	}
}

// build writes every series' points. Called with c.mu held; it exemplars are cleared after.
func (c *itlMetrics) build(now pcommon.Timestamp) pmetric.Metrics {
	md := pmetric.NewMetrics()
	sm := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(ScopeName)
	sm.Scope().SetVersion(Version)
	temporality := pmetric.AggregationTemporalityCumulative
	if c.delta {
		temporality = pmetric.AggregationTemporalityDelta
	}
	expo := c.cfg.Histogram.Exponential.MaxSize > 0
	ms := [numHists]pmetric.Metric{}
	for h, def := range metricDefs {
		m := sm.Metrics().AppendEmpty()
		m.SetName(def.Name)
		m.SetUnit(def.Unit)
		m.SetDescription(def.Description)
		if expo {
			m.SetEmptyExponentialHistogram().SetAggregationTemporality(temporality)
		} else {
			m.SetEmptyHistogram().SetAggregationTemporality(temporality)
		}
		ms[h] = m
	}
	stalls := sm.Metrics().AppendEmpty()
	stalls.SetName(itlconv.Stalls.Name)
	stalls.SetUnit(itlconv.Stalls.Unit)
	stalls.SetDescription(itlconv.Stalls.Description)
	sum := stalls.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(temporality)

	scratch := pcommon.NewMap()
	for _, s := range c.series {
		if c.delta && !s.dirty {
			continue
		}
		for _, h := range []int{hTTFT, hGap, hTPOT, hGapMax} {
			if s.hists[h].count() > 0 {
				s.hists[h].write(ms[h], s.attrs, s.start, now)
			}
		}
		for et, h := range s.durations {
			if h.count() == 0 {
				continue
			}
			attrs := s.attrs
			if et != "" {
				s.attrs.CopyTo(scratch)
				scratch.PutStr(string(semconv.ErrorTypeKey), et)
				attrs = scratch
			}
			h.write(ms[hDuration], attrs, s.start, now)
		}
		for _, tt := range []struct {
			h   hist
			typ string
		}{{s.tokensIn, itlconv.TokenTypeInput}, {s.tokensOut, itlconv.TokenTypeOutput}} {
			if tt.h.count() == 0 {
				continue
			}
			s.attrs.CopyTo(scratch)
			scratch.PutStr(string(semconv.GenAITokenTypeKey), tt.typ)
			tt.h.write(ms[hTokens], scratch, s.start, now)
		}
		if s.hasStalls {
			dp := sum.DataPoints().AppendEmpty()
			s.attrs.CopyTo(dp.Attributes())
			dp.SetStartTimestamp(s.start)
			dp.SetTimestamp(now)
			dp.SetIntValue(s.stalls)
		}
		// Exemplars describe the latest interval only.
		for _, h := range s.hists {
			if h != nil {
				h.exemplars().ex = h.exemplars().ex[:0]
			}
		}
		for _, h := range s.durations {
			h.exemplars().ex = h.exemplars().ex[:0]
		}
	}
	// Drop metrics without points, so that backends see no empty metrics.
	sm.Metrics().RemoveIf(func(m pmetric.Metric) bool {
		switch m.Type() {
		case pmetric.MetricTypeHistogram:
			return m.Histogram().DataPoints().Len() == 0
		case pmetric.MetricTypeExponentialHistogram:
			return m.ExponentialHistogram().DataPoints().Len() == 0
		case pmetric.MetricTypeSum:
			return m.Sum().DataPoints().Len() == 0
		}
		return false
	})
	return md
}
