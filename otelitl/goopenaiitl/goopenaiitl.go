// Package goopenaiitl records the rhythm of streamed replies from github.com/sashabaranov/go-openai
// with otelitl: one generation span per chat completion stream, a chunk per response that carries
// generated content (text, refusal, reasoning_content, tool-call or function-call arguments).
// go-openai's delta has no field for "reasoning" (the reasoning text vLLM, Ollama and OpenRouter
// stream under that name) nor for audio.transcript, and keeps no raw JSON, so chunks that carry
// only those are not counted here, where httpitl and openaiitl count them: for such a server the
// time to first chunk is that of the first content after the reasoning. Use httpitl's transport
// under go-openai (openai.ClientConfig.HTTPClient) to count them. Likewise go-openai decodes usage
// counts into ints: a count the server leaves out is recorded as 0, where httpitl records none.
//
// CreateChatCompletionStream returns a stream with the SDK stream's methods (Recv, RecvRaw, Close,
// Header, ...), so the reading loop does not change:
//
//	stream, err := goopenaiitl.CreateChatCompletionStream(ctx, in, client, req, goopenaiitl.WithBaseURL(cfg.BaseURL))
//	if err != nil { ... }
//	defer stream.Close()
//	for {
//		resp, err := stream.Recv()
//		if errors.Is(err, io.EOF) { break }
//		...
//	}
//
// The generation ends at io.EOF, at an error, at Close, or when the call's context ends while the
// application no longer reads; a stream closed (or a context cancelled) before the reply finished
// is recorded with error.type "cancelled" ("timeout" for a deadline). A stream that ends (io.EOF)
// before any choice's finish_reason was cut off: its span ends with error.type "incomplete_stream"
// (the SDK returns io.EOF alike for [DONE] and for the end of the body, so [DONE] alone does not
// count). httpitl, which reads [DONE], takes it for the end instead: a stream cut, or closed by the
// application, between a finish reason and [DONE] (where the usage chunk comes) is
// "incomplete_stream" or "cancelled" there and complete here, and a [DONE] without any finish
// reason the reverse. A stream the SDK fails before the finish reason with an error of its own, at an event it
// cannot decode (not JSON) or after more keep-alive lines than it takes between two events
// (ErrTooManyEmptyStreamMessages), was cut off for an application that stops there:
// "incomplete_stream", never the error's Go type, as httpitl names a Bedrock chunk the SDKs cannot
// decode (httpitl's transport under go-openai sees the application close the body: "cancelled").
// The span's status description is the error.type, never an error message, which may quote
// the provider's reply. Recv, Close and the other methods return exactly what the SDK's do.
//
// # Errors
//
// API errors carry their HTTP status code as error.type. A request that got no response
// (go-openai's *url.Error) is named as httpitl's transport names it: "connection_refused",
// "dns_error", "timeout", "tls_error", else "connection_error". An error event in the stream ({"error":
// {...}}, which go-openai returns as an *openai.APIError without a status) is named as httpitl
// names it: by its error's code, else its type, when that looks like a code (1 to 64 letters,
// digits, '_', '-' or '.'), else "stream_error" (neither, free text or a code too long); OpenAI's
// own error events, with "code": null, are named by their type, such as "server_error". An error
// event that go-openai cannot decode (an error that is no object) reaches Recv as the error of
// decoding nothing, a *json.SyntaxError at offset 0, which is "stream_error" too. An error event
// names the span after a finish reason too: Recv returns it to the application, and httpitl names
// it. What comes after [DONE] is no part of the stream: go-openai stops reading there, and httpitl
// reads nothing after it either.
//
// Where go-openai keeps from the application what httpitl reads, the names differ from httpitl's.
// An error named by its status alone, an error without a string message or whose type is no string,
// and any error event after a line that is not a data line (a keep-alive comment: go-openai decodes
// such lines together with the error event, and fails) are "stream_error". A code of 0 counts as
// none (go-openai decodes "code": null as 0), and a code written as a number that is no integer is
// go-openai's float64 (1e3 gives "1000"). An event whose data does not begin exactly with {"error":
// (a space after the brace) is no error to go-openai: the application gets an empty response, and a
// stream that ends without a finish reason is "incomplete_stream". vLLM's older error event, a
// response that is itself the error ({"object": "error", "code": 400, ...}), reaches the
// application as a response without choices whose code and type go-openai drops: httpitl names it
// by them ("400"), the wrapper records no error for it, and the stream that ends after it without a
// finish reason is "incomplete_stream".
package goopenaiitl

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	openai "github.com/sashabaranov/go-openai"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/internal/wrap"
)

