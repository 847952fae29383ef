package httpitl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/internal/wrap"
)

// Transport is an http.RoundTripper that records a generation span for every LLM API request it
// recognises, with the arrival of every chunk of a streamed reply. Other requests pass through
// untouched.
type Transport struct {
	base http.RoundTripper
	cfg  config
}

var _ http.RoundTripper = (*Transport)(nil)

// NewTransport wraps base (http.DefaultTransport when nil).
func NewTransport(base http.RoundTripper, opts ...Option) *Transport {
	if base == nil {
		base = http.DefaultTransport
	}
	return &Transport{base: base, cfg: newConfig(opts)}
}

// CloseIdleConnections closes the idle connections of the base transport, when it has any.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// RoundTrip sends req through the base transport. For a generation request it starts a CLIENT
// generation span, child of the span in req's context, puts the span's context in the headers of
// the request it sends (see [WithPropagators]), and ends the span when the response body ends, is
// closed, or the request's context is done.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	c, ok := detect(req)
	if !ok || (t.cfg.filter != nil && !t.cfg.filter(req)) {
		return t.base.RoundTrip(req)
	}
	start := time.Now()
	// A Bedrock body is read too, though its URL says all it would (the model, a stream): not
	// reading it let aws-sdk-go-v2's own race on its request body, which closes the connection
	// under the event-stream reader, happen more often.
	req, fields, late := peekRequest(req, t.cfg.maxRequestBytes)
	applyFields(&c, fields)
	addr, port := wrap.Server(req.URL)
	ctx, g := t.cfg.in.Start(req.Context(), otelitl.Request{
		Operation: c.operation, Provider: c.provider, Model: c.model,
		ServerAddress: addr, ServerPort: port, StartTime: start,
		NonStreaming: !c.stream,
	})
	late.start(g, trace.SpanFromContext(ctx), c)
	// The server's spans are the generation's children: its context goes in the headers, of a
	// copy, since a RoundTripper must not change the caller's request. A span that does not
	// record still carries the sampling decision.
	out := req.Clone(ctx)
	t.cfg.propagators.Inject(ctx, propagation.HeaderCarrier(out.Header))
	if !g.IsRecording() {
		return t.base.RoundTrip(out)
	}
	res, err := t.base.RoundTrip(out)
	if err != nil {
		// No response: the span names why (connection_refused, dns_error, ...), the caller gets
		// the base transport's error as it is.
		g.End(ctxErr(req.Context(), wrap.Unreachable(err)))
		return res, err
	}
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(semconv.HTTPResponseStatusCode(res.StatusCode))
	if res.StatusCode >= 400 {
		g.End(statusError(res.StatusCode))
		return res, nil
	}
	if res.StatusCode >= 300 || res.Body == nil || res.Body == http.NoBody {
		g.End(nil)
		return res, nil
	}
	fr := framingOf(res.Header.Get("Content-Type"), c)
	// A request that asked for a stream keeps gen_ai.request.stream=true when the answer comes
	// whole: the attribute says what the request asked.
	streaming := fr != framingJSON || (c.proto == protoGemini && c.stream)
	o := newObserver(c, g, fr, streaming, t.cfg.maxEventBytes)
	if ce := res.Header.Get("Content-Encoding"); ce != "" && ce != "identity" {
		// A body the caller asked compressed cannot be read as it passes: its span gets the
		// duration and no timeline. (Go's transport decompresses the encodings it asked for itself
		// before this point; otelitl-proxy asks upstreams for identity.)
		o.opaque = true
	}
	b := &body{rc: res.Body, g: g, ctx: req.Context(), o: o}
	b.mu.Lock() // cancelled may run at once, and needs stop
	b.stop = context.AfterFunc(req.Context(), b.cancelled)
	b.mu.Unlock()
	res.Body = b
	return res, nil
}

// applyFields completes c with what the request body says. Gemini's and Bedrock's URLs say
// whether the reply streams. An Azure deployment (an Azure OpenAI path's, a serverless inference
// endpoint's host's) names the model when the body does not.
func applyFields(c *call, f requestFields) {
	if c.model == "" {
		c.model = f.model
	}
	if c.model == "" {
		c.model = c.deployment
	}
	if bodySaysStream(*c) && f.hasStream {
		c.stream = f.stream
	}
}

// bodySaysStream reports whether the request body's "stream" member says whether c streams:
// not for Gemini and Bedrock, whose URLs say it.
func bodySaysStream(c call) bool {
	return c.proto != protoGemini && c.proto != protoBedrock && c.proto != protoBedrockInvoke
}

// statusError ends a generation answered with an HTTP error status; its error.type is the code.
func statusError(code int) error {
	return wrap.Status(fmt.Errorf("httpitl: HTTP %d %s", code, http.StatusText(code)), code)
}

// ctxErr prefers the context's error (cancelled, timeout) to the error it caused. A context whose
// deadline has passed is taken as timed out even before it says so: http.Client's Timeout cancels
// a RoundTripper it does not know (this one) through Request.Cancel, on a timer of its own for the
// same instant as the context's deadline, and the failure it causes may come first.
func ctxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return err
}

// body observes a response body as the caller reads it: every byte is returned unchanged, as the
// base transport returned it, and each event is read as soon as the Read that completes it
// returns.
type body struct {
	rc   io.ReadCloser
	g    *otelitl.Generation
	ctx  context.Context
	stop func() bool

	mu      sync.Mutex
	o       *observer
	done    bool
	closing bool // Close was called: a read it makes fail is the caller giving up
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.mu.Lock()
	if !b.done {
		if n > 0 {
			b.o.feed(p[:n])
		}
		switch {
		case err == io.EOF:
			b.o.fr.eof()
			b.endLocked(b.o.failure())
		case err != nil:
			b.endLocked(b.readErr(err))
		}
	}
	b.mu.Unlock()
	return n, err
}

// readErr names a failed read: an error event seen before it, the reply's end marker (what fails
// after it is no failure of the reply), or an event stream whose framing broke before it; the
// context's end; else a body cut off (io.ErrUnexpectedEOF, a connection or HTTP/2 stream reset,
// ...): incomplete_stream.
func (b *body) readErr(err error) error {
	if b.o.decided() {
		return b.o.failure()
	}
	if cerr := ctxErr(b.ctx, nil); cerr != nil {
		return cerr
	}
	if b.closing {
		return wrap.ErrClosedEarly // the caller closed the body while another goroutine read it
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err // named cancelled or timeout
	}
	return &wrap.TypedError{Err: err, Type: incompleteError{}.ErrorType()}
}

func (b *body) Close() error {
	b.mu.Lock()
	b.closing = true
	b.mu.Unlock()
	err := b.rc.Close()
	b.mu.Lock()
	if !b.done {
		switch {
		case b.o.decided():
			b.endLocked(b.o.failure())
		case b.ctx.Err() != nil:
			b.endLocked(b.ctx.Err())
		default:
			b.endLocked(wrap.ErrClosedEarly)
		}
	}
	b.mu.Unlock()
	return err
}

// cancelled runs when the request's context ends: a reply not yet complete ends with the
// context's error, even if the caller never reads or closes the body again.
func (b *body) cancelled() {
	b.mu.Lock()
	if !b.done {
		if b.o.decided() {
			b.endLocked(b.o.failure())
		} else {
			b.endLocked(b.ctx.Err())
		}
	}
	b.mu.Unlock()
}

func (b *body) endLocked(err error) {
	b.done = true
	b.stop()
	b.g.End(err)
}
