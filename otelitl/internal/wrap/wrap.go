// Package wrap holds what the SDK wrappers (openaiitl, anthropicitl, goopenaiitl) share: reading the
// server off a request URL, naming API errors, and ending a stream's generation the same way.
package wrap

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"strconv"
	"sync/atomic"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
)

// Server returns server.address and server.port for a request URL, with the scheme's default port
// when the URL names none; "", 0 for a URL without a host.
func Server(u *url.URL) (string, int) {
	if u == nil || u.Hostname() == "" {
		return "", 0
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		port = 443
		if u.Scheme == "http" {
			port = 80
		}
	}
	return u.Hostname(), port
}

// ServerOf parses raw (a base URL) and returns Server of it; an unparsable URL gives "", 0.
func ServerOf(raw string) (string, int) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", 0
	}
	return Server(u)
}

// TypedError gives an SDK error a low-cardinality error.type, as the GenAI conventions ask (an API
// error's HTTP status code, say), while errors.Is and errors.As still reach the SDK's error.
type TypedError struct {
	Err  error
	Type string
}

func (e *TypedError) Error() string     { return e.Err.Error() }
func (e *TypedError) Unwrap() error     { return e.Err }
func (e *TypedError) ErrorType() string { return e.Type }

// Status names err by an HTTP status code.
func Status(err error, status int) error { return &TypedError{Err: err, Type: strconv.Itoa(status)} }

// maxCodeLength bounds an error code taken from a provider's reply.
const maxCodeLength = 64

// Code returns a provider's error code (an error event's type, a response's error code) when it
// looks like one: 1 to 64 ASCII letters, digits, '_', '-' or '.', as every documented code does.
// Anything else (prose a proxy put there, a message echoing the prompt) gives fallback: error.type
// and the span status take their text from this code, and no free text from a provider may reach
// a span.
func Code(code, fallback string) string {
	if code == "" || len(code) > maxCodeLength {
		return fallback
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fallback
		}
	}
	return code
}

// StreamErrorType returns the error.type of an error a provider sent inside a stream, from its
// error object's code, type and status, as httpitl names it: the first of them that is not empty,
// when it is a code (see Code); "stream_error" when all are empty or the first is no code (a code
// too long or made of free text does not fall back to the type).
func StreamErrorType(code, typ, status string) string {
	for _, name := range [...]string{code, typ, status} {
		if name != "" {
			return Code(name, itlconv.ErrorTypeStreamError)
		}
	}
	return itlconv.ErrorTypeStreamError
}

