package itlmetricsconnector

import (
	"context"
	"encoding/binary"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
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
	"github.com/otelitl/itl/collector/internal/buckets"
	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/itlconv"
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

// series holds the aggregates of one combination of dimension values. Its histograms are made on
// their first observation: a series of client spans never holds the server's, a series of spans
// without timelines never holds the gap histograms, and memory follows what the series sees.
type series struct {
	attrs    pcommon.Map
	start    pcommon.Timestamp
	lastSeen time.Time
	dirty    bool // recorded since the last successful flush

	hists       [numHists]hist // hDuration, hServerDuration and hTokens are kept below instead
	durations   []errHist      // by side and error.type, at most maxErrorTypes a side
	tokensIn    hist
	tokensOut   hist
	stalls      int64
	hasStalls   bool
	generations [numTimings]int64
}

// errHist is a duration histogram of one error.type ("" for success) on one side (h is hDuration
// or hServerDuration).
type errHist struct {
	h  int
	et string
	hist
}

// The itlconv.Timing values, in the order series.generations counts them.
const (
	timingTimeline = iota
	timingTTFT
	timingNone
	numTimings
)

var timings = [numTimings]string{itlconv.TimingTimeline, itlconv.TimingTTFT, itlconv.TimingNone}

type itlMetrics struct {
	cfg      *Config
	logger   *zap.Logger
	next     consumer.Metrics
	dims     []dim
	instance string
	delta    bool

	batches sync.Pool                // of *batch
	dedup   *dedup                   // nil unless deduplicate.max_spans is set
	bounds  [numHists]*buckets.Table // explicit boundaries per histogram

	mu       sync.Mutex
	series   map[string]*series
	keyBuf   []byte
	lastFlus pcommon.Timestamp

	stop      chan struct{}
	done      chan struct{}
	started   bool
	startOnce sync.Once
	shutOnce  sync.Once

	malformed   metric.Int64Counter
	flushErrors metric.Int64Counter
	overflowed  metric.Int64Counter
	recorded    metric.Int64Counter
	bounded     metric.Int64Counter
	expired     metric.Int64Counter
	duplicates  metric.Int64Counter
	nested      metric.Int64Counter
	// nestedLogged is when checkNested last logged (Unix ns).
	nestedLogged atomic.Int64
	seriesGauge  metric.Registration
	nSeries      atomic.Int64       // len(series), for the series gauge's callback, which takes no lock
	self         metric.AddOption   // connector: the instance's id
	selfOpts     []metric.AddOption // self, as a slice made once
	reasons      map[genaispan.Reason]metric.AddOption
	boundOpts    [numBounds]metric.AddOption
}

// Why a value was recorded in a bounded form: the bounded counter's reasons.
const (
	boundDimensionValue = iota // a dimension value cut to dimension_value_max_length
	boundErrorTypeCut          // an error.type cut to itlconv.MaxErrorTypeLength bytes
	boundErrorTypeOther        // an error.type recorded as itlconv.OtherValue, its series full
	numBounds
)

var boundReasons = [numBounds]string{"dimension_value_truncated", "error_type_truncated", "error_type_other"}

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
			c.dims = append(c.dims, newDim(d))
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
		c.bounds[h] = buckets.New(b)
	}
	c.batches.New = func() any { return c.newBatch() }
	if cfg.Deduplicate.MaxSpans > 0 {
		c.dedup = newDedup(cfg.Deduplicate.MaxSpans)
	}
	c.lastFlus = pcommon.NewTimestampFromTime(time.Now())

	meter := set.TelemetrySettings.MeterProvider.Meter(ScopeName)
	var err error
	if c.malformed, err = meter.Int64Counter("otelcol_connector_itl_metrics_spans_malformed",
		metric.WithDescription("Model calls whose spans hold a malformed value (a timeline, a time to first chunk, a token count, a start or end): no figure is derived from that value. The reason attribute says which rule the value broke; a span breaking two counts once under each."),
		metric.WithUnit("{span}")); err != nil {
		return nil, err
	}
	if c.flushErrors, err = meter.Int64Counter("otelcol_connector_itl_metrics_flush_errors",
		metric.WithDescription("Flushes the next consumer refused; with delta temporality their data is kept for the next flush, unless the refusal is permanent, which drops it with an error log."),
		metric.WithUnit("{flush}")); err != nil {
		return nil, err
	}
	if c.overflowed, err = meter.Int64Counter("otelcol_connector_itl_metrics_spans_overflowed",
		metric.WithDescription("Spans aggregated into the overflow series because the cardinality limit was reached."),
		metric.WithUnit("{span}")); err != nil {
		return nil, err
	}
	if c.recorded, err = meter.Int64Counter("otelcol_connector_itl_metrics_spans_recorded",
		metric.WithDescription("Model calls' spans recorded into the series; spans that are not model calls are not counted."),
		metric.WithUnit("{span}")); err != nil {
		return nil, err
	}
	if c.bounded, err = meter.Int64Counter("otelcol_connector_itl_metrics_values_bounded",
		metric.WithDescription("Values recorded in a bounded form, so that a series' labels stay bounded: a dimension value cut to dimension_value_max_length bytes, an error.type cut to its bound, or an error.type recorded as _OTHER because its series already holds the most error types it keeps. The reason attribute says which."),
		metric.WithUnit("{value}")); err != nil {
		return nil, err
	}
	if c.expired, err = meter.Int64Counter("otelcol_connector_itl_metrics_series_expired",
		metric.WithDescription("Series dropped after metrics_expiration without a span; a cumulative series that comes back starts again from zero."),
		metric.WithUnit("{series}")); err != nil {
		return nil, err
	}
	if c.duplicates, err = meter.Int64Counter("otelcol_connector_itl_metrics_spans_deduplicated",
		metric.WithDescription("Model calls' spans not counted, with deduplicate.max_spans, because the connector counted a span of the same trace and span ID lately: a client sent them again, retrying a request the pipeline refused or that timed out. They are not among the spans recorded."),
		metric.WithUnit("{span}")); err != nil {
		return nil, err
	}
	if c.nested, err = meter.Int64Counter("otelcol_connector_itl_metrics_spans_nested",
		metric.WithDescription("Client model calls whose parent span is another client model call of the same request: almost always one request that two instrumentations describe, which is counted twice; name one instrumentation's scope in excluded_scopes. They are counted, and among the spans recorded."),
		metric.WithUnit("{span}")); err != nil {
		return nil, err
	}
	// The instance's id: without it, two itl_metrics connectors in one collector count into one
	// series (the collector adds the id itself only with its telemetry.newPipelineTelemetry gate on).
	id := attribute.String("connector", set.ID.String())
	self := metric.WithAttributeSet(attribute.NewSet(id)) // an AddOption and an ObserveOption
	c.self = self
	c.selfOpts = []metric.AddOption{c.self}
	for _, r := range genaispan.Reasons {
		c.reasons[r] = metric.WithAttributeSet(attribute.NewSet(id, attribute.String("reason", string(r))))
	}
	for i, r := range boundReasons {
		c.boundOpts[i] = metric.WithAttributeSet(attribute.NewSet(id, attribute.String("reason", r)))
	}
	gauge, err := meter.Int64ObservableGauge("otelcol_connector_itl_metrics_series_held",
		metric.WithDescription("Series the connector holds, the overflow series included: against aggregation_cardinality_limit, how close the overflow is."),
		metric.WithUnit("{series}"))
	if err != nil {
		return nil, err
	}
	if c.seriesGauge, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(gauge, c.nSeries.Load(), self)
		return nil
	}, gauge); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *itlMetrics) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

