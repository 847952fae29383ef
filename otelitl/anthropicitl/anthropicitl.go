// Package anthropicitl records the rhythm of streamed replies from
// github.com/anthropics/anthropic-sdk-go/v2 with otelitl: one generation span per Messages
// streaming call, a chunk per content_block_delta that carries text, thinking or tool input.
//
// The wrapper returns the SDK's own *ssestream.Stream type, so the code that reads the stream does
// not change:
//
//	stream := anthropicitl.NewStreaming(ctx, in, &client.Messages, params)
//	for stream.Next() { ... }
//	if err := stream.Err(); err != nil { ... }
//	stream.Close()
//
// # The SDK's own span
//
// The Anthropic SDK emits a CLIENT span of its own, "anthropic.messages.create", with
// gen_ai.response.time_to_first_chunk but no chunk timeline. Two GenAI spans for one call would
// count its duration and tokens twice in the itl_metrics connector and show two timelines' worth of
// figures, so for the calls this wrapper makes it turns the SDK's span off
// (option.WithOpenTelemetryTraces(false)) and otelitl's generation span takes its place: the same
// gen_ai.* attributes (provider, models, id, usage, finish reasons, server) plus the timeline. The
// SDK's other calls keep their spans. Because the SDK then sends no trace context for the call, the
// wrapper injects the generation's context into the request headers with the global propagator, as
// the SDK would have.
//
// # Provider
//
// The span starts, named, before the SDK builds the request's URL, with gen_ai.provider.name
// "anthropic" ([Provider]). When the SDK sends the request, the wrapper reads the URL (in a
// middleware it adds after the client's and the call's own, so that it sees the URL the bedrock or
// vertex package rewrote) and tells the provider by httpitl's rules, the very code httpitl's
// transport runs: anthropic-sdk-go's bedrock package sends a Messages call to Amazon Bedrock's
// InvokeModelWithResponseStream, .../model/{model id}/invoke-with-response-stream, which is
// "aws.bedrock"; its vertex package to Vertex AI's .../publishers/anthropic/models/
// {model}:streamRawPredict, which is "gcp.vertex_ai". The provider is set on the generation before
// the reply's first byte, so that the span and every metric carry it; samplers saw "anthropic" at
// the start. The request model is the params' model, which both packages move into the URL, so it
// is the model httpitl's transport records (a cross-region profile's id, an inference profile's
// ARN, claude-sonnet-4-5@20250929); only a middleware ahead of the bedrock or vertex option that
// changed the body's model would make the two differ, and the wrapper keeps the params'. A call
// that fails before the SDK sends it stays "anthropic".
//
// The URL rather than an option because an application configures its endpoint once, on the client,
// which the wrapper does not see, and because one set of rules keeps the wrapper and httpitl's
// transport, used on another client of the same application, recording a call alike. An endpoint no
// URL tells (a gateway of one's own in front of Bedrock or Vertex AI, an Anthropic-compatible
// server of another provider) is recorded as "anthropic": [WithProvider] names it, given to the
// client or to one call, and wins over the URL. The package links httpitl for its rules; it
// installs no transport.
//
// # Chunks
//
// Chunks are read off the response body as the SDK's decoder pulls it, so their times are the
// arrivals the application sees. The wrapper observes the body in a second middleware, ahead of the
// client's options, which sees the response last, as the decoder gets it: Bedrock streams the AWS
// event stream, which the bedrock package turns into Anthropic's SSE events in its own middleware,
// so that a body observed below it would be the event stream's frames. An exception in Bedrock's
// stream reaches the application, and the span, as an error event named by the exception's type
// ("throttlingException"), as httpitl names it; a chunk the bedrock package cannot decode ends the
// stream with "incomplete_stream".
//
// Events are read by the SSE rules, as the SDK (and httpitl) read them: an event counts when the
// blank line after it arrives, its data lines joined, and one the body ends before that never
// reached the application (a message_stop cut so leaves the stream "incomplete_stream"). ping
// events, message_start, signature and citation deltas do not count. The generation ends when the
// stream's body ends or fails, when the stream is closed, or when the call's context ends while the
// application no longer reads: a stream closed (or a context cancelled) before message_stop is
// recorded with error.type "cancelled" ("timeout" for a deadline), and one whose body ended cleanly
// before message_stop with "incomplete_stream".
//
// API errors carry their HTTP status code as error.type, and error events their error type (such as
// "overloaded_error"), after message_stop too: the SDK reads on past message_stop and hands the
// application the error, as httpitl names it. Of several error events the first names the span,
// as in httpitl. A request that got no response (the SDK's *url.Error, after its retries) is
// named as httpitl's transport names it: "connection_refused", "dns_error", "timeout", "tls_error",
// else "connection_error". The span's status description is that error.type, never an error message,
// which may quote the provider's reply. The application sees exactly the stream, events and errors
// the SDK gives; only the span records more.
package anthropicitl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
	_ "github.com/otelitl/itl/otelitl/httpitl" // sets endpoint.Provider: the provider by httpitl's rules
	"github.com/otelitl/itl/otelitl/internal/endpoint"
	"github.com/otelitl/itl/otelitl/internal/wrap"
)

