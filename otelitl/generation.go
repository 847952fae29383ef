package otelitl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/itlconv/timeline"
	"github.com/otelitl/itl/otelitl/internal/cycles"
)

// Generation records one streamed generation. Its methods are safe for concurrent use: a
// cancellation may call End while another goroutine is in Chunk. After End, further calls are
// ignored, and a second End is harmless. All methods may be called on a nil *Generation, and on a
// zero one, which records nothing.
type Generation struct {
	on bool // made by Start to record; false (a nil, zero or inert Generation): nothing is recorded

	in        *Instrumentation
	ctx       context.Context
	span      trace.Span
	recording bool
	server    bool // a SERVER generation: the server metrics, not the client ones
	start     time.Time

	operation, provider, model, address string
	port                                int

	mu        sync.Mutex
	ended     bool
	unsorted  bool
	offsets   []int64 // nanoseconds from start, one per chunk; counter values while ticks
	ticks     bool    // Chunk reads the cycle counter; End converts offsets using from and a new pair
	from      cycles.Pair
	tokens    []int64 // per chunk; nil while every chunk carried 1 token
	max       int     // the chunk cap (WithMaxChunks): len(offsets) never exceeds it
	dropped   int64   // chunks received but not recorded: past the cap, or at impossible times
	firstDrop int64   // the earliest arrival ChunkAt dropped past the cap (ns); MaxInt64 if none

	serverChanged     bool
	modelChanged      bool  // SetRequestModel gave the model Start did not have
	providerChanged   bool  // SetProvider replaced Start's provider
	usageIn, usageOut int64 // -1: unknown
	responseModel     string
	responseID        string
	finishReasons     []string
}

// IsRecording reports whether this generation records anything: a span or metrics.
func (g *Generation) IsRecording() bool { return g != nil && g.on }

// maxChunkTokens bounds one chunk's token count where the collector does (itlconv.MaxTokens), so
// that no count a caller passes can overflow the timeline's token sum (10^9 tokens times
// DefaultMaxChunks chunks is far below 2^63) or make the span malformed to a reader.
const maxChunkTokens = itlconv.MaxTokens

// Chunk records that a chunk carrying tokens tokens arrived now. A chunk carries at least one token:
// smaller counts are recorded as 1, and counts above itlconv.MaxTokens (10^9) as 10^9. Past the chunk cap
// ([WithMaxChunks]) the chunk is only counted. This is the hot path: it reads a clock and appends,
// about 13 ns with the cycle counter (see [WithCycleCounter]) and 34 ns with time.Since on the
// project's machine, and 55 ns with time.Since on a VM whose kernel clocks with kvm-clock.
func (g *Generation) Chunk(tokens int) {
	if g == nil || !g.on {
		return
	}
	g.mu.Lock()
	if !g.ended {
		if n := len(g.offsets); n < g.max {
			// The clock is read under the lock so that ChunkAt and End, which convert counter
			// values, never see one read before their conversion and appended after it.
			var off int64
			if g.ticks {
				off = cycles.Now()
			} else {
				off = int64(time.Since(g.start))
			}
			// The common case inline: one token, room in the buffer, in order.
			if tokens == 1 && g.tokens == nil && n < cap(g.offsets) && (n == 0 || off >= g.offsets[n-1]) {
				g.offsets = g.offsets[:n+1]
				g.offsets[n] = off
			} else {
				g.appendLocked(off, tokens)
			}
		} else {
			g.dropped++
		}
	}
	g.mu.Unlock()
}

