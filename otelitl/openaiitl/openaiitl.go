// Package openaiitl records the rhythm of streamed replies from github.com/openai/openai-go/v3
// with otelitl: one generation span per streaming call, a chunk per delta that carries generated
// content.
//
// The wrappers return the SDK's own *ssestream.Stream type, so the code that reads the stream does
// not change:
//
//	stream := openaiitl.NewChatStreaming(ctx, in, &client.Chat.Completions, params)
//	for stream.Next() {
//		chunk := stream.Current()
//		...
//	}
//	if err := stream.Err(); err != nil { ... }
//
// A chunk counts when it carries text, a refusal, reasoning (the reasoning_content or reasoning
// field that OpenAI-compatible servers send) or tool-call arguments; role-only and usage-only
// chunks do not count. The generation ends when the stream ends, fails or is closed, or when the
// call's context ends while the application no longer reads; a stream closed, or a context
// cancelled, before the reply finished is recorded with error.type "cancelled" ("timeout" for a
// deadline). Usage is recorded when
// the server sends it: set stream_options.include_usage to get it from OpenAI. A count the usage
// leaves out (or sends as null) is recorded as none, as httpitl records it, not as openai-go's 0.
//
// # Provider
//
// The span starts, named, before the SDK builds the request's URL, with gen_ai.provider.name
// "openai" ([Provider]). When the SDK sends the request, the wrapper reads the URL (in a middleware
// it adds after the client's and the call's own, so that it sees the URL as sent, with the path
// openai-go's azure package rewrote) and tells the provider by httpitl's rules, the very code
// httpitl's transport runs: a path under /openai/deployments/{deployment}/ on any host, or under
// /openai/ on one of Azure OpenAI's hosts (NAME.openai.azure.com, ...), is Azure OpenAI's,
// "azure.ai.openai", and the deployment is the request model when the params name none. With the
// azure package (azure.WithEndpoint, azure.WithAPIKey or azure.WithTokenCredential) the params'
// model is the deployment: the SDK moves it into the path, and the span is named by it. The
// provider and the model are set on the generation before the reply's first byte, so that the
// span and every metric carry them; samplers saw "openai" at the start. The Responses API, which
// the azure package sends to /openai/responses with no deployment, is Azure's only on Azure's
// hosts, as for httpitl; a call that fails before the SDK sends it stays "openai".
//
// The URL, rather than an option alone, because an application configures its endpoint once, on
// the client, which the wrapper does not see; and because one set of rules keeps the wrapper and
// httpitl's transport, used on another client of the same application, recording a call alike.
// No URL tells an OpenAI-compatible server of another provider (DeepSeek, Groq, vLLM), or Azure
// OpenAI behind a domain of its own on the v1 API: [WithProvider] names it, given to the client or
// to one call, and wins over the URL. The package links httpitl for its rules; it installs no
// transport.
//
// # Errors
//
// API errors carry their HTTP status code as error.type. A request that got no response
// (openai-go's *url.Error, after its retries) is named as httpitl's transport names it:
// "connection_refused", "dns_error", "timeout", "tls_error", else "connection_error". An error sent
// inside the stream is named as httpitl names it. An error member ({"error": {...}}, in a Chat Completions or a Responses API
// stream, which the SDK returns as an *ssestream.StreamError holding the event) is named by the
// first non-empty of its error's code, type and status (a string, or a number as written) when that
// looks like a code (1 to 64 letters, digits, '_', '-' or '.'), else "stream_error" (none of them,
// free text or a code too long, an error that is no object); OpenAI's own Chat Completions error
// events, with "code": null, are named by their type, such as "server_error". vLLM's older error
// event, a chunk that is itself the error ({"object": "error", "code": 400, ...}), which the SDK
// passes on to the application as a chunk, is named by its code, else its type, when that is a
// code, else "stream_error". A Responses API error event (type "error") is named by its own code,
// else by its error object (nested, as OpenAI sends it), else "stream_error"; a response.failed by
// its error's code, else "response_failed". openai-go also ends the stream, and fails it, at
// "error": null, and at an error member in an event of any type (a Responses delta), which httpitl
// takes for no error: that is "stream_error" here (or the error's name), and "cancelled" for
// httpitl's transport under openai-go, which closes the body there.
//
// An error in the stream names the span wherever it comes, after the reply's end marker (a
// finish reason, response.completed) too: the server failed the call, and openai-go hands the
// application the error (or the error chunk, or the error event). Of several errors the first
// names the span, whatever follows it (another error, a finish reason, response.completed, the
// stream cut, closed or its context cancelled), as in httpitl. What comes after [DONE] is no part
// of the stream: openai-go stops reading there, and httpitl reads nothing after it either.
//
// A stream that ends cleanly without its protocol's end marker (a Chat Completions choice's
// finish_reason; a Responses API response.completed, response.incomplete or response.failed) was
// cut off: its span ends with error.type "incomplete_stream". The SDK reports [DONE] and the end of
// the body alike, so [DONE] alone does not count as the end marker. httpitl, which reads [DONE],
// takes it for the end marker instead: a stream cut, or closed by the application, between a
// finish reason and [DONE] (where the usage chunk comes) is "incomplete_stream" or "cancelled"
// there and complete here, and a [DONE] without any finish reason the reverse. A stream the SDK
// ends with an error of its own before the end marker, at an event it cannot decode (not JSON) or
// a line too long for it, was cut off for the application too: "incomplete_stream", never the
// error's Go type, as httpitl names a Bedrock chunk the SDKs cannot decode (httpitl's transport
// under openai-go, which cannot tell that event from one the SDK read, sees the SDK close the body
// and records "cancelled"). In every case the span's status description is the error.type: no
// error message, which may quote the provider's reply, reaches the span. The application sees
// exactly the stream, values and errors the SDK gives; only the span records more.
package openaiitl

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
	_ "github.com/otelitl/itl/otelitl/httpitl" // sets endpoint.Provider: the provider by httpitl's rules
	"github.com/otelitl/itl/otelitl/internal/endpoint"
	"github.com/otelitl/itl/otelitl/internal/wrap"
)