// ErrorObjectType returns StreamErrorType of an error object in JSON, whose code, type and status
// may each be a string or a number (as written: 429, 1e3); other values count as empty, and a
// value that is no object (a string, an array, null) gives "stream_error". Member names match as
// encoding/json matches them, which is how httpitl reads them too.
func ErrorObjectType(raw []byte) string {
	var e struct {
		Type   ErrorCode `json:"type"`
		Code   ErrorCode `json:"code"`
		Status ErrorCode `json:"status"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return itlconv.ErrorTypeStreamError
	}
	return StreamErrorType(string(e.Code), string(e.Type), string(e.Status))
}

// CodeValue returns an error code written in JSON (raw) as httpitl reads it: a string's text, or a
// number as written (429, 1e3); "" for anything else (null, an object, no value).
func CodeValue(raw []byte) string {
	var c ErrorCode
	_ = c.UnmarshalJSON(raw)
	return string(c)
}

// ErrorCode is an error code written as a JSON string or number (providers write either), as
// written; anything else leaves it empty. httpitl's reference reading decodes codes with it too.
type ErrorCode string

// UnmarshalJSON keeps a string or a number; any other value leaves c empty, without an error.
func (c *ErrorCode) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*c = ErrorCode(s)
		return nil
	}
	var n json.Number
	if json.Unmarshal(b, &n) == nil {
		*c = ErrorCode(n)
	}
	return nil
}

// ErrClosedEarly ends a generation whose stream the application closed before the reply finished.
// Its error.type is "cancelled", as for a context cancellation: the client gave up on the reply.
var ErrClosedEarly error = closedEarly{}

type closedEarly struct{}

func (closedEarly) Error() string     { return "otelitl: stream closed before the reply finished" }
func (closedEarly) ErrorType() string { return itlconv.ErrorTypeCancelled }

// ErrIncomplete ends a generation whose stream ended cleanly (EOF, no error) without its protocol's
// end marker: the reply was cut off, though the SDK reports no error. Its error.type is
// "incomplete_stream". Only the span says so: the application still sees what the SDK returned.
var ErrIncomplete error = incomplete{}

type incomplete struct{}

func (incomplete) Error() string     { return "otelitl: stream ended without its end marker" }
func (incomplete) ErrorType() string { return itlconv.ErrorTypeIncompleteStream }

// Stream tracks the end of one wrapped stream: the generation ends exactly once, with the first
// error the provider reported in the stream (Fail) whatever came before or after it, else with the
// stream's error (named incomplete_stream when it cut the reply off: see cutOff), with nil after a
// finished reply, with ErrIncomplete when the stream ended cleanly before the reply finished, or
// with ErrClosedEarly when the application closes the stream before the reply finished.
type Stream struct {
	G        *otelitl.Generation
	finished atomic.Bool           // the provider sent its protocol's end marker (finish reason, message_stop, ...)
	failed   atomic.Pointer[error] // the first error the provider reported in the stream (Fail)
	stop     atomic.Pointer[func() bool]
}

// Watch ends the generation when ctx ends, if the stream has not ended by then: an application
// that cancels the call and stops reading, without closing the stream, would otherwise leave the
// generation open, and its span unexported, for as long as the stream lives (httpitl's transport
// does the same). A finished reply ends as finished; any other with ctx's error, "cancelled" or
// "timeout". Call it once, before the stream is handed out.
func (s *Stream) Watch(ctx context.Context) {
	if ctx.Done() == nil {
		return // a context that never ends
	}
	stop := context.AfterFunc(ctx, func() { s.end(ctx.Err()) })
	s.stop.Store(&stop)
}

// end ends the generation with the error the provider reported (Fail), else with err, or without
// error once the reply finished: what fails after the reply's end marker (a context cancelled, a
// connection cut, the stream closed before the last bytes were read) is no failure of the reply,
// as httpitl has it, and whichever of them came first must not decide the span.
func (s *Stream) end(err error) {
	if f := s.failed.Load(); f != nil {
		err = *f
	} else if s.finished.Load() {
		err = nil
	}
	s.G.End(err)
}

// Fail records an error the provider reported inside the stream (an error event, a failed
// response); the first one names the generation however the stream then ends: at its end marker
// or without it, cut, cancelled or closed. That is httpitl's rule: an error event says the
// provider failed the call, which no end marker before it undoes (a server that sent a finish
// reason and then an error did not complete the call: the SDK hands the application the error),
// and the first error is the cause of any that follow. Safe to call while another goroutine closes
// the stream.
func (s *Stream) Fail(err error) {
	if err != nil {
		s.failed.CompareAndSwap(nil, &err)
	}
}

// unwatch stops Watch's callback: the stream ended first.
func (s *Stream) unwatch() {
	if stop := s.stop.Load(); stop != nil {
		(*stop)()
	}
}

// MarkFinished records that the provider said the reply is complete. Safe to call while another
// goroutine closes the stream.
func (s *Stream) MarkFinished() { s.finished.Store(true) }

// Finished reports whether MarkFinished was called.
func (s *Stream) Finished() bool { return s.finished.Load() }

// Done ends the generation when the stream reports its end, err being the stream's error: nil at a
// clean end of stream, which ends it with ErrIncomplete unless MarkFinished was called. After
// MarkFinished, it ends without error whatever err is, unless Fail was called: an error the
// provider reported (pass it to Fail first) ends it whatever err is.
func (s *Stream) Done(err error) {
	s.unwatch()
	switch {
	case err == nil:
		err = ErrIncomplete
	case cutOff(err):
		err = &TypedError{Err: err, Type: itlconv.ErrorTypeIncompleteStream}
	}
	s.end(err)
}

// cutOff reports whether err, the error the SDK ended a stream with, cut the reply off: the
// connection failing under the stream (reset, closed, the body cut short), or the SDK failing on
// what it read (an event it cannot decode, a line too long for it, go-openai's limit of keep-alive
// lines): the application got no more of the reply. httpitl names a body cut short so, and a
// Bedrock chunk the SDKs cannot decode, where the error's Go type (*net.OpError,
// *json.SyntaxError, *errors.errorString) would split the series by a detail of the library that
// read the stream. A context's end, a network timeout and an error that names its own type keep
// their names.
func cutOff(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var typed interface{ ErrorType() string }
	if errors.As(err, &typed) {
		return false
	}
	var ne net.Error
	return !errors.As(err, &ne) || !ne.Timeout()
}

// Closed ends the generation when the application closes the stream; a stream that already ended
// keeps its first End.
func (s *Stream) Closed() {
	s.unwatch()
	s.end(ErrClosedEarly)
}
