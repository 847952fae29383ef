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
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/itlconv/timeline"
	"github.com/otelitl/itl/otelitl/internal/cycles"
)

// Generation records one streamed generation. Its methods are safe for concurrent use: a
// cancellation may call End while another goroutine is in Chunk. After End, further calls are
// ignored, and a second End is harmless. All methods may be called on a nil *Generation.
type Generation struct {
	off bool // inert: nothing is recorded

	in        *Instrumentation
	ctx       context.Context
	span      trace.Span
	recording bool
	start     time.Time

	operation, provider, model, address string
	port                                int

	mu       sync.Mutex
	ended    bool
	unsorted bool
	offsets  []int64 // nanoseconds from start, one per chunk; counter values while ticks
	ticks    bool    // Chunk reads the cycle counter; End converts offsets using from and a new pair
	from     cycles.Pair
	tokens   []int64 // per chunk; nil while every chunk carried 1 token

	serverChanged     bool
	usageIn, usageOut int64 // -1: unknown
	responseModel     string
	responseID        string
	finishReasons     []string
}

// IsRecording reports whether this generation records anything: a span or metrics.
func (g *Generation) IsRecording() bool { return g != nil && !g.off }

// Chunk records that a chunk carrying tokens tokens arrived now. A chunk carries at least one token:
// smaller counts are recorded as 1. This is the hot path: it reads a clock and appends, about 13 ns
// with the cycle counter (see [WithCycleCounter]) and 34 ns with time.Since on the project's machine.
func (g *Generation) Chunk(tokens int) {
	if g == nil || g.off {
		return
	}
	g.mu.Lock()
	if !g.ended {
		// The clock is read under the lock so that ChunkAt and End, which convert counter values,
		// never see one read before their conversion and appended after it.
		var off int64
		if g.ticks {
			off = cycles.Now()
		} else {
			off = int64(time.Since(g.start))
		}
		g.appendLocked(off, tokens)
	}
	g.mu.Unlock()
}