// Provider is the gen_ai.provider.name the wrappers record unless the request tells another (see
// the package's Provider section): the span starts with it, named, before the SDK builds the
// request's URL.
const Provider = "openai"

// WithProvider names the provider (gen_ai.provider.name) the wrappers record for the calls made
// with it, in place of the one they tell from the request's URL: for an OpenAI-compatible server
// of another provider ("deepseek", "groq", ...), or Azure OpenAI behind a name no rule tells (a
// custom domain on Azure's v1 API: "azure.ai.openai"). Give it to the client (openai.NewClient),
// for every call, or to one call. An empty provider is ignored. It is a middleware that marks the
// request for the wrappers: an unwrapped call is sent, and recorded by httpitl's transport,
// unchanged.
func WithProvider(provider string) option.RequestOption {
	return option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		return next(endpoint.Named(req, provider))
	})
}

// start starts the generation and returns the request options that read the server and the
// provider off the request and give API errors their status code.
func start(ctx context.Context, in *otelitl.Instrumentation, model string, opts []option.RequestOption) (context.Context, *otelitl.Generation, []option.RequestOption) {
	ctx, g := in.Start(ctx, otelitl.Request{Operation: "chat", Provider: Provider, Model: model})
	if g.IsRecording() {
		// Last, so that it runs after the client's middleware and the call's (openai-go runs them
		// in the order given): the URL is the one sent, with the path the azure package rewrote
		// to name the deployment, and WithProvider has marked the request.
		opts = append(opts[:len(opts):len(opts)], option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			g.SetServer(wrap.Server(req.URL))
			endpoint.Observe(g, req, Provider)
			return next(req)
		}))
	}
	return ctx, g, opts
}

// streamErr names an API error by its status code, and an error event in the stream
// "stream_error". A nil err stays nil.
func streamErr(err error) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) && apiErr.StatusCode > 0 {
		return wrap.Status(err, apiErr.StatusCode)
	}
	var sErr *ssestream.StreamError
	if errors.As(err, &sErr) {
		return &wrap.TypedError{Err: err, Type: itlconv.ErrorTypeStreamError}
	}
	return err
}