// Provider is the default gen_ai.provider.name.
const Provider = "openai"

type config struct {
	baseURL  string
	provider string
}

// Option configures a wrapped call.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithBaseURL names the base URL the client was configured with (openai.ClientConfig.BaseURL), from
// which server.address and server.port are recorded. The default is OpenAI's: go-openai's client
// does not show its base URL, so a client configured for Azure, vLLM or a local server records
// api.openai.com:443 unless this gives its own.
func WithBaseURL(u string) Option { return optionFunc(func(c *config) { c.baseURL = u }) }

// WithProvider sets gen_ai.provider.name, for OpenAI-compatible servers of other providers
// (for example "azure.ai.openai" or "deepseek"). The default is "openai".
func WithProvider(p string) Option { return optionFunc(func(c *config) { c.provider = p }) }

// ChatCompletionStream is the SDK's stream with its Recv and Close observed.
type ChatCompletionStream struct {
	*openai.ChatCompletionStream
	s wrap.Stream
}

// CreateChatCompletionStream calls client.CreateChatCompletionStream inside a generation span.
func CreateChatCompletionStream(ctx context.Context, in *otelitl.Instrumentation, client *openai.Client, req openai.ChatCompletionRequest, opts ...Option) (*ChatCompletionStream, error) {
	c := config{baseURL: openai.DefaultConfig("").BaseURL, provider: Provider}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	addr, port := wrap.ServerOf(c.baseURL)
	ctx, g := in.Start(ctx, otelitl.Request{Operation: "chat", Provider: c.provider, Model: req.Model, ServerAddress: addr, ServerPort: port})
	inner, err := client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		g.End(wrap.NoResponse(apiErr(err)))
		return nil, err
	}
	st := &ChatCompletionStream{ChatCompletionStream: inner, s: wrap.Stream{G: g}}
	st.s.Watch(ctx)
	return st, nil
}

// Recv returns the next response of the stream, recording it.
func (s *ChatCompletionStream) Recv() (openai.ChatCompletionStreamResponse, error) {
	resp, err := s.ChatCompletionStream.Recv()
	if err != nil {
		s.failed(err)
	} else if Observe(s.s.G, resp) {
		s.s.MarkFinished()
	}
	return resp, err
}

// RecvRaw returns the raw JSON of the next response of the stream, as the SDK's RecvRaw does,
// recording the response as Recv records it (the SDK's RecvRaw, promoted through the embedded
// stream, would bypass the span). Bytes that do not decode as a response, which Recv would return
// as an error, record nothing; no bytes and no error is what go-openai gives for an error event it
// cannot decode (or a data line with no data at all), where Recv fails: it names the generation
// "stream_error", as Recv's error does, whatever follows.
func (s *ChatCompletionStream) RecvRaw() ([]byte, error) {
	raw, err := s.ChatCompletionStream.RecvRaw()
	var resp openai.ChatCompletionStreamResponse
	switch {
	case err != nil:
		s.failed(err)
	case len(raw) == 0:
		s.s.Fail(&wrap.TypedError{Err: errUndecodedEvent, Type: itlconv.ErrorTypeStreamError})
	case json.Unmarshal(raw, &resp) == nil:
		if Observe(s.s.G, resp) {
			s.s.MarkFinished()
		}
	}
	return raw, err
}