// Start starts the flush loop. The collector starts a component once; a second Start (a host of
// its own, a test) starts no second loop, which would flush twice as often and close done twice.
func (c *itlMetrics) Start(context.Context, component.Host) error {
	c.startOnce.Do(func() {
		c.started = true
		go c.loop()
	})
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
		if c.seriesGauge != nil {
			_ = c.seriesGauge.Unregister() // the meter must not keep a shut-down connector alive
		}
		if !c.started {
			return
		}
		close(c.stop)
		<-c.done
		err = c.flush(ctx)
	})
	return err
}

// ConsumeTraces aggregates the spans; the metrics leave at the next flush.
//
// The spans are read outside the lock, and recorded under it a batch at a time: taking and
// releasing the lock for every span cost about 5% of a span's own work (BENCHMARKS.md).
func (c *itlMetrics) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	b := c.batches.Get().(*batch)
	defer c.putBatch(b)
	now := time.Now()
	n := 0
	pwalk.SpansOutside(td, c.cfg.ExcludedScopes, func(res pcommon.Map, scope pcommon.InstrumentationScope, span ptrace.Span) {
		if !c.read(ctx, b, span, res, scope) {
			return
		}
		n++
		if b.n == len(b.spans) {
			c.recordBatch(b, now)
		}
	})
	c.recordBatch(b, now)
	if n > 0 {
		c.recorded.Add(ctx, int64(n), c.selfOpts...) // no slice made per call: the spans' path allocates nothing
	}
	if b.dups > 0 {
		c.duplicates.Add(ctx, int64(b.dups), c.selfOpts...)
		b.dups = 0
	}
	if len(b.calls) > 1 {
		c.checkNested(ctx, b)
	}
	b.calls = b.calls[:0]
	return nil
}