// Provider is the gen_ai.provider.name the wrapper records unless the request tells another (see
// the package's Provider section): the span starts with it, named, before the SDK builds the
// request's URL.
const Provider = "anthropic"

// NewStreaming calls svc.NewStreaming (client.Messages) inside a generation span and returns its
// stream, recording each content delta as it is read.
func NewStreaming(ctx context.Context, in *otelitl.Instrumentation, svc *anthropic.MessageService, params anthropic.MessageNewParams, opts ...option.RequestOption) *ssestream.Stream[anthropic.MessageStreamEventUnion] {
	ctx, g := in.Start(ctx, otelitl.Request{Operation: "chat", Provider: Provider, Model: string(params.Model)})
	if !g.IsRecording() {
		return svc.NewStreaming(ctx, params, opts...)
	}
	obs := &observer{s: wrap.Stream{G: g}}
	// Two middlewares, as the SDK runs them in the order given, the first outermost. The first,
	// ahead of the client's own options (a copy of the service with it first), sees the response
	// body the SDK's decoder reads: the bedrock package turns Bedrock's AWS event stream into SSE
	// in its middleware, so a body observed below it would be the event stream's frames. The
	// second, after the call's options, sees the request as sent: the URL the bedrock or vertex
	// package rewrote, which names the provider and the model.
	s := *svc
	s.Options = append([]option.RequestOption{option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))
		res, err := next(req)
		// Only a successful attempt streams; a failed one may be retried, and its error
		// reaches the stream, where it ends the generation below.
		if err == nil && res != nil && res.StatusCode < 300 && res.Body != nil {
			res.Body = &body{ReadCloser: res.Body, obs: obs}
		}
		return res, err
	})}, svc.Options...)
	opts = append(opts[:len(opts):len(opts)],
		option.WithOpenTelemetryTraces(false),
		option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			g.SetServer(wrap.Server(req.URL))
			endpoint.Observe(g, req, Provider)
			return next(req)
		}),
	)
	stream := s.NewStreaming(ctx, params, opts...)
	if err := stream.Err(); err != nil {
		g.End(wrap.NoResponse(streamErr(err)))
		return stream
	}
	obs.s.Watch(ctx)
	return stream
}

// WithProvider names the provider (gen_ai.provider.name) the wrapper records for the calls made
// with it, in place of the one it tells from the request's URL: for Claude behind an endpoint no
// rule tells (a gateway of one's own, Amazon Bedrock or Vertex AI behind a proxy whose path is its
// own, an Anthropic-compatible server of another provider). Give it to the client
// (anthropic.NewClient), for every call, or to one call. An empty provider is ignored. It is a
// middleware that marks the request for the wrapper: an unwrapped call is sent, and recorded by
// httpitl's transport, unchanged.
func WithProvider(provider string) option.RequestOption {
	return option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		return next(endpoint.Named(req, provider))
	})
}

// streamErr names an API error by its status code.
func streamErr(err error) error {
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) && apiErr.StatusCode > 0 {
		return wrap.Status(err, apiErr.StatusCode)
	}
	return err
}

// StreamError is an error event in the stream; its error.type is the event's error type, such as
// "overloaded_error".
type StreamError struct{ Type, Message string }

func (e *StreamError) Error() string { return "anthropic stream error: " + e.Type + ": " + e.Message }

// ErrorType returns the event's error type, or "stream_error" when it had none or one that is no
// error code (free text, which must not reach a span).
func (e *StreamError) ErrorType() string { return wrap.Code(e.Type, itlconv.ErrorTypeStreamError) }

// observer reads the SSE stream as it passes to the SDK's decoder.
type observer struct {
	mu      sync.Mutex
	s       wrap.Stream
	partial []byte // the start of a line whose end has not arrived yet
	data    []byte // the data lines of the event not yet dispatched, joined with '\n'
	named   bool   // the event not yet dispatched has an event: line with a name
	failed  bool   // an error event came: the generation ends with the first (wrap.Stream.Fail)
}