// ChunkAt records that a chunk carrying tokens tokens arrived at t, for replays and tests. Arrivals
// may be given out of order; they are sorted at End. An arrival before the start is recorded at the
// start. An arrival more than itlconv.MaxDuration (24 h) away from the start, after or before it,
// is an impossible timestamp (a zero time.Time, a clock gone wrong): it is not recorded, only
// counted in otelitl.chunk.dropped, so that it can neither stretch the span nor fake a time to
// first chunk. Past the chunk cap ([WithMaxChunks]) arrivals are only counted too.
func (g *Generation) ChunkAt(t time.Time, tokens int) {
	if g == nil || !g.on {
		return
	}
	d := t.Sub(g.start) // saturates instead of overflowing
	impossible := d > itlconv.MaxDuration || d < -itlconv.MaxDuration
	off := max(int64(d), 0)
	g.mu.Lock()
	if !g.ended {
		switch {
		case impossible:
			g.dropped++
		case len(g.offsets) >= g.max:
			g.dropped++
			// Replayed arrivals may come out of order: one dropped here may precede every one
			// kept, and the time to first chunk must still be its.
			g.firstDrop = min(g.firstDrop, off)
		default:
			g.toMonotonicLocked()
			g.appendLocked(off, tokens)
		}
	}
	g.mu.Unlock()
}

// toMonotonicLocked converts the counter values recorded so far to nanoseconds from the start and
// times the rest of the generation with the monotonic clock, for a generation that mixes Chunk with
// ChunkAt or is ending.
func (g *Generation) toMonotonicLocked() {
	if !g.ticks {
		return
	}
	to := cycles.Read(g.start)
	cycles.Convert(g.offsets, g.from, to)
	if err := cycles.Check(g.from, to); err != nil {
		otel.Handle(fmt.Errorf("otelitl: %w (WithCycleCounter(false) turns it off from the start)", err))
	}
	g.ticks = false
}

// appendLocked appends one arrival; the caller has checked that the cap leaves room for it.
func (g *Generation) appendLocked(off int64, tokens int) {
	if uint(tokens-1) >= maxChunkTokens { // one comparison for both bounds on the hot path
		if tokens < 1 {
			tokens = 1
		} else {
			tokens = maxChunkTokens
		}
	}
	n := len(g.offsets)
	if n > 0 && off < g.offsets[n-1] {
		g.unsorted = true
	}
	if n == cap(g.offsets) {
		g.offsets = grow(g.offsets, g.max)
	}
	if tokens != 1 && g.tokens == nil {
		g.tokens = onesBuf(n, cap(g.offsets))
	}
	g.offsets = append(g.offsets, off)
	if g.tokens != nil {
		if n == cap(g.tokens) {
			g.tokens = grow(g.tokens, g.max)
		}
		g.tokens = append(g.tokens, int64(tokens))
	}
}

// grow returns b with room for at least one more entry and never more than limit entries in all
// (len(b) < limit). It doubles while the doubled buffer stays within half the limit and then goes
// straight to the limit, so that the buffers a timeline outgrows add up to at most the limit: a
// generation allocates at most twice its cap, however close to a power of two the cap is.
func grow(b []int64, limit int) []int64 {
	c := 2 * cap(b)
	switch {
	case c < minBuf:
		c = minBuf
	case c > limit/2:
		c = limit
	}
	c = min(c, limit)
	nb := make([]int64, len(b), c)
	copy(nb, b)
	putBuf(b)
	return nb
}

// onesBuf returns a buffer of n token counts of 1, with room for capacity.
func onesBuf(n, capacity int) []int64 {
	t := getBuf()
	if cap(t) < capacity {
		putBuf(t)
		t = make([]int64, 0, capacity)
	}
	t = t[:n]
	for i := range t {
		t[i] = 1
	}
	return t
}

// SetUsage records the provider-reported token usage. A negative count means unknown and leaves the
// previous value: no negative count is ever recorded.
func (g *Generation) SetUsage(inputTokens, outputTokens int) {
	if g == nil || !g.on {
		return
	}
	g.mu.Lock()
	if !g.ended {
		if inputTokens >= 0 {
			g.usageIn = int64(inputTokens)
		}
		if outputTokens >= 0 {
			g.usageOut = int64(outputTokens)
		}
	}
	g.mu.Unlock()
}