// batchSize is how many model calls are read before the lock is taken to record them. Each holds a
// decoder of its own, with buffers as large as the longest timeline it has read, up to
// genaispan.KeepChunks once the batch is back in its pool: four take most of the lock's cost off a
// span (eight took no more in the same runs) and hold half their memory.
const batchSize = 4

// batch holds model calls read and not yet recorded: each with a decoder of its own, which holds
// what it read.
type batch struct {
	spans [batchSize]pending
	n     int
	dups  int       // model calls skipped as duplicates (deduplicate.max_spans)
	calls []callRef // the request's client model calls so far, for checkNested
	index spanIndex // checkNested's index of calls, kept between requests
}

type pending struct {
	d       *genaispan.Decoder
	call    *genaispan.Call
	attrs   pcommon.Map
	res     pcommon.Map
	errType string
	ex      exemplar
}

func (c *itlMetrics) newBatch() *batch {
	b := &batch{}
	for i := range b.spans {
		b.spans[i].d = genaispan.New(c.cfg.Config)
		if c.cfg.Histogram.Exponential.MaxSize == 0 {
			// The decoder counts the gaps in the gap histogram's buckets as it reads them.
			b.spans[i].d.CountGaps(buckets.NewCounter(c.bounds[hGap]))
		}
	}
	return b
}

// putBatch puts b back in the pool, its decoders without the buffers a long timeline grew
// (genaispan.KeepChunks): the pool holds a batch of four decoders for every ConsumeTraces that ran
// at once, and each would otherwise keep the memory of the longest timeline it has read.
func (c *itlMetrics) putBatch(b *batch) {
	for i := range b.spans {
		b.spans[i].d.Trim()
	}
	if cap(b.calls) > maxKeptCalls {
		b.calls, b.index.slots = nil, nil
	}
	c.batches.Put(b)
}

// read reads span with the batch's next decoder, and reports whether it is a model call to count,
// which it then adds to the batch. A model call counted lately (deduplicate.max_spans) is counted
// in b.dups instead, before anything else is counted of it.
func (c *itlMetrics) read(ctx context.Context, b *batch, span ptrace.Span, res pcommon.Map, scope pcommon.InstrumentationScope) bool {
	p := &b.spans[b.n]
	call := p.d.Read(span, false)
	if !call.ModelCall {
		return false
	}
	if c.dedup != nil && c.dedup.seen(span.TraceID(), span.SpanID(), call.Server) {
		b.dups++
		return false
	}
	if bad := call.Malformed(); len(bad) > 0 {
		for _, why := range bad {
			c.malformed.Add(ctx, 1, c.reasons[why])
		}
		if ce := c.logger.Check(zap.DebugLevel, "malformed values on a model call's span; no figures derived from them"); ce != nil {
			ce.Write(zap.String("reason", genaispan.JoinReasons(bad)), zap.Stringer("trace_id", span.TraceID()), zap.Stringer("span_id", span.SpanID()))
		}
	}
	p.call, p.attrs, p.res = call, span.Attributes(), res
	p.errType = genaispan.ErrorType(span)
	if len(p.errType) > itlconv.MaxErrorTypeLength {
		c.bounded.Add(ctx, 1, c.boundOpts[boundErrorTypeCut])
		p.errType = boundErrorType(p.errType)
	}
	p.ex = exemplar{ts: span.EndTimestamp(), traceID: span.TraceID(), spanID: span.SpanID()}
	if !call.Server {
		b.calls = append(b.calls, callRef{trace: p.ex.traceID, span: p.ex.spanID, parent: span.ParentSpanID(), scope: scope.Name()})
	}
	b.n++
	return true
}