// chatStreamErr is streamErr for a Chat Completions stream, whose error event is named by its
// error member as httpitl names it (see the package's Errors section).
func chatStreamErr(err error) error {
	var sErr *ssestream.StreamError
	if !errors.As(err, &sErr) {
		return streamErr(err)
	}
	var ev struct {
		Error json.RawMessage `json:"error"`
	}
	_ = json.Unmarshal(sErr.Event.Data, &ev) // invalid JSON leaves no error member: "stream_error"
	return &wrap.TypedError{Err: err, Type: wrap.ErrorObjectType(ev.Error)}
}

// responseStreamErr is streamErr for a Responses stream, whose event with an error member is
// named as httpitl names it (see the package's Errors section): an error event (type "error") by
// its own code, else by its error object; any other by its error object.
func responseStreamErr(err error) error {
	var sErr *ssestream.StreamError
	if !errors.As(err, &sErr) {
		return streamErr(err)
	}
	var ev struct {
		Type  string          `json:"type"`
		Code  json.RawMessage `json:"code"`
		Error json.RawMessage `json:"error"`
	}
	_ = json.Unmarshal(sErr.Event.Data, &ev) // invalid JSON leaves no error member: "stream_error"
	t := wrap.ErrorObjectType(ev.Error)
	if code := wrap.CodeValue(ev.Code); ev.Type == "error" && code != "" {
		t = wrap.Code(code, itlconv.ErrorTypeStreamError)
	}
	return &wrap.TypedError{Err: err, Type: t}
}

// NewChatStreaming calls svc.NewStreaming (client.Chat.Completions) inside a generation span and
// returns its stream, recording each content chunk as it is read.
func NewChatStreaming(ctx context.Context, in *otelitl.Instrumentation, svc *openai.ChatCompletionService, body openai.ChatCompletionNewParams, opts ...option.RequestOption) *ssestream.Stream[openai.ChatCompletionChunk] {
	ctx, g, opts := start(ctx, in, string(body.Model), opts)
	inner := svc.NewStreaming(ctx, body, opts...)
	if !g.IsRecording() {
		return inner
	}
	it := &chatIterator{inner: inner, s: wrap.Stream{G: g}}
	if err := inner.Err(); err != nil {
		// The request failed: the generation ends with its error now, before the application's
		// deferred cancel could end it as cancelled; one that got no response is named why
		// (connection_refused, ...), not taken for a reply cut off (as the stream's Done would
		// take an error it cannot name).
		g.End(wrap.NoResponse(chatStreamErr(err)))
	} else {
		it.s.Watch(ctx)
	}
	return ssestream.NewStreamWithBetaIterator(it, nil)
}

type chatIterator struct {
	inner *ssestream.Stream[openai.ChatCompletionChunk]
	s     wrap.Stream
}

func (it *chatIterator) Next() bool {
	if !it.inner.Next() {
		err := chatStreamErr(it.inner.Err())
		failStreamError(&it.s, err)
		it.s.Done(err)
		return false
	}
	c := it.inner.Current()
	if c.Object == "error" {
		// vLLM's older in-stream error, {"object":"error",...}: the SDK passes it on as a chunk. The
		// first error names the generation, as in httpitl, whatever follows it.
		it.s.Fail(&wrap.TypedError{Err: errChunk, Type: objectErrorType(c.RawJSON())})
		return true
	}
	if ObserveChatChunk(it.s.G, c) {
		it.s.MarkFinished()
	}
	return true
}

// failStreamError records an error event the SDK ended the stream with (an *ssestream.StreamError)
// as the provider's error (wrap.Stream.Fail): it names the generation even after the reply's end
// marker, as httpitl names it; the SDK's other errors (a connection cut, a context's end) do not.
func failStreamError(s *wrap.Stream, err error) {
	var sErr *ssestream.StreamError
	if errors.As(err, &sErr) {
		s.Fail(err)
	}
}

// errChunk is the error of a chunk that is itself the error ({"object":"error",...}).
var errChunk = errors.New("openai: the stream sent an error in place of a chunk")