// errUndecodedEvent names an error event go-openai could not decode, read with RecvRaw.
var errUndecodedEvent = errors.New("goopenaiitl: an error event go-openai could not decode")

// failed ends the generation with the error Recv or RecvRaw returned: io.EOF is the stream's end,
// and an error event names the generation after a finish reason too (go-openai hands it to the
// application), as in httpitl.
func (s *ChatCompletionStream) failed(err error) {
	if errors.Is(err, io.EOF) {
		s.s.Done(nil)
		return
	}
	err, event := recvErr(err)
	if event {
		s.s.Fail(err)
	}
	s.s.Done(err)
}

// Close closes the stream, ends its generation if the stream has not ended yet, and returns the
// SDK's Close error.
func (s *ChatCompletionStream) Close() error {
	err := s.ChatCompletionStream.Close()
	s.s.Closed()
	return err
}

// Observe records one stream response on g: a chunk when it carries generated content, the
// response id and model, finish reasons and usage. It reports whether the response shows the reply
// complete: a choice's finish reason. Usage alone does not, since some servers send it with every
// chunk.
func Observe(g *otelitl.Generation, r openai.ChatCompletionStreamResponse) (finished bool) {
	if r.ID != "" {
		g.SetResponseID(r.ID)
	}
	if r.Model != "" {
		g.SetResponseModel(r.Model)
	}
	if r.Usage != nil {
		g.SetUsage(r.Usage.PromptTokens, r.Usage.CompletionTokens)
	}
	content := false
	for _, ch := range r.Choices {
		d := ch.Delta
		if d.Content != "" || d.Refusal != "" || d.ReasoningContent != "" || (d.FunctionCall != nil && d.FunctionCall.Arguments != "") {
			content = true
		}
		for _, tc := range d.ToolCalls {
			if tc.Function.Arguments != "" {
				content = true
			}
		}
		if ch.FinishReason != "" {
			g.AddFinishReason(string(ch.FinishReason))
			finished = true
		}
	}
	if content {
		g.Chunk(1)
	}
	return finished
}

// apiErr names an API error by its status code, and an error event the server sent in the stream
// (an APIError without a status) by its code or type, as httpitl names it.
func apiErr(err error) error {
	var ae *openai.APIError
	if errors.As(err, &ae) {
		if ae.HTTPStatusCode > 0 {
			return wrap.Status(err, ae.HTTPStatusCode)
		}
		return &wrap.TypedError{Err: err, Type: wrap.StreamErrorType(code(ae.Code), ae.Type, "")}
	}
	var re *openai.RequestError
	if errors.As(err, &re) && re.HTTPStatusCode > 0 {
		return wrap.Status(err, re.HTTPStatusCode)
	}
	return err
}

// code returns an APIError's code as httpitl reads it: a string as it is, a number as its digits.
// go-openai decodes "code": null as the integer 0, so 0 counts as no code; a number that is no
// integer comes as a float64, whose text may differ from the one sent.
func code(c any) string {
	switch c := c.(type) {
	case string:
		return c
	case int:
		if c != 0 {
			return strconv.Itoa(c)
		}
	case float64:
		return strconv.FormatFloat(c, 'g', -1, 64)
	}
	return ""
}

// recvErr names an error Recv returned, and reports whether it is an error event the server sent
// in the stream: an APIError without a status, named as apiErr names it, or an error event
// go-openai could not decode, "stream_error". For such an event the SDK's stream reader returns no
// bytes and no error, and Recv fails decoding them with a *json.SyntaxError at offset 0 (after
// reading nothing). Data that is not JSON fails at a later offset; only a data line with no data
// at all fails the same way, and is taken for an error event too.
func recvErr(err error) (error, bool) {
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset == 0 {
		return &wrap.TypedError{Err: err, Type: itlconv.ErrorTypeStreamError}, true
	}
	var ae *openai.APIError
	return apiErr(err), errors.As(err, &ae) && ae.HTTPStatusCode == 0
}