type event struct {
	Type    string `json:"type"`
	Message struct {
		ID    string `json:"id"`
		Model string `json:"model"`
		Usage usage  `json:"usage"`
	} `json:"message"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage usage `json:"usage"`
	Error struct {
		Type    wrap.ErrorCode `json:"type"` // a string or a number, as httpitl reads it
		Message text           `json:"message"`
	} `json:"error"`
}

// text is a JSON string; any other value leaves it empty, without an error: a message that is no
// string must not keep the error event from being read (httpitl does not read it at all).
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*t = text(s)
	}
	return nil
}

type usage struct {
	InputTokens  *int `json:"input_tokens"`
	OutputTokens *int `json:"output_tokens"`
}

func (u usage) record(g *otelitl.Generation) {
	in, out := -1, -1
	if u.InputTokens != nil {
		in = *u.InputTokens
	}
	if u.OutputTokens != nil {
		out = *u.OutputTokens
	}
	g.SetUsage(in, out)
}

func (u usage) recordInput(g *otelitl.Generation) {
	if u.InputTokens != nil {
		g.SetUsage(*u.InputTokens, -1)
	}
}

// feed takes the bytes just read and handles every line they complete.
func (o *observer) feed(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			o.partial = append(o.partial, p...)
			return
		}
		line := p[:i]
		if len(o.partial) > 0 {
			o.partial = append(o.partial, line...)
			line = o.partial
		}
		o.line(bytes.TrimSuffix(line, []byte("\r")))
		o.partial = o.partial[:0]
		p = p[i+1:]
	}
}

// line reads one line of the stream as the SDK's decoder does (the SSE rules): a blank line
// dispatches the event whose data lines came before it, joined with '\n'; an event the body ends
// before dispatching never reaches the application, nor the span. An event without a name (no
// event: line, or an empty one) is passed over, as the SDK passes over it, whatever its data;
// otherwise the data's type says what the event is (the name repeats it). Comments and ids say
// nothing here.
func (o *observer) line(line []byte) {
	if len(line) == 0 {
		if len(o.data) > 0 && o.named {
			o.event(o.data)
		}
		o.data, o.named = o.data[:0], false
		return
	}
	name, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	if string(name) == "event" {
		o.named = len(value) > 0
		return
	}
	if string(name) != "data" {
		return
	}
	if len(o.data) > 0 {
		o.data = append(o.data, '\n')
	}
	o.data = append(o.data, value...)
}

// event reads one event's data.
func (o *observer) event(data []byte) {
	var ev event
	if json.Unmarshal(bytes.TrimSpace(data), &ev) != nil {
		return // the SDK reports what it cannot decode
	}
	g := o.s.G
	switch ev.Type {
	case "content_block_delta":
		d := ev.Delta
		if d.Text != "" || d.Thinking != "" || d.PartialJSON != "" {
			g.Chunk(1)
		}
	case "message_start":
		g.SetResponseID(ev.Message.ID)
		g.SetResponseModel(ev.Message.Model)
		// Input tokens only: message_start's output count is a placeholder (1) until message_delta
		// gives the real one, and a stream that fails or is closed before then would keep it.
		ev.Message.Usage.recordInput(g)
	case "message_delta":
		if ev.Delta.StopReason != "" {
			g.AddFinishReason(ev.Delta.StopReason)
		}
		ev.Usage.record(g)
	case "message_stop":
		o.s.MarkFinished()
	case "error":
		// The first error event names the generation whatever came before it (message_stop: the
		// SDK reads on and hands the application the error) or follows it, as in httpitl.
		o.s.Fail(&StreamError{Type: string(ev.Error.Type), Message: string(ev.Error.Message)})
		o.failed = true
	}
}

// body observes the response body of a successful attempt.
type body struct {
	io.ReadCloser
	obs *observer
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	o := b.obs
	o.mu.Lock()
	defer o.mu.Unlock()
	o.feed(p[:n])
	switch {
	case o.failed:
		o.s.Done(nil) // ends with the error event (Fail)
	case err == io.EOF:
		// An event the body ends before dispatching (its blank line, or its line's end, not come)
		// is dropped, as the SDK drops it.
		o.s.Done(nil) // incomplete_stream unless message_stop came
	case err != nil:
		o.s.Done(err)
	}
	return n, err
}

func (b *body) Close() error {
	err := b.ReadCloser.Close()
	b.obs.mu.Lock()
	b.obs.s.Closed()
	b.obs.mu.Unlock()
	return err
}