// objectErrorType names an error chunk ({"object":"error",...}) as httpitl names it: by its code,
// else its type, when that is a code; else "stream_error".
func objectErrorType(raw string) string {
	var ev struct {
		Type json.RawMessage `json:"type"`
		Code json.RawMessage `json:"code"`
	}
	_ = json.Unmarshal([]byte(raw), &ev)
	return wrap.StreamErrorType(wrap.CodeValue(ev.Code), wrap.CodeValue(ev.Type), "")
}

func (it *chatIterator) Current() openai.ChatCompletionChunk { return it.inner.Current() }
func (it *chatIterator) Err() error                          { return it.inner.Err() }

// Close closes the stream; it may run while another goroutine calls Next, so it reads nothing the
// stream's Next writes (wrap.Stream's state is atomic; a request that failed ended the generation
// when the stream was made). An error the stream reported names the generation (wrap.Stream.Fail).
func (it *chatIterator) Close() error {
	err := it.inner.Close()
	it.s.Closed()
	return err
}

// ObserveChatChunk records one Chat Completions chunk on g: a chunk of generated content, the
// response id and model, finish reasons and usage. It reports whether the chunk shows the reply
// complete: a choice's finish reason. Usage alone does not, since some servers send it with every
// chunk. Use it when you drive a stream yourself.
func ObserveChatChunk(g *otelitl.Generation, c openai.ChatCompletionChunk) (finished bool) {
	if c.ID != "" {
		g.SetResponseID(c.ID)
	}
	if c.Model != "" {
		g.SetResponseModel(c.Model)
	}
	if c.JSON.Usage.Valid() {
		u := c.Usage
		g.SetUsage(count(u.PromptTokens, u.JSON.PromptTokens.Valid()), count(u.CompletionTokens, u.JSON.CompletionTokens.Valid()))
	}
	content := false
	for _, ch := range c.Choices {
		d := ch.Delta
		//lint:ignore SA1019 older OpenAI-compatible servers still stream function_call arguments.
		if d.Content != "" || d.Refusal != "" || d.FunctionCall.Arguments != "" || d.Audio.Transcript != "" {
			content = true
		}
		for _, tc := range d.ToolCalls {
			if tc.Function.Arguments != "" {
				content = true
			}
		}
		for _, k := range [...]string{"reasoning_content", "reasoning"} {
			// Extra fields are kept raw: a non-empty JSON string carries reasoning text.
			if raw := d.JSON.ExtraFields[k].Raw(); raw != "" && raw != `""` && raw != "null" {
				content = true
			}
		}
		if ch.FinishReason != "" {
			g.AddFinishReason(ch.FinishReason)
			finished = true
		}
	}
	if content {
		g.Chunk(1)
	}
	return finished
}

// NewResponseStreaming calls svc.NewStreaming (client.Responses) inside a generation span and
// returns its stream, recording each delta of output text, refusal, reasoning or tool-call
// arguments as a chunk.
func NewResponseStreaming(ctx context.Context, in *otelitl.Instrumentation, svc *responses.ResponseService, body responses.ResponseNewParams, opts ...option.RequestOption) *ssestream.Stream[responses.ResponseStreamEventUnion] {
	ctx, g, opts := start(ctx, in, string(body.Model), opts)
	inner := svc.NewStreaming(ctx, body, opts...)
	if !g.IsRecording() {
		return inner
	}
	it := &responseIterator{inner: inner, s: wrap.Stream{G: g}}
	if err := inner.Err(); err != nil {
		// The request failed: the generation ends with its error now, before the application's
		// deferred cancel could end it as cancelled; one that got no response is named why
		// (connection_refused, ...), not taken for a reply cut off (as the stream's Done would
		// take an error it cannot name).
		g.End(wrap.NoResponse(streamErr(err)))
	} else {
		it.s.Watch(ctx)
	}
	return ssestream.NewStreamWithBetaIterator(it, nil)
}

type responseIterator struct {
	inner *ssestream.Stream[responses.ResponseStreamEventUnion]
	s     wrap.Stream
}