// ChunkAt records that a chunk carrying tokens tokens arrived at t, for replays and tests. Arrivals
// may be given out of order; they are sorted at End. An arrival before the start is recorded at the
// start.
func (g *Generation) ChunkAt(t time.Time, tokens int) {
	if g == nil || g.off {
		return
	}
	off := max(int64(t.Sub(g.start)), 0)
	g.mu.Lock()
	if !g.ended {
		g.toMonotonicLocked()
		g.appendLocked(off, tokens)
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

func (g *Generation) appendLocked(off int64, tokens int) {
	if tokens < 1 {
		tokens = 1
	}
	n := len(g.offsets)
	if n > 0 && off < g.offsets[n-1] {
		g.unsorted = true
	}
	if tokens != 1 && g.tokens == nil {
		g.tokens = getBuf()[:n]
		for i := range g.tokens {
			g.tokens[i] = 1
		}
	}
	g.offsets = append(g.offsets, off)
	if g.tokens != nil {
		g.tokens = append(g.tokens, int64(tokens))
	}
}

// SetUsage records the provider-reported token usage. A negative count means unknown and leaves the
// previous value.
func (g *Generation) SetUsage(inputTokens, outputTokens int) {
	if g == nil || g.off {
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

// SetResponseModel records gen_ai.response.model, the model that actually answered.
func (g *Generation) SetResponseModel(model string) {
	if g == nil || g.off {
		return
	}
	g.mu.Lock()
	if !g.ended {
		g.responseModel = model
	}
	g.mu.Unlock()
}

// SetServer records server.address and server.port when they are only known once the request is
// made (a wrapper reads them off the request URL). Empty and 0 leave the values from Start.
func (g *Generation) SetServer(address string, port int) {
	if g == nil || g.off {
		return
	}
	g.mu.Lock()
	if !g.ended {
		if address != "" {
			g.address = address
			g.serverChanged = true
		}
		if port > 0 {
			g.port = port
			g.serverChanged = true
		}
	}
	g.mu.Unlock()
}

// SetResponseID records gen_ai.response.id.
func (g *Generation) SetResponseID(id string) {
	if g == nil || g.off {
		return
	}
	g.mu.Lock()
	if !g.ended {
		g.responseID = id
	}
	g.mu.Unlock()
}

// AddFinishReason records a gen_ai.response.finish_reasons entry, one per choice, in order.
func (g *Generation) AddFinishReason(reason string) {
	if g == nil || g.off || reason == "" {
		return
	}
	g.mu.Lock()
	if !g.ended {
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
	if g == nil || g.off {
		return
	}
	g.end(int64(time.Since(g.start)), err)
}

// EndAt ends the generation at t, for replays and tests. An end before the last arrival is moved to
// the last arrival, so that the span always contains its timeline.
func (g *Generation) EndAt(t time.Time, err error) {
	if g == nil || g.off {
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
	tl := timeline.Timeline{Offsets: g.offsets, Tokens: g.tokens}
	if n := len(g.offsets); n > 0 {
		endOff = max(endOff, g.offsets[n-1])
	}
	endOff = max(endOff, 0)

	var errType attribute.KeyValue
	if err != nil {
		errType = ErrorType(err)
	}
	if g.recording {
		g.writeSpan(tl, endOff, err, errType)
	} else {
		g.span.End(trace.WithTimestamp(g.start.Add(time.Duration(endOff)))) // a span is ended, recording or not
	}
	if g.in.metrics != nil {
		g.recordMetrics(tl, endOff, err, errType)
	}
	// The span and the metrics hold copies: the buffers can serve the next generation.
	putBuf(g.offsets)
	putBuf(g.tokens)
	g.offsets, g.tokens = nil, nil
}

// bufPool recycles timeline buffers between generations, so that a steady stream of replies grows
// no new buffers once warm. Buffers above maxPooled entries are left to the GC.
var bufPool = sync.Pool{New: func() any { b := make([]int64, 0, 64); return &b }}

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

func (g *Generation) writeSpan(tl timeline.Timeline, endOff int64, err error, errType attribute.KeyValue) {
	n := tl.Len()
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs, itlconv.ChunkCountKey.Int(n))
	if ttft, ok := tl.TTFT(); ok {
		attrs = append(attrs, semconv.GenAIResponseTimeToFirstChunk(ttft))
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
	if compact && n > 0 {
		us := make([]int64, n)
		for i, off := range tl.Offsets {
			us[i] = itlconv.Micros(off)
		}
		attrs = append(attrs, itlconv.ChunkOffsetsKey.Int64Slice(us))
		if tl.Tokens != nil {
			attrs = append(attrs, itlconv.ChunkTokensKey.Int64Slice(tl.Tokens))
		}
	}
	if err != nil {
		attrs = append(attrs, errType)
		// The description is the error.type, bounded and named by type or status code: an error's
		// message may quote the provider's reply or the prompt, and none of it may reach a span.
		g.span.SetStatus(codes.Error, errType.Value.AsString())
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
	g.span.End(trace.WithTimestamp(g.start.Add(time.Duration(endOff))))
}

func (g *Generation) recordMetrics(tl timeline.Timeline, endOff int64, err error, errType attribute.KeyValue) {
	m := g.in.metrics
	ctx := g.ctx
	op := genaiconv.OperationNameAttr(g.operation)
	prov := genaiconv.ProviderNameAttr(g.provider)

	attrs := make([]attribute.KeyValue, 0, 5)
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
	base := append(attrs, semconv.GenAIOperationNameKey.String(g.operation), semconv.GenAIProviderNameKey.String(g.provider))
	set := attribute.NewSet(base...)

	if ttft, ok := tl.TTFT(); ok {
		m.ttft.RecordSet(ctx, ttft, set)
	}
	if gaps := tl.GapCount(); gaps > 0 && m.perChunk.Enabled(ctx) {
		opt := metric.WithAttributeSet(set)
		for i := range gaps {
			m.perChunk.Inst().Record(ctx, tl.Gap(i), opt)
		}
	}
	if err != nil {
		m.duration.Record(ctx, timeline.Seconds(endOff), op, prov, append(attrs[:len(attrs):len(attrs)], errType)...)
	} else {
		m.duration.RecordSet(ctx, timeline.Seconds(endOff), set)
	}
	if g.usageIn >= 0 {
		m.tokens.Record(ctx, g.usageIn, op, prov, genaiconv.TokenTypeInput, attrs...)
	}
	out := g.usageOut
	if out < 0 && tl.Len() > 0 {
		out = tl.TokenSum()
	}
	if out >= 0 {
		m.tokens.Record(ctx, out, op, prov, genaiconv.TokenTypeOutput, attrs...)
	}
}