// Bounds on the values a provider sends back, which the span records: a provider (or a proxy, or a
// bug) must not be able to grow a span without end.
const (
	// maxValueLength bounds gen_ai.response.model, gen_ai.response.id and each finish reason, in
	// bytes; a longer value is cut on a rune boundary.
	maxValueLength = itlconv.MaxValueLength
	// maxFinishReasons bounds gen_ai.response.finish_reasons: one per choice, and OpenAI allows at
	// most 128 choices. Further reasons are ignored.
	maxFinishReasons = 128
	// maxAddressLength bounds server.address: a DNS name has at most 253 bytes. A longer address is
	// no host name and is ignored.
	maxAddressLength = 255
)

// SetResponseModel records gen_ai.response.model, the model that actually answered. A value longer
// than 256 bytes is cut.
func (g *Generation) SetResponseModel(model string) {
	if g == nil || !g.on {
		return
	}
	model = truncate(model, maxValueLength)
	g.mu.Lock()
	if !g.ended {
		g.responseModel = model
	}
	g.mu.Unlock()
}

// SetRequestModel records gen_ai.request.model when Start was given none, and names the span
// "{operation} {model}" as Start would have: for a model known only once the request is made (an
// HTTP body read as it is sent, whose model member comes after a long prompt). A model given to
// Start stays; so does the first one given here. A value longer than 256 bytes is cut. Samplers
// saw the span's name without the model, at Start.
func (g *Generation) SetRequestModel(model string) {
	if g == nil || !g.on || model == "" {
		return
	}
	model = truncate(model, maxValueLength)
	g.mu.Lock()
	if !g.ended && g.model == "" {
		g.model = model
		g.modelChanged = true
	}
	g.mu.Unlock()
}

// SetProvider records gen_ai.provider.name in place of the one given to Start, on the span and the
// metrics, for a provider known only once the request is made: a wrapper starts the span before the
// SDK builds the request's URL, and learns from the URL (or an option read off the request) that
// the OpenAI client calls Azure OpenAI, say. Unlike SetRequestModel it replaces a provider given to
// Start, since a wrapper has to name one there; the last non-empty value wins (a retry of the same
// request gives the same one). An empty provider is ignored, and a value longer than 256 bytes is
// cut. Samplers saw Start's provider.
func (g *Generation) SetProvider(provider string) {
	if g == nil || !g.on || provider == "" {
		return
	}
	provider = truncate(provider, maxValueLength)
	g.mu.Lock()
	if !g.ended {
		g.provider = provider
		g.providerChanged = true
	}
	g.mu.Unlock()
}

// SetServer records server.address and server.port when they are only known once the request is
// made (a wrapper reads them off the request URL). An empty address, or one longer than a host name
// can be, and a port outside 1..65535 leave the values from Start.
func (g *Generation) SetServer(address string, port int) {
	if g == nil || !g.on {
		return
	}
	g.mu.Lock()
	if !g.ended {
		if address != "" && len(address) <= maxAddressLength {
			g.address = address
			g.serverChanged = true
		}
		if validPort(port) {
			g.port = port
			g.serverChanged = true
		}
	}
	g.mu.Unlock()
}

// SetResponseID records gen_ai.response.id. A value longer than 256 bytes is cut.
func (g *Generation) SetResponseID(id string) {
	if g == nil || !g.on {
		return
	}
	id = truncate(id, maxValueLength)
	g.mu.Lock()
	if !g.ended {
		g.responseID = id
	}
	g.mu.Unlock()
}

// AddFinishReason records a gen_ai.response.finish_reasons entry, one per choice, in order. The
// reasons are bounded as the provider's other values are: at most 128 (the choices a request may
// ask for), each cut at 256 bytes.
func (g *Generation) AddFinishReason(reason string) {
	if g == nil || !g.on || reason == "" {
		return
	}
	reason = truncate(reason, maxValueLength)
	g.mu.Lock()
	if !g.ended && len(g.finishReasons) < maxFinishReasons {
		g.finishReasons = append(g.finishReasons, reason)
	}
	g.mu.Unlock()
}