func (it *responseIterator) Next() bool {
	if !it.inner.Next() {
		err := responseStreamErr(it.inner.Err())
		failStreamError(&it.s, err)
		it.s.Done(err) // nil at the end of the body: Done tells a completed response from a cut-off one
		return false
	}
	finished, err := ObserveResponseEvent(it.s.G, it.inner.Current())
	// A response.failed or error event: the first error names the generation, as in httpitl,
	// whatever follows it (another error, response.completed).
	it.s.Fail(err)
	if finished {
		it.s.MarkFinished()
	}
	return true
}

func (it *responseIterator) Current() responses.ResponseStreamEventUnion { return it.inner.Current() }
func (it *responseIterator) Err() error                                  { return it.inner.Err() }

// Close closes the stream; it may run while another goroutine calls Next (see chatIterator.Close).
func (it *responseIterator) Close() error {
	err := it.inner.Close()
	it.s.Closed()
	return err
}

// ResponseError is the failure a response.failed or error event reports; its error.type is the
// event's error code.
type ResponseError struct {
	Code, Message string
	// Event is the type of the event that reported the failure: "response.failed", or "error" for
	// an error event, which without a code is "stream_error" (as httpitl names it) rather than
	// "response_failed".
	Event string
}

func (e *ResponseError) Error() string { return "openai response failed: " + e.Code + ": " + e.Message }

// ErrorType returns the error code, or, when the event had none or one that is no code (see the
// package's Errors section), "stream_error" for an error event and "response_failed" otherwise.
func (e *ResponseError) ErrorType() string {
	if e.Event == "error" {
		return wrap.Code(e.Code, itlconv.ErrorTypeStreamError)
	}
	return wrap.Code(e.Code, itlconv.ErrorTypeResponseFailed)
}

// ObserveResponseEvent records one Responses API stream event on g. It reports whether the event
// completes the response, and the failure a response.failed or error event reports.
func ObserveResponseEvent(g *otelitl.Generation, ev responses.ResponseStreamEventUnion) (finished bool, err error) {
	switch ev.Type {
	case "response.output_text.delta", "response.refusal.delta", "response.reasoning_text.delta",
		"response.reasoning_summary_text.delta", "response.function_call_arguments.delta",
		"response.custom_tool_call_input.delta", "response.mcp_call_arguments.delta",
		"response.audio.transcript.delta":
		if ev.Delta != "" {
			g.Chunk(1)
		}
	case "response.created", "response.in_progress", "response.queued":
		recordResponse(g, ev.Response)
	case "response.completed", "response.incomplete":
		recordResponse(g, ev.Response)
		reason := "stop"
		if ev.Type == "response.incomplete" {
			reason = "length"
			if r := ev.Response.IncompleteDetails.Reason; r != "" && r != "max_output_tokens" {
				reason = r
			}
		}
		g.AddFinishReason(reason)
		return true, nil
	case "response.failed":
		recordResponse(g, ev.Response)
		// The code as written: the SDK gives a number as it decodes it (1e3 as "1000").
		code := wrap.CodeValue([]byte(ev.Response.Error.JSON.Code.Raw()))
		return false, &ResponseError{Code: code, Message: ev.Response.Error.Message, Event: ev.Type}
	case "error":
		return false, &ResponseError{Code: wrap.CodeValue([]byte(ev.JSON.Code.Raw())), Message: ev.Message, Event: ev.Type}
	}
	return false, nil
}

func recordResponse(g *otelitl.Generation, r responses.Response) {
	if r.ID != "" {
		g.SetResponseID(r.ID)
	}
	if r.Model != "" {
		g.SetResponseModel(string(r.Model))
	}
	if r.JSON.Usage.Valid() {
		u := r.Usage
		g.SetUsage(count(u.InputTokens, u.JSON.InputTokens.Valid()), count(u.OutputTokens, u.JSON.OutputTokens.Valid()))
	}
}

// count returns a token count the server sent, or -1 (unknown, recorded as nothing) for one it
// left out or sent as null, which openai-go gives as 0: an unknown count is no zero, as httpitl
// has it.
func count(n int64, sent bool) int {
	if !sent {
		return -1
	}
	return int(n)
}
