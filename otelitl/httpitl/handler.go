package httpitl

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/internal/wrap"
)

// Handler is an http.Handler middleware for servers and gateways that answer LLM API requests: it
// records a SERVER generation span per request it recognises, whose timeline is when each chunk
// the wrapped handler wrote left for the client. A chunk is timed at the Flush that sends it out
// (http.Flusher or http.ResponseController), or at the end of the handler when it was never
// flushed. Other requests pass through untouched.
type Handler struct {
	next http.Handler
	cfg  config
}

// NewHandler wraps h.
func NewHandler(h http.Handler, opts ...Option) *Handler {
	return &Handler{next: h, cfg: newConfig(opts)}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, ok := detect(r)
	if !ok || (h.cfg.filter != nil && !h.cfg.filter(r)) {
		h.next.ServeHTTP(w, r)
		return
	}
	start := time.Now()
	r, fields, late := peekRequest(r, h.cfg.maxRequestBytes)
	applyFields(&c, fields)
	ctx := r.Context()
	if !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = h.cfg.propagators.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	addr, port := hostPort(r)
	ctx, g := h.cfg.in.Start(ctx, otelitl.Request{
		Operation: c.operation, Provider: c.provider, Model: c.model,
		ServerAddress: addr, ServerPort: port, StartTime: start,
		NonStreaming: !c.stream, Kind: trace.SpanKindServer,
	})
	late.start(g, trace.SpanFromContext(ctx), c)
	if !g.IsRecording() {
		h.next.ServeHTTP(w, r.WithContext(ctx))
		return
	}
	rw := &responseWriter{ResponseWriter: w, c: c, g: g, span: trace.SpanFromContext(ctx), max: h.cfg.maxEventBytes}
	done := false
	defer func() {
		if !done {
			v := recover()
			rw.finish(r.Context(), errPanic)
			panic(v)
		}
	}()
	h.next.ServeHTTP(rw, r.WithContext(ctx))
	done = true
	rw.finish(r.Context(), nil)
}

// errPanic ends the generation of a handler that panicked (http.ErrAbortHandler included); the
// panic goes on to the server.
var errPanic error = &wrap.TypedError{Err: errors.New("httpitl: the handler panicked"), Type: itlconv.ErrorTypePanic}

// hostPort returns server.address and server.port as the client addressed the server.
func hostPort(r *http.Request) (string, int) {
	host, p, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
		if r.TLS != nil {
			return host, 443
		}
		return host, 80
	}
	port, _ := strconv.Atoi(p)
	return host, port
}

// responseWriter reads what the handler writes. It implements http.Flusher and Unwrap, so that
// http.ResponseController reaches the underlying writer's other features.
type responseWriter struct {
	http.ResponseWriter
	c    call
	g    *otelitl.Generation
	span trace.Span
	max  int

	mu      sync.Mutex
	status  int
	o       *observer
	pending int // chunks written but not flushed yet
	ended   bool
}

func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *responseWriter) WriteHeader(code int) {
	w.mu.Lock()
	w.headerLocked(code)
	w.mu.Unlock()
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) headerLocked(code int) {
	if w.status != 0 || code < 200 {
		return // informational answers and repeated calls do not set the status
	}
	w.status = code
	fr := framingOf(w.Header().Get("Content-Type"), w.c)
	streaming := fr != framingJSON || (w.c.proto == protoGemini && w.c.stream)
	w.o = newObserver(w.c, w.g, fr, streaming, w.max)
	w.o.onChunk = func() { w.pending++ }
}

func (w *responseWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.status == 0 {
		w.headerLocked(http.StatusOK)
	}
	w.mu.Unlock()
	n, err := w.ResponseWriter.Write(p)
	w.mu.Lock()
	if !w.ended && n > 0 && w.status < 300 {
		w.o.feed(p[:n])
	}
	w.mu.Unlock()
	return n, err
}

// Flush sends what was written and times the chunks it carried.
func (w *responseWriter) Flush() { _ = w.FlushError() }

// FlushError is Flush for http.ResponseController, which prefers it.
func (w *responseWriter) FlushError() error {
	err := http.NewResponseController(w.ResponseWriter).Flush()
	if err == nil {
		w.recordPending()
	}
	return err
}

func (w *responseWriter) recordPending() {
	w.mu.Lock()
	if !w.ended {
		for ; w.pending > 0; w.pending-- {
			w.g.Chunk(1)
		}
	}
	w.mu.Unlock()
}

// finish ends the generation when the handler returns: chunks never flushed arrive now, when the
// server sends the rest of the response.
func (w *responseWriter) finish(ctx context.Context, panicErr error) {
	w.recordPending()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ended = true
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	w.span.SetAttributes(semconv.HTTPResponseStatusCode(status))
	var err error
	switch {
	case panicErr != nil:
		err = panicErr
	case status >= 400:
		err = statusError(status)
	case w.o == nil:
		err = errIncomplete // the handler wrote nothing
	case w.o.errType != "" || w.o.broken:
		err = w.o.failure()
	case !w.o.ended && ctx.Err() != nil:
		err = ctx.Err() // the client went away
	default:
		w.o.fr.eof()
		err = w.o.failure()
	}
	w.g.End(err)
}