// End ends the generation now. A non-nil err marks the span as failed with error.type (see
// [ErrorType]) and an error status whose description is that error.type too, never err.Error():
// an error's message may quote the provider's reply, and so the prompt, and nothing of the prompt
// or the reply may reach a span. The chunks that arrived before the failure still count. Only the
// first End or EndAt has an effect.
func (g *Generation) End(err error) {
	if g == nil || !g.on {
		return
	}
	g.end(int64(time.Since(g.start)), err)
}

// EndAt ends the generation at t, for replays and tests, as End does. An end before the last
// recorded arrival is moved to that arrival, so that the span always contains its timeline. An end
// more than itlconv.MaxDuration (24 h) after the start is an impossible timestamp and is moved to
// the last recorded arrival too (to the start when there is none): the span then claims no time it
// cannot vouch for, instead of lasting a day or ending centuries ahead.
func (g *Generation) EndAt(t time.Time, err error) {
	if g == nil || !g.on {
		return
	}
	g.end(int64(t.Sub(g.start)), err)
}

// ErrorType returns the error.type attribute End records for err: "cancelled" for a context
// cancellation, "timeout" for a deadline, the value of an ErrorType() string method anywhere in the
// chain (wrappers give API errors their HTTP status code this way), and otherwise what
// semconv.ErrorType derives from the error's type (also when an ErrorType method returns ""). The
// value is cut to itlconv.MaxErrorTypeLength (128) bytes on a rune boundary, invalid UTF-8 replaced,
// since it is a metric attribute and the span status's description: any length an error type
// chooses would reach every series.
func ErrorType(err error) attribute.KeyValue {
	switch {
	case errors.Is(err, context.Canceled):
		return semconv.ErrorTypeKey.String(itlconv.ErrorTypeCancelled)
	case errors.Is(err, context.DeadlineExceeded):
		return semconv.ErrorTypeKey.String(itlconv.ErrorTypeTimeout)
	}
	kv := semconv.ErrorType(err)
	if s := kv.Value.AsString(); len(s) > itlconv.MaxErrorTypeLength || !utf8.ValidString(s) {
		kv = semconv.ErrorTypeKey.String(truncate(s, itlconv.MaxErrorTypeLength))
	}
	return kv
}