// recordBatch records the batch's model calls under the lock, and empties it.
func (c *itlMetrics) recordBatch(b *batch, now time.Time) {
	if b.n == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range b.n {
		p := &b.spans[i]
		c.record(c.seriesFor(p.call, p.d, p.attrs, p.res, now), p.call, p.d.GapCounts(), p.errType, &p.ex)
		p.call, p.attrs, p.res = nil, pcommon.Map{}, pcommon.Map{} // hold on to no span
	}
	b.n = 0
}

// boundErrorType cuts an error.type to itlconv.MaxErrorTypeLength bytes and copies what it keeps,
// so that a series never holds on to a huge string a client sent.
func boundErrorType(et string) string {
	if len(et) <= itlconv.MaxErrorTypeLength {
		return et
	}
	return strings.Clone(truncate(et, itlconv.MaxErrorTypeLength))
}

// seriesFor returns the series of the span's dimension values, creating it, or the overflow series
// once the cardinality limit is reached. Called with c.mu held.
func (c *itlMetrics) seriesFor(call *genaispan.Call, dec *genaispan.Decoder, attrs, res pcommon.Map, now time.Time) *series {
	key := c.keyBuf[:0]
	for i := range c.dims {
		d := &c.dims[i]
		if v, ok := d.lookup(call, dec, attrs, res); ok {
			if len(v) > c.cfg.DimensionValueMaxLength {
				c.bounded.Add(context.Background(), 1, c.boundOpts[boundDimensionValue])
			}
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
		c.overflowed.Add(context.Background(), 1, c.self)
		s, ok := c.series[overflowSeries]
		if !ok {
			m := pcommon.NewMap()
			m.PutBool(string(itlconv.OverflowKey), true)
			if c.instance != "" { // replicas' overflow series are as distinct as their others
				m.PutStr(string(itlconv.CollectorInstanceIDKey), c.instance)
			}
			s = c.newSeries(m, now)
			c.series[overflowSeries] = s
			c.nSeries.Store(int64(len(c.series)))
		}
		s.lastSeen = now
		return s
	}
	m := pcommon.NewMap()
	m.EnsureCapacity(len(c.dims) + 1)
	for i := range c.dims {
		d := &c.dims[i]
		if v, ok := d.lookup(call, dec, attrs, res); ok {
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
	c.nSeries.Store(int64(len(c.series)))
	return s
}

// dim is a configured dimension, with where its value comes from told once, at start.
type dim struct {
	Dimension
	norm  int            // normNone, or which of the reader's normalised names the dimension is
	attr  genaispan.Attr // the span attribute as the reader found it, when known
	known bool
}

// The dimensions whose value is what the reader normalised from whichever instrumentation wrote
// the span, rather than an attribute.
const (
	normNone = iota
	normOperation
	normProvider
	normModel
)

func newDim(d Dimension) dim {
	a, known := genaispan.AttrOf(d.Name)
	nd := dim{Dimension: d, attr: a, known: known}
	switch d.Name {
	case string(semconv.GenAIOperationNameKey):
		nd.norm = normOperation
	case string(semconv.GenAIProviderNameKey):
		nd.norm = normProvider
	case string(semconv.GenAIRequestModelKey):
		nd.norm = normModel
	}
	return nd
}

// lookup finds the dimension's value: for the operation, provider and model, what the reader
// normalised from whichever instrumentation wrote the span; else the span's attribute (from the
// reader, which found it on its way through them, when it looks for it), else its resource's.
func (d *dim) lookup(call *genaispan.Call, dec *genaispan.Decoder, attrs, res pcommon.Map) (string, bool) {
	var norm string
	switch d.norm {
	case normOperation:
		norm = call.Operation
	case normProvider:
		norm = call.Provider
	case normModel:
		norm = call.Model
	}
	if norm != "" {
		return norm, true
	}
	var v pcommon.Value
	var ok bool
	if d.known {
		v, ok = dec.Attr(d.attr)
	} else {
		v, ok = attrs.Get(d.Name)
	}
	if ok {
		return v.AsString(), true
	}
	if v, ok := res.Get(d.Name); ok {
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
	if c.cfg.Exemplars.Enabled && h != hTokens { // token counts link to no generation worth opening
		ex = c.cfg.Exemplars.MaxPerDataPoint
	}
	if c.cfg.Histogram.Exponential.MaxSize > 0 {
		return newExpo(c.cfg.Histogram.Exponential.MaxSize, ex)
	}
	return newExplicit(c.bounds[h], ex)
}

func (c *itlMetrics) newSeries(attrs pcommon.Map, now time.Time) *series {
	s := &series{attrs: attrs, lastSeen: now, start: c.lastFlus}
	if !c.delta {
		s.start = pcommon.NewTimestampFromTime(now)
	}
	return s
}

// hist returns the series' histogram h, making it on first use.
func (c *itlMetrics) hist(s *series, h int) hist {
	if s.hists[h] == nil {
		s.hists[h] = c.newHist(h)
	}
	return s.hists[h]
}

// duration returns the duration histogram of side h (hDuration or hServerDuration) and error.type
// et, making it on first use. A series keeps at most maxErrorTypes error types a side: a client
// inventing error types must not grow it without bound; the rest are counted as itlconv.OtherValue.
func (c *itlMetrics) duration(s *series, h int, et string) hist {
	n := 0
	for _, d := range s.durations {
		if d.h != h {
			continue
		}
		if d.et == et {
			return d.hist
		}
		n++
	}
	if n >= maxErrorTypes-1 && et != itlconv.OtherValue {
		c.bounded.Add(context.Background(), 1, c.boundOpts[boundErrorTypeOther])
		return c.duration(s, h, itlconv.OtherValue)
	}
	d := errHist{h: h, et: et, hist: c.newHist(h)}
	s.durations = append(s.durations, d)
	return d.hist
}

// observe adds v to histogram h of s, and offers its exemplar: ex with the value v.
func (c *itlMetrics) observe(hs hist, v float64, ex *exemplar) {
	hs.observe(v)
	hs.exemplars().offer(v, ex)
}

// record adds one model call's figures to s. Called with c.mu held.
//
// A SERVER span feeds the server metrics (time to first token, time per output token per gap,
// request duration) and nothing else: its tokens, stalls and largest gap are the client's to
// count, and counting them twice for one request would double every sum. Stalls, the largest gap
// and the gaps exist only for a valid timeline: a mean gap or a time to first chunk says nothing
// of them.
func (c *itlMetrics) record(s *series, call *genaispan.Call, gapCounts []uint64, errType string, ex *exemplar) {
	s.dirty = true
	f := &call.Figures
	withTimeline := call.HasTimeline() && call.Valid
	if call.Server {
		if call.HasDuration {
			c.observe(c.duration(s, hServerDuration, errType), call.Duration, ex)
		}
		if f.HasTTFT {
			c.observe(c.hist(s, hServerTTFT), f.TTFT, ex)
		}
		if withTimeline && f.HasGaps {
			h := c.hist(s, hServerTPOT)
			h.observeGapsPerToken(call.Timeline, call.Gaps)
			h.exemplars().offer(f.MaxGap, ex)
		}
		return
	}
	if call.HasDuration {
		c.observe(c.duration(s, hDuration, errType), call.Duration, ex)
	}
	if call.HasInputTokens {
		if s.tokensIn == nil {
			s.tokensIn = c.newHist(hTokens)
		}
		s.tokensIn.observe(float64(call.InputTokens))
	}
	if f.HasOutputTokens {
		if s.tokensOut == nil {
			s.tokensOut = c.newHist(hTokens)
		}
		s.tokensOut.observe(float64(f.OutputTokens))
	}
	switch call.Timing {
	case itlconv.TimingTimeline:
		s.generations[timingTimeline]++
	case itlconv.TimingTTFT:
		s.generations[timingTTFT]++
	default:
		s.generations[timingNone]++
	}
	if f.HasTTFT {
		c.observe(c.hist(s, hTTFT), f.TTFT, ex)
	}
	if !withTimeline {
		return
	}
	if f.HasTPOT {
		c.observe(c.hist(s, hTPOT), f.TPOT, ex)
	}
	if f.HasGaps {
		g := c.hist(s, hGap)
		if gapCounts != nil {
			g.addGapCounts(gapCounts, call.Timeline.Offsets, call.Gaps)
		} else {
			g.observeGaps(call.Timeline.Offsets, call.Gaps)
		}
		g.exemplars().offer(f.MaxGap, ex) // the span's worst gap is the one worth linking
		c.observe(c.hist(s, hGapMax), f.MaxGap, ex)
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
		c.flushErrors.Add(ctx, 1, c.self)
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
		c.nSeries.Store(int64(len(c.series)))
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
	s.durations = s.durations[:0]
	for _, h := range []hist{s.tokensIn, s.tokensOut} {
		if h != nil {
			h.reset()
		}
	}
	s.stalls, s.hasStalls, s.dirty = 0, false, false
	s.generations = [numTimings]int64{}
	s.start = start
}

// expire drops series idle for longer than metrics_expiration. Called with c.mu held.
func (c *itlMetrics) expire(now time.Time) {
	if c.cfg.MetricsExpiration <= 0 {
		return
	}
	n := 0
	for k, s := range c.series {
		if now.Sub(s.lastSeen) > c.cfg.MetricsExpiration && !(c.delta && s.dirty) {
			delete(c.series, k)
			n++
		}
	}
	if n > 0 {
		c.expired.Add(context.Background(), int64(n), c.self)
		c.nSeries.Store(int64(len(c.series)))
	}
}

// build writes every series' points. Called with c.mu held; the exemplars are cleared after.
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
	sum := func(def itlconv.Metric) pmetric.Sum {
		m := sm.Metrics().AppendEmpty()
		m.SetName(def.Name)
		m.SetUnit(def.Unit)
		m.SetDescription(def.Description)
		sum := m.SetEmptySum()
		sum.SetIsMonotonic(true)
		sum.SetAggregationTemporality(temporality)
		return sum
	}
	stalls, generations := sum(itlconv.Stalls), sum(itlconv.Generations)

	scratch := pcommon.NewMap()
	for _, s := range c.series {
		if c.delta && !s.dirty {
			continue
		}
		for h, hs := range s.hists {
			if hs != nil && hs.count() > 0 {
				hs.write(ms[h], s.attrs, s.start, now)
			}
		}
		for _, d := range s.durations {
			if d.count() == 0 {
				continue
			}
			attrs := s.attrs
			if d.et != "" {
				s.attrs.CopyTo(scratch)
				scratch.PutStr(string(semconv.ErrorTypeKey), d.et)
				attrs = scratch
			}
			d.write(ms[d.h], attrs, s.start, now)
		}
		for _, tt := range []struct {
			h   hist
			typ string
		}{{s.tokensIn, itlconv.TokenTypeInput}, {s.tokensOut, itlconv.TokenTypeOutput}} {
			if tt.h == nil || tt.h.count() == 0 {
				continue
			}
			s.attrs.CopyTo(scratch)
			scratch.PutStr(string(semconv.GenAITokenTypeKey), tt.typ)
			tt.h.write(ms[hTokens], scratch, s.start, now)
		}
		if s.hasStalls {
			c.sumPoint(stalls, s.attrs, s.start, now, s.stalls)
		}
		for t, n := range s.generations {
			if n == 0 {
				continue
			}
			s.attrs.CopyTo(scratch)
			scratch.PutStr(itlconv.TimingKey, timings[t])
			c.sumPoint(generations, scratch, s.start, now, n)
		}
		// Exemplars describe the latest interval only.
		for _, h := range s.hists {
			if h != nil {
				h.exemplars().ex = h.exemplars().ex[:0]
			}
		}
		for _, d := range s.durations {
			d.exemplars().ex = d.exemplars().ex[:0]
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

func (c *itlMetrics) sumPoint(sum pmetric.Sum, attrs pcommon.Map, start, now pcommon.Timestamp, v int64) {
	dp := sum.DataPoints().AppendEmpty()
	attrs.CopyTo(dp.Attributes())
	dp.SetStartTimestamp(start)
	dp.SetTimestamp(now)
	dp.SetIntValue(v)
}

// callRef is a client model call of the request being read: its IDs and instrumentation scope.
type callRef struct {
	trace  pcommon.TraceID
	span   pcommon.SpanID
	parent pcommon.SpanID
	scope  string
}

// spanIndex finds a request's model call by its span ID: an open-addressing table of the calls'
// indexes, twice as large as the calls, hashed with a seed of the process so that a client cannot
// choose IDs that all fall in one slot (and a span sent many times in one request takes one slot).
// It is kept in the batch between requests, so a request allocates nothing once its batch has seen
// one as large; a Go map took eight times as long (BenchmarkNestedCheck).
type spanIndex struct {
	slots []int32 // a call's index + 1, 0 for an empty slot
	mask  uint64
}

// spanIndexKeys are the secret keys of spanHash, drawn once per process.
var spanIndexKeys = func() (k [3]uint64) {
	seed := maphash.MakeSeed()
	for i := range k {
		k[i] = maphash.Comparable(seed, i) | 1
	}
	return k
}()

// spanHash mixes a span's trace and span ID with the process's keys (a multiply-xorshift of the
// three words): a client that does not know the keys cannot choose IDs that collide. maphash of
// the 24 bytes took five times as long (4.4 against 0.83 µs a request of 100 calls).
func spanHash(trace pcommon.TraceID, span pcommon.SpanID) uint64 {
	h := binary.LittleEndian.Uint64(span[:])*spanIndexKeys[0] ^
		binary.LittleEndian.Uint64(trace[:8])*spanIndexKeys[1] ^
		binary.LittleEndian.Uint64(trace[8:])*spanIndexKeys[2]
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>32
}

// fill indexes calls, emptying the table first.
func (x *spanIndex) fill(calls []callRef) {
	size := 32
	for size < 2*len(calls) {
		size <<= 1
	}
	if cap(x.slots) < size {
		x.slots = make([]int32, size)
	} else {
		x.slots = x.slots[:size]
		clear(x.slots)
	}
	x.mask = uint64(size - 1)
	for i, r := range calls {
		h := spanHash(r.trace, r.span) & x.mask
		for ; x.slots[h] != 0; h = (h + 1) & x.mask {
			if k := x.slots[h] - 1; calls[k].span == r.span && calls[k].trace == r.trace {
				break // a span sent twice in one request: the first stands for both
			}
		}
		if x.slots[h] == 0 {
			x.slots[h] = int32(i + 1)
		}
	}
}

// find returns the index of the call of trace and span, or -1.
func (x *spanIndex) find(calls []callRef, trace pcommon.TraceID, span pcommon.SpanID) int {
	for h := spanHash(trace, span) & x.mask; x.slots[h] != 0; h = (h + 1) & x.mask {
		if k := int(x.slots[h] - 1); calls[k].span == span && calls[k].trace == trace {
			return k
		}
	}
	return -1
}

// maxKeptCalls bounds the callRefs a pooled batch keeps between requests (a few hundred KiB).
const maxKeptCalls = 8192

// nestedLogEvery is how often, at most, the connector logs that it found nested model calls.
const nestedLogEvery = time.Minute

// checkNested counts the client model calls of one request whose parent span is another of its
// client model calls, and says so in the log, at most once a minute. Such a pair is almost always
// one request that two instrumentations describe (a framework's span above its SDK's, the OpenAI
// Agents SDK's above the OpenAI SDK's), which the connector counts twice: two generations, two
// durations, the tokens twice. The connector cannot tell which of the two the operator wants, so
// it counts both, and tells them about excluded_scopes. Only a parent and its child in the same
// request are seen: a pipeline's batch processor usually puts one process's spans of a trace in
// one request; otelitl-proxy's span, exported by another process than the application's above
// it, seldom is, and never when it is a grandchild through the application's HTTP client span.
// A SERVER span above its own CLIENT span (a gateway) is no pair: the
// two are counted apart.
func (c *itlMetrics) checkNested(ctx context.Context, b *batch) {
	calls := b.calls
	var idx *spanIndex
	if len(calls) > 16 {
		idx = &b.index
		idx.fill(calls)
	}
	n, outer, inner := 0, -1, -1
	for i, r := range calls {
		if r.parent.IsEmpty() {
			continue
		}
		j := -1
		if idx != nil {
			j = idx.find(calls, r.trace, r.parent)
		} else {
			for k, p := range calls {
				if p.span == r.parent && p.trace == r.trace {
					j = k
					break
				}
			}
		}
		if j >= 0 {
			n++
			outer, inner = j, i
		}
	}
	if n == 0 {
		return
	}
	c.nested.Add(ctx, int64(n), c.selfOpts...)
	now := time.Now().UnixNano()
	last := c.nestedLogged.Load()
	if now-last < int64(nestedLogEvery) || !c.nestedLogged.CompareAndSwap(last, now) {
		return
	}
	c.logger.Warn("a model call's span is the child of another model call's span: two instrumentations describe one request, which is counted twice; "+
		"name the scope of the one whose figures you do not want in excluded_scopes (of this connector and the itl processor); "+
		"when both are of one instrumentation, its row of the README's support matrix says what to do",
		zap.Int("nested_model_calls", n), zap.String("outer_scope", calls[outer].scope), zap.String("inner_scope", calls[inner].scope),
		zap.Stringer("trace_id", calls[inner].trace), zap.Stringer("span_id", calls[inner].span))
}