// truncate returns s cut to at most n bytes on a rune boundary, with invalid UTF-8 replaced.
func truncate(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

func (g *Generation) end(endOff int64, err error) {
	g.mu.Lock()
	if g.ended {
		g.mu.Unlock()
		return
	}
	g.ended = true
	g.toMonotonicLocked()
	g.mu.Unlock()
	// From here on no other goroutine writes the fields: every writer checks ended under mu.

	if g.unsorted {
		sortTimeline(g.offsets, g.tokens)
	}
	g.dropImpossible()
	r := result{tl: timeline.Timeline{Offsets: g.offsets, Tokens: g.tokens}, ttft: -1, failed: err != nil}
	var last int64
	if n := len(g.offsets); n > 0 {
		last = g.offsets[n-1]
		r.ttft = min(g.offsets[0], g.firstDrop)
	}
	if endOff > int64(itlconv.MaxDuration) {
		endOff = last // an impossible end: claim no more than the timeline vouches for
	}
	r.end = max(endOff, last) // an end before the last arrival (or the start) moves to it
	if err != nil {
		r.errType = ErrorType(err)
	}

	if g.recording {
		g.writeSpan(&r)
	} else {
		g.span.End(trace.WithTimestamp(g.start.Add(time.Duration(r.end)))) // a span is ended, recording or not
	}
	if g.in.metrics != nil {
		if g.server {
			g.recordServerMetrics(&r)
		} else {
			g.recordMetrics(&r)
		}
	}
	// The span and the metrics hold copies: the buffers can serve the next generation.
	putBuf(g.offsets)
	putBuf(g.tokens)
	g.offsets, g.tokens = nil, nil
}

// result is what End derives from a generation, for its span and its metrics.
type result struct {
	tl      timeline.Timeline // the recorded arrivals, sorted, within MaxDuration of the start
	ttft    int64             // ns from the start to the first arrival; -1 when none
	end     int64             // ns from the start to the end
	failed  bool
	errType attribute.KeyValue // error.type when failed
}

// dropImpossible removes from the sorted timeline the arrivals more than itlconv.MaxDuration away
// from the start, counting them as dropped, and moves the remaining ones before the start to it.
// ChunkAt never records such arrivals; Chunk does when the Request's StartTime lies more than that
// before now (or after it), and checking there would cost the hot path.
func (g *Generation) dropImpossible() {
	o := g.offsets
	const limit = int64(itlconv.MaxDuration)
	lo, hi := 0, len(o)
	for lo < hi && o[lo] < -limit {
		lo++
	}
	for hi > lo && o[hi-1] > limit {
		hi--
	}
	if lo == 0 && hi == len(o) && (hi == 0 || o[0] >= 0) {
		return // the usual case: nothing to do
	}
	g.dropped += int64(lo + len(o) - hi)
	// Shift in place, so that the buffers keep their start for the pool.
	g.offsets = o[:copy(o, o[lo:hi])]
	if g.tokens != nil {
		g.tokens = g.tokens[:copy(g.tokens, g.tokens[lo:hi])]
	}
	for i, off := range g.offsets {
		if off >= 0 {
			break
		}
		g.offsets[i] = 0
	}
}

// bufPool recycles timeline buffers between generations, so that a steady stream of replies grows
// no new buffers once warm. Buffers above maxPooled entries are left to the GC.
var bufPool = sync.Pool{New: func() any { b := make([]int64, 0, minBuf); return &b }}

// minBuf is the capacity a timeline buffer starts with.
const minBuf = 64

const maxPooled = 1 << 16

func getBuf() []int64 { return (*bufPool.Get().(*[]int64))[:0] }

func putBuf(b []int64) {
	if b == nil || cap(b) > maxPooled {
		return
	}
	b = b[:0]
	bufPool.Put(&b)
}

// sortTimeline sorts arrivals given out of order, keeping each chunk's token count with it.
func sortTimeline(offsets, tokens []int64) {
	if tokens == nil {
		slices.Sort(offsets)
		return
	}
	sort.Stable(byOffset{offsets, tokens})
}

type byOffset struct{ off, tok []int64 }

func (b byOffset) Len() int           { return len(b.off) }
func (b byOffset) Less(i, j int) bool { return b.off[i] < b.off[j] }
func (b byOffset) Swap(i, j int) {
	b.off[i], b.off[j] = b.off[j], b.off[i]
	b.tok[i], b.tok[j] = b.tok[j], b.tok[i]
}

func (g *Generation) writeSpan(r *result) {
	tl := r.tl
	n := tl.Len()
	attrs := make([]attribute.KeyValue, 0, 18)
	// The count is of the chunks received, dropped ones included: a reader that finds fewer
	// arrivals knows the timeline is incomplete.
	attrs = append(attrs, itlconv.ChunkCountKey.Int64(int64(n)+g.dropped))
	if g.dropped > 0 {
		attrs = append(attrs, itlconv.ChunkDroppedKey.Int64(g.dropped))
	}
	if r.ttft >= 0 {
		attrs = append(attrs, semconv.GenAIResponseTimeToFirstChunk(timeline.Seconds(r.ttft)))
	}
	if g.responseModel != "" {
		attrs = append(attrs, semconv.GenAIResponseModel(g.responseModel))
	}
	if g.responseID != "" {
		attrs = append(attrs, semconv.GenAIResponseID(g.responseID))
	}
	if len(g.finishReasons) > 0 {
		attrs = append(attrs, semconv.GenAIResponseFinishReasons(g.finishReasons...))
	}
	if g.modelChanged {
		attrs = append(attrs, semconv.GenAIRequestModel(g.model))
		g.span.SetName(g.operation + " " + g.model)
	}
	if g.providerChanged {
		attrs = append(attrs, semconv.GenAIProviderNameKey.String(g.provider))
	}
	if g.serverChanged {
		if g.address != "" {
			attrs = append(attrs, semconv.ServerAddress(g.address))
		}
		if g.port > 0 {
			attrs = append(attrs, semconv.ServerPort(g.port))
		}
	}
	if g.usageIn >= 0 {
		attrs = append(attrs, semconv.GenAIUsageInputTokensKey.Int64(g.usageIn))
	}
	if g.usageOut >= 0 {
		attrs = append(attrs, semconv.GenAIUsageOutputTokensKey.Int64(g.usageOut))
	}

	compact := g.in.encoding == EncodingCompact || (g.in.encoding == EncodingAuto && n > g.in.eventLimit)
	written := tl // the timeline as a reader of the span will read it
	var us []int64
	if compact && n > 0 {
		us = make([]int64, n)
		written.Offsets = getBuf()
		for i, off := range tl.Offsets {
			us[i] = itlconv.Micros(off)
			written.Offsets = append(written.Offsets, itlconv.Nanos(us[i]))
		}
		attrs = append(attrs, itlconv.ChunkOffsetsKey.Int64Slice(us))
		if tl.Tokens != nil {
			attrs = append(attrs, itlconv.ChunkTokensKey.Int64Slice(tl.Tokens))
		}
	}
	if n > 0 {
		attrs = g.appendFigures(attrs, written)
	}
	if us != nil {
		putBuf(written.Offsets)
	}
	if r.failed {
		attrs = append(attrs, r.errType)
		// The description is the error.type, bounded and named by type or status code: an error's
		// message may quote the provider's reply or the prompt, and none of it may reach a span.
		g.span.SetStatus(codes.Error, r.errType.Value.AsString())
	}
	g.span.SetAttributes(attrs...)

	if !compact {
		var opts [2]trace.EventOption
		for i, off := range tl.Offsets {
			opts[0] = trace.WithTimestamp(g.start.Add(time.Duration(off)))
			if c := tl.TokensAt(i); c != 1 {
				opts[1] = trace.WithAttributes(itlconv.ChunkTokensKey.Int64(c))
				g.span.AddEvent(itlconv.ChunkEventName, opts[:2]...)
			} else {
				g.span.AddEvent(itlconv.ChunkEventName, opts[:1]...)
			}
		}
	}
	g.span.End(trace.WithTimestamp(g.start.Add(time.Duration(r.end))))
}

// appendFigures appends the figures a collector's itl processor writes on a span (itlconv.SPEC.md
// §3: the time per output token, the gap percentiles and largest gap, the stalls) to attrs,
// computed as the processor computes them, at the default stall threshold, from tl, the timeline
// as the span carries it (in the compact encoding, its offsets truncated to microseconds). The
// processor then leaves them as they are instead of reading the timeline again (its
// keep_client_figures): the figures cost a collector almost nothing, and a backend without the
// collector shows them too. The time to first chunk and the chunk count are written beside them.
func (g *Generation) appendFigures(attrs []attribute.KeyValue, tl timeline.Timeline) []attribute.KeyValue {
	in := timeline.Input{
		Complete:          g.dropped == 0,
		UsageOutputTokens: g.usageOut,
		HasUsage:          g.usageOut >= 0,
		StallThreshold:    itlconv.DefaultStallThreshold,
		Percentiles:       true,
	}
	scratch := getBuf()
	var f timeline.Figures
	scratch = timeline.ComputeInto(&f, tl, &in, scratch)
	putBuf(scratch)
	if f.HasTPOT {
		attrs = append(attrs, itlconv.TPOTKey.Float64(f.TPOT))
	}
	if f.HasGaps {
		attrs = append(attrs, itlconv.GapP50Key.Float64(f.P50), itlconv.GapP90Key.Float64(f.P90),
			itlconv.GapP99Key.Float64(f.P99), itlconv.GapMaxKey.Float64(f.MaxGap))
	}
	return append(attrs, itlconv.StallsKey.Int(f.Stalls))
}

// metricAttrs returns the attributes every metric of the generation carries, the operation and the
// provider among them, and their set. A provider the application did not name is left out, as on
// the span, not recorded as "".
func (g *Generation) metricAttrs() ([]attribute.KeyValue, attribute.Set) {
	attrs := make([]attribute.KeyValue, 0, 6)
	if g.model != "" {
		attrs = append(attrs, semconv.GenAIRequestModel(g.model))
	}
	if g.responseModel != "" {
		attrs = append(attrs, semconv.GenAIResponseModel(g.responseModel))
	}
	if g.address != "" {
		attrs = append(attrs, semconv.ServerAddress(g.address))
	}
	if g.port > 0 {
		attrs = append(attrs, semconv.ServerPort(g.port))
	}
	attrs = append(attrs, semconv.GenAIOperationNameKey.String(g.operation))
	if g.provider != "" {
		attrs = append(attrs, semconv.GenAIProviderNameKey.String(g.provider))
	}
	return attrs, attribute.NewSet(attrs...)
}

// with returns the set of attrs and more.
func with(attrs []attribute.KeyValue, more ...attribute.KeyValue) attribute.Set {
	return attribute.NewSet(append(attrs[:len(attrs):len(attrs)], more...)...)
}

// recordMetrics records the client metrics of a CLIENT generation.
func (g *Generation) recordMetrics(r *result) {
	m := g.in.metrics
	ctx := g.ctx
	tl := r.tl
	attrs, set := g.metricAttrs()

	if r.ttft >= 0 {
		m.ttft.RecordSet(ctx, timeline.Seconds(r.ttft), set)
	}
	// One observation per gap between recorded arrivals: a dropped chunk has no arrival, so it
	// adds no gap.
	if gaps := tl.GapCount(); gaps > 0 && m.perChunk.Enabled(ctx) {
		opt := metric.WithAttributeSet(set)
		for i := range gaps {
			m.perChunk.Inst().Record(ctx, tl.Gap(i), opt)
		}
	}
	if r.failed {
		m.duration.RecordSet(ctx, timeline.Seconds(r.end), with(attrs, r.errType))
	} else {
		m.duration.RecordSet(ctx, timeline.Seconds(r.end), set)
	}
	if g.usageIn >= 0 {
		m.tokens.RecordSet(ctx, g.usageIn, with(attrs, semconv.GenAITokenTypeInput))
	}
	// The output tokens are the provider's usage; without it, the chunks' sum, but only when every
	// chunk received was recorded: with some dropped the sum would claim a count nobody knows.
	out := g.usageOut
	if out < 0 && tl.Len() > 0 && g.dropped == 0 {
		out = tl.TokenSum()
	}
	if out >= 0 {
		m.tokens.RecordSet(ctx, out, with(attrs, semconv.GenAITokenTypeOutput))
	}
}

// recordServerMetrics records the server metrics of a SERVER generation, whose timeline is when the
// server wrote each chunk. Semantic conventions v1.41 define no server token usage metric, so none
// is recorded.
func (g *Generation) recordServerMetrics(r *result) {
	m := g.in.metrics
	ctx := g.ctx
	tl := r.tl
	attrs, set := g.metricAttrs()

	if r.ttft >= 0 {
		m.serverTTFT.RecordSet(ctx, timeline.Seconds(r.ttft), set)
	}
	// One observation per gap, over the tokens of the chunk that ends it (itlconv's
	// ServerTimePerOutputToken): a speculative-decoding step of k tokens is k tokens' time.
	if gaps := tl.GapCount(); gaps > 0 && m.serverTPOT.Enabled(ctx) {
		opt := metric.WithAttributeSet(set)
		for i := range gaps {
			m.serverTPOT.Inst().Record(ctx, tl.Gap(i)/float64(tl.TokensAt(i+1)), opt)
		}
	}
	if r.failed {
		m.serverDuration.RecordSet(ctx, timeline.Seconds(r.end), with(attrs, r.errType))
	} else {
		m.serverDuration.RecordSet(ctx, timeline.Seconds(r.end), set)
	}
}
