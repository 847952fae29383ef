package httpitl

import (
	"bytes"
	"errors"
	"strings"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/internal/wrap"
)

// recorder is what an observer records on: a *otelitl.Generation (tests use fakes).
type recorder interface {
	Chunk(tokens int)
	SetUsage(inputTokens, outputTokens int)
	SetResponseModel(model string)
	SetResponseID(id string)
	AddFinishReason(reason string)
}

var _ recorder = (*otelitl.Generation)(nil)

// observer reads one response's events and records them on a generation. It is not safe for
// concurrent use: its owner serialises calls.
type observer struct {
	c         call
	g         recorder
	streaming bool   // count chunks (the response streams)
	onChunk   func() // records a chunk; nil means g.Chunk(1)
	fr        *framer

	opaque  bool   // the body is compressed: nothing is read, and its end is taken as complete
	ended   bool   // the protocol's end marker was seen
	broken  bool   // the event stream's framing broke: the rest of the body is not read
	errType string // an error event's type
	values  int    // events read

	id, model string // the response id and model last recorded: recorded again only when they change

	sc      jsonScan
	reasons []jstr // an event's finish reasons, recorded once the whole event has been read

	// Bedrock InvokeModelWithResponseStream (invoke.go)
	inv           []byte // a chunk's bytes, decoded
	ownIn, ownOut bool   // the model family's events gave input, output token counts
	eventBroken   bool   // broken by an event the SDK cannot decode, not by the framing
	cohereTools   bool   // a Cohere tool-calls-chunk event was a chunk (invokeCohere)

	reference bool // read every event the reference way (tests and benchmarks)
	fallbacks int  // events left to the reference reading
}

func newObserver(c call, g recorder, fr framing, streaming bool, max int) *observer {
	if g == nil {
		g = (*otelitl.Generation)(nil) // records nothing
	}
	o := &observer{c: c, g: g, streaming: streaming}
	if fr == framingEventStream {
		o.fr = newEventStreamFramer(max, o.message)
	} else {
		o.fr = newFramer(fr, max, o.event)
	}
	return o
}

func (o *observer) feed(p []byte) {
	if !o.opaque {
		o.fr.feed(p)
	}
}

func (o *observer) chunk() {
	if !o.streaming {
		return
	}
	if o.onChunk != nil {
		o.onChunk()
		return
	}
	o.g.Chunk(1)
}

func (o *observer) setID(id string) {
	if id != o.id {
		o.id = id
		o.g.SetResponseID(id)
	}
}

func (o *observer) setModel(m string) {
	if m != o.model {
		o.model = m
		o.g.SetResponseModel(m)
	}
}

// setIDValue and setModelValue record a non-empty id or model, converting it to a string only when
// it changed.
func (o *observer) setIDValue(j jstr) {
	if j.empty() {
		return
	}
	if b, ok := j.plain(); ok {
		if string(b) != o.id {
			o.setID(string(b))
		}
		return
	}
	o.setID(j.String())
}

func (o *observer) setModelValue(j jstr) {
	if j.empty() {
		return
	}
	if b, ok := j.plain(); ok {
		if string(b) != o.model {
			o.setModel(string(b))
		}
		return
	}
	o.setModel(j.String())
}

// addReason records a finish reason, lowered for Gemini.
func (o *observer) addReason(j jstr, lower bool) {
	b, ok := j.plain()
	switch {
	case lower && ok:
		o.g.AddFinishReason(lowerASCII(b))
	case lower:
		o.g.AddFinishReason(strings.ToLower(j.String()))
	case ok:
		o.g.AddFinishReason(intern(b))
	default:
		o.g.AddFinishReason(j.String())
	}
}

// failure returns the error End gets for the events read, and whether there is one: an error
// event, or a stream that ended (or whose framing broke) without its end marker.
func (o *observer) failure() error {
	if o.errType != "" {
		return &eventError{typ: o.errType}
	}
	if o.broken && !o.ended {
		if o.eventBroken {
			return errBadEvent
		}
		return errBroken
	}
	if !o.ended && !o.opaque {
		return errIncomplete
	}
	return nil
}

// decided reports whether the events read already say how the generation ends, whatever comes
// after: an error event, the end marker, or an event stream whose framing broke (nothing after it
// is read, and the SDK stops there: it closes the body, which is no caller giving up).
func (o *observer) decided() bool {
	return o.errType != "" || o.ended || o.broken
}

// eventError is an error event in a response; only its type or code is kept, never its message.
type eventError struct{ typ string }

func (e *eventError) Error() string     { return "httpitl: the response reported an error: " + e.typ }
func (e *eventError) ErrorType() string { return e.typ }

type incompleteError struct{}

func (incompleteError) Error() string {
	return "httpitl: the response ended without its protocol's end marker"
}
func (incompleteError) ErrorType() string { return itlconv.ErrorTypeIncompleteStream }

var errIncomplete error = incompleteError{}

// errBroken ends a generation whose event stream broke before its end marker: the reply was cut
// off there, for the application too.
var errBroken error = &wrap.TypedError{
	Err: errors.New("httpitl: the AWS event stream broke (a length or CRC that does not hold, " +
		"or headers that do not decode); the rest was not read"),
	Type: itlconv.ErrorTypeIncompleteStream,
}

// streamErrorType is the error.type of an error event that names no type or code.
const streamErrorType = itlconv.ErrorTypeStreamError

func (o *observer) fail(t string) {
	if o.errType == "" {
		o.errType = wrap.Code(t, streamErrorType) // a code, never free text a provider sent
	}
}

// event handles one event's data.
func (o *observer) event(name, data []byte, overflow bool) {
	o.values++
	if overflow {
		return // too large to read: its bytes went by unread
	}
	if o.c.proto == protoChat || o.c.proto == protoCompletions {
		if o.ended && o.streaming {
			// After [DONE] (a streamed reply is ended by nothing else): every SDK stops reading
			// there (openai-go, go-openai, OpenAI's Python SDK), so nothing after it, an error
			// event, a chunk or usage, reaches the application, nor the span.
			return
		}
		if string(bytes.TrimSpace(data)) == "[DONE]" {
			o.ended = true
			return
		}
	}
	if o.c.proto == protoAnthropic && len(name) == 0 && o.fr.mode == framingSSE {
		// An SSE event without an event: line: Anthropic's SDKs (Go, Python, TypeScript) pass
		// over an unnamed event, whatever its data, so the application sees nothing of it, nor
		// the span. (An unstreamed reply, one JSON message, has no name to give.)
		return
	}
	if o.reference {
		o.refEvent(name, data)
		return
	}
	o.sc.reset(data)
	o.reasons = o.reasons[:0]
	var st uint8
	switch o.c.proto {
	case protoChat, protoCompletions:
		st = o.chat()
	case protoResponses:
		st = o.responses()
	case protoAnthropic:
		st = o.anthropic()
	case protoGemini:
		st = o.gemini()
	case protoOllamaChat, protoOllamaGen:
		st = o.ollama()
	case protoBedrock:
		st = o.bedrock(name)
	case protoBedrockInvoke:
		st = o.invoke(name)
	default:
		return
	}
	clear(o.reasons) // hold no bytes of the event
	if cap(o.reasons) > 1024 {
		o.reasons = nil // nor a hostile event's list
	}
	o.sc.d = nil
	if st == scanFallback {
		o.fallbacks++
		o.refEvent(name, data)
	}
}

// message handles one message of an AWS event stream: an event is read as the protocol's event
// named by its :event-type; an exception or error message fails the generation with its
// :exception-type or :error-code, by the rule of error events' codes; a message the SDK cannot
// take (no :message-type, an unknown one, an event without :event-type) fails it with
// stream_error; a broken framing leaves the rest of the body unread.
func (o *observer) message(m *esMessage) {
	if o.broken {
		return // an event the SDK could not decode (badEvent): it stopped there
	}
	switch m.kind {
	case esEvent:
		o.event(m.typ, m.payload, m.over)
		return
	case esCorrupt:
		o.broken = true
		return
	}
	o.values++
	if o.errType != "" {
		return
	}
	t := ""
	if m.kind != esUnknown && len(m.typ) <= itlconv.MaxErrorTypeLength {
		t = string(m.typ)
	}
	o.fail(t)
}

// errorFields is the reference's apiError: the first non-empty of code, type and status names an
// error.
type errorFields struct {
	typ, code, status jstr
}

func (e *errorFields) String() string {
	for _, j := range [...]jstr{e.code, e.typ, e.status} {
		if !j.empty() {
			return j.String()
		}
	}
	return streamErrorType
}

func (s *jsonScan) errorObject(e *errorFields) (bool, bool) {
	var seen uint32
	return s.object(func(name []byte) bool {
		switch string(name) {
		case "type":
			return s.seen(&seen, 1) && s.codeValue(&e.typ)
		case "code":
			return s.seen(&seen, 2) && s.codeValue(&e.code)
		case "status":
			return s.seen(&seen, 4) && s.codeValue(&e.status)
		}
		_, ok := s.skip()
		return ok
	})
}

// OpenAI Chat Completions and Completions. A chunk is an event with a choice whose delta carries
// content, refusal, reasoning_content or reasoning (OpenAI-compatible servers), tool_calls[].
// function.arguments, function_call.arguments or audio.transcript; or, for Completions, text.
// (The reference: chatEvent.)
type chatFields struct {
	id, object, model jstr
	choices           int
	content           bool
	usage             bool
	prompt, output    count
	errKind           byte // 0: no error member (or null); 'o': an object; 'x': anything else
	err               errorFields
	typ, code         jstr // vLLM's older error event: {"object":"error","type":...,"code":...}
	// stopReason: a choice's stop_reason, when a string, is its finish reason where it has no
	// finish_reason (DeepSeek's chunks on Bedrock's InvokeModelWithResponseStream; see invoke.go).
	// Off for /chat/completions, where vLLM's stop_reason is the stop string or token id that ended
	// the choice beside its finish_reason.
	stopReason bool
}

func (o *observer) chat() uint8 {
	s := &o.sc
	var f chatFields
	if s.top(func(s *jsonScan) bool { _, ok := o.chatEvent(&f); return ok }) != scanOK {
		return s.state
	}
	if o.chatFailed(&f) {
		return scanOK
	}
	o.setIDValue(f.id)
	o.setModelValue(f.model)
	if f.usage {
		o.g.SetUsage(f.prompt.or(), f.output.or())
	}
	for _, r := range o.reasons {
		o.addReason(r, false)
	}
	if f.content {
		o.chunk()
	}
	if !o.streaming && f.choices > 0 {
		o.ended = true // a complete non-streamed reply
	}
	return scanOK
}

// chatFailed records the error an event read by chatEvent names, if any, and reports whether it
// named one.
func (o *observer) chatFailed(f *chatFields) bool {
	switch {
	case f.errKind == 'o':
		o.fail(f.err.String())
	case f.errKind == 'x':
		o.fail(streamErrorType) // an error that is not an object
	case f.object.is("error"):
		e := errorFields{typ: f.typ, code: f.code}
		o.fail(e.String())
	default:
		return false
	}
	return true
}

func (o *observer) chatEvent(f *chatFields) (bool, bool) {
	s := &o.sc
	var seen uint32
	return s.object(func(name []byte) bool {
		switch string(name) {
		case "id":
			return s.seen(&seen, 1<<0) && s.strValue(&f.id)
		case "object":
			return s.seen(&seen, 1<<1) && s.strValue(&f.object)
		case "model":
			return s.seen(&seen, 1<<2) && s.strValue(&f.model)
		case "choices":
			return s.seen(&seen, 1<<3) && s.array(func() bool {
				f.choices++
				_, ok := o.chatChoice(f)
				return ok
			})
		case "usage":
			if !s.seen(&seen, 1<<4) {
				return false
			}
			var useen uint32
			obj, ok := s.object(func(name []byte) bool {
				switch string(name) {
				case "prompt_tokens":
					return s.seen(&useen, 1) && s.countValue(&f.prompt)
				case "completion_tokens":
					return s.seen(&useen, 2) && s.countValue(&f.output)
				}
				_, ok := s.skip()
				return ok
			})
			f.usage = obj
			return ok
		case "error":
			if !s.seen(&seen, 1<<5) {
				return false
			}
			switch s.peek() {
			case '{':
				f.errKind = 'o'
				_, ok := s.errorObject(&f.err)
				return ok
			case 'n':
				return s.lit("null")
			}
			f.errKind = 'x'
			_, ok := s.skip()
			return ok
		case "type":
			return s.seen(&seen, 1<<6) && s.codeValue(&f.typ)
		case "code":
			return s.seen(&seen, 1<<7) && s.codeValue(&f.code)
		}
		_, ok := s.skip()
		return ok
	})
}

func (o *observer) chatChoice(f *chatFields) (bool, bool) {
	s := &o.sc
	var seen uint32
	var reason, stop jstr
	obj, ok := s.object(func(name []byte) bool {
		switch string(name) {
		case "text":
			var p bool
			ok := s.seen(&seen, 1<<0) && s.present(&p)
			f.content = f.content || p
			return ok
		case "delta":
			if !s.seen(&seen, 1<<1) {
				return false
			}
			_, ok := o.chatDelta(f)
			return ok
		case "finish_reason":
			return s.seen(&seen, 1<<2) && s.strValue(&reason)
		case "stop_reason":
			if f.stopReason {
				if !s.seen(&seen, 1<<3) {
					return false
				}
				if s.peek() == '"' {
					return s.strValue(&stop)
				}
				stop = jstr{} // another type (vLLM's token id): no reason
			}
		}
		_, ok := s.skip()
		return ok
	})
	if reason.empty() {
		reason = stop
	}
	if ok && !reason.empty() {
		o.reasons = append(o.reasons, reason)
	}
	return obj, ok
}

func (o *observer) chatDelta(f *chatFields) (bool, bool) {
	s := &o.sc
	var seen uint32
	// the arguments, transcript of a function_call, audio or tool_calls[].function object
	inner := func(member string, bit uint32) bool {
		var iseen uint32
		_, ok := s.object(func(name []byte) bool {
			if string(name) == member {
				var p bool
				ok := s.seen(&iseen, bit) && s.present(&p)
				f.content = f.content || p
				return ok
			}
			_, ok := s.skip()
			return ok
		})
		return ok
	}
	return s.object(func(name []byte) bool {
		var p bool
		switch string(name) {
		case "content":
			p = true
			if !s.seen(&seen, 1<<0) {
				return false
			}
		case "refusal":
			p = true
			if !s.seen(&seen, 1<<1) {
				return false
			}
		case "reasoning_content":
			p = true
			if !s.seen(&seen, 1<<2) {
				return false
			}
		case "reasoning":
			p = true
			if !s.seen(&seen, 1<<3) {
				return false
			}
		case "tool_calls":
			return s.seen(&seen, 1<<4) && s.array(func() bool {
				var tseen uint32
				_, ok := s.object(func(name []byte) bool {
					if string(name) == "function" {
						return s.seen(&tseen, 1) && inner("arguments", 1)
					}
					_, ok := s.skip()
					return ok
				})
				return ok
			})
		case "function_call":
			return s.seen(&seen, 1<<5) && inner("arguments", 1)
		case "audio":
			return s.seen(&seen, 1<<6) && inner("transcript", 1)
		}
		if p {
			ok := s.present(&p)
			f.content = f.content || p
			return ok
		}
		_, ok := s.skip()
		return ok
	})
}

// OpenAI Responses. A chunk is a response.output_text.delta, response.refusal.delta,
// response.reasoning_text.delta, response.reasoning_summary_text.delta,
// response.function_call_arguments.delta, response.custom_tool_call_input.delta,
// response.mcp_call_arguments.delta or response.audio.transcript.delta event with a non-empty
// delta. The end marker is response.completed (or response.incomplete, a reply cut by a limit).
// (The reference: responsesEvent.)
type responseFields struct {
	id, model, status jstr
	usage             bool
	in, out           count
	err               bool
	errCode           jstr
	incomplete        bool
	reason            jstr
}

// responseMember reads a member of the reference's response struct; it returns handled=false for
// other names.
func (o *observer) responseMember(name []byte, r *responseFields, seen *uint32) (handled, ok bool) {
	s := &o.sc
	switch string(name) {
	case "id":
		return true, s.seen(seen, 1<<10) && s.strValue(&r.id)
	case "model":
		return true, s.seen(seen, 1<<11) && s.strValue(&r.model)
	case "status":
		return true, s.seen(seen, 1<<12) && s.strValue(&r.status)
	case "usage":
		if !s.seen(seen, 1<<13) {
			return true, false
		}
		var useen uint32
		r.usage, ok = s.object(func(name []byte) bool {
			switch string(name) {
			case "input_tokens":
				return s.seen(&useen, 1) && s.countValue(&r.in)
			case "output_tokens":
				return s.seen(&useen, 2) && s.countValue(&r.out)
			}
			_, ok := s.skip()
			return ok
		})
		return true, ok
	case "error":
		if !s.seen(seen, 1<<14) {
			return true, false
		}
		var eseen uint32
		r.err, ok = s.object(func(name []byte) bool {
			if string(name) == "code" {
				return s.seen(&eseen, 1) && s.codeValue(&r.errCode)
			}
			_, ok := s.skip()
			return ok
		})
		return true, ok
	case "incomplete_details":
		if !s.seen(seen, 1<<15) {
			return true, false
		}
		var iseen uint32
		r.incomplete, ok = s.object(func(name []byte) bool {
			if string(name) == "reason" {
				return s.seen(&iseen, 1) && s.strValue(&r.reason)
			}
			_, ok := s.skip()
			return ok
		})
		return true, ok
	}
	return false, true
}

func (o *observer) record(r *responseFields) {
	o.setIDValue(r.id)
	o.setModelValue(r.model)
	if r.usage {
		o.g.SetUsage(r.in.or(), r.out.or())
	}
}

func (o *observer) finishResponse(r *responseFields, status []byte) {
	o.record(r)
	switch string(status) {
	case "completed":
		o.g.AddFinishReason("stop")
		o.ended = true
	case "incomplete":
		reason := "length"
		if r.incomplete && !r.reason.empty() && !r.reason.is("max_output_tokens") {
			reason = r.reason.String()
		}
		o.g.AddFinishReason(reason)
		o.ended = true
	case "failed", "cancelled":
		t := "response_" + string(status)
		if r.err && !r.errCode.empty() {
			t = wrap.Code(r.errCode.String(), t) // a code that is no code names no failure
		}
		o.fail(t)
	}
}

// statusOf returns a response's status for the switch of finishResponse: its text when plain,
// else decoded.
func statusOf(j jstr) []byte {
	if b, ok := j.plain(); ok {
		return b
	}
	return []byte(j.String())
}

func (o *observer) responses() uint8 {
	s := &o.sc
	var (
		typ, object, code jstr
		delta             bool
		top, resp         responseFields
		errKind           byte // the top-level error member, as chatFields.errKind
		errf              errorFields
	)
	st := s.top(func(s *jsonScan) bool {
		var seen uint32
		_, ok := s.object(func(name []byte) bool {
			switch string(name) {
			case "type":
				return s.seen(&seen, 1<<0) && s.strValue(&typ)
			case "delta":
				return s.seen(&seen, 1<<1) && s.present(&delta)
			case "code":
				return s.seen(&seen, 1<<2) && s.codeValue(&code)
			case "object":
				return s.seen(&seen, 1<<3) && s.strValue(&object)
			case "error":
				// An error event's, or a non-streamed reply's error (whose code alone names a failed
				// response).
				if !s.seen(&seen, 1<<14) {
					return false
				}
				switch s.peek() {
				case '{':
					errKind = 'o'
					_, ok := s.errorObject(&errf)
					top.err, top.errCode = true, errf.code
					return ok
				case 'n':
					return s.lit("null")
				}
				errKind = 'x'
				_, ok := s.skip()
				return ok
			case "response":
				if !s.seen(&seen, 1<<4) {
					return false
				}
				var rseen uint32
				_, ok := s.object(func(name []byte) bool {
					if handled, ok := o.responseMember(name, &resp, &rseen); handled {
						return ok
					}
					_, ok := s.skip()
					return ok
				})
				return ok
			}
			if handled, ok := o.responseMember(name, &top, &seen); handled {
				return ok
			}
			_, ok := s.skip()
			return ok
		})
		return ok
	})
	if st != scanOK {
		return st
	}
	t, ok := typ.plain()
	if !ok {
		t = []byte(typ.String())
	}
	switch string(t) {
	case "response.output_text.delta", "response.refusal.delta", "response.reasoning_text.delta",
		"response.reasoning_summary_text.delta", "response.function_call_arguments.delta",
		"response.custom_tool_call_input.delta", "response.mcp_call_arguments.delta",
		"response.audio.transcript.delta":
		if delta {
			o.chunk()
		}
	case "response.created", "response.in_progress", "response.queued":
		o.record(&resp)
	case "response.completed", "response.incomplete", "response.failed":
		status := statusOf(resp.status)
		if resp.status.empty() {
			status = t[len("response."):]
		}
		o.finishResponse(&resp, status)
	case "error":
		// Its code; OpenAI sends it nested, in an error object named as a Chat Completions error.
		t := streamErrorType
		if !code.empty() {
			t = code.String()
		} else if errKind == 'o' {
			t = errf.String()
		}
		o.fail(t)
	case "":
		switch {
		case object.is("response"): // a non-streamed reply
			o.finishResponse(&top, statusOf(top.status))
		case errKind == 'o': // {"error": {...}}, named as in a Chat Completions stream
			o.fail(errf.String())
		case errKind == 'x':
			o.fail(streamErrorType) // an error that is not an object
		}
	}
	return scanOK
}

// Anthropic Messages. A chunk is a content_block_delta whose delta carries text (text_delta),
// thinking (thinking_delta) or partial_json (input_json_delta); signature and citation deltas,
// pings, message_start and the block starts and stops are not. The end marker is message_stop.
// (The reference: anthropicEvent.)
type usageFields struct {
	set     bool
	in, out count
}

func (s *jsonScan) anthropicUsage(u *usageFields) bool {
	var seen uint32
	var ok bool
	u.set, ok = s.object(func(name []byte) bool {
		switch string(name) {
		case "input_tokens":
			return s.seen(&seen, 1) && s.countValue(&u.in)
		case "output_tokens":
			return s.seen(&seen, 2) && s.countValue(&u.out)
		}
		_, ok := s.skip()
		return ok
	})
	return ok
}

func (o *observer) anthropicUsage(u *usageFields) {
	if u.set {
		o.ownUsage(u.in.or(), u.out.or())
	}
}

func (o *observer) anthropic() uint8 {
	s := &o.sc
	var (
		typ, id, model, stopReason jstr
		msgID, msgModel            jstr
		msgUsage, usage            usageFields
		content                    bool
		deltaStop                  jstr
		errSet                     bool
		err                        errorFields
	)
	st := s.top(func(s *jsonScan) bool {
		var seen uint32
		_, ok := s.object(func(name []byte) bool {
			switch string(name) {
			case "type":
				return s.seen(&seen, 1<<0) && s.strValue(&typ)
			case "id":
				return s.seen(&seen, 1<<1) && s.strValue(&id)
			case "model":
				return s.seen(&seen, 1<<2) && s.strValue(&model)
			case "message":
				if !s.seen(&seen, 1<<3) {
					return false
				}
				var mseen uint32
				_, ok := s.object(func(name []byte) bool {
					switch string(name) {
					case "id":
						return s.seen(&mseen, 1) && s.strValue(&msgID)
					case "model":
						return s.seen(&mseen, 2) && s.strValue(&msgModel)
					case "usage":
						return s.seen(&mseen, 4) && s.anthropicUsage(&msgUsage)
					}
					_, ok := s.skip()
					return ok
				})
				return ok
			case "delta":
				if !s.seen(&seen, 1<<4) {
					return false
				}
				var dseen uint32
				_, ok := s.object(func(name []byte) bool {
					var bit uint32
					switch string(name) {
					case "text":
						bit = 1
					case "thinking":
						bit = 2
					case "partial_json":
						bit = 4
					case "stop_reason":
						return s.seen(&dseen, 8) && s.strValue(&deltaStop)
					default:
						_, ok := s.skip()
						return ok
					}
					var p bool
					ok := s.seen(&dseen, bit) && s.present(&p)
					content = content || p
					return ok
				})
				return ok
			case "stop_reason":
				return s.seen(&seen, 1<<5) && s.strValue(&stopReason)
			case "usage":
				return s.seen(&seen, 1<<6) && s.anthropicUsage(&usage)
			case "error":
				if !s.seen(&seen, 1<<7) {
					return false
				}
				var ok bool
				errSet, ok = s.errorObject(&err)
				return ok
			}
			_, ok := s.skip()
			return ok
		})
		return ok
	})
	if st != scanOK {
		return st
	}
	t, ok := typ.plain()
	if !ok {
		t = []byte(typ.String())
	}
	switch string(t) {
	case "content_block_delta":
		if content {
			o.chunk()
		}
	case "message_start":
		o.setIDValue(msgID)
		o.setModelValue(msgModel)
		// Input tokens only: message_start's output count is a placeholder (1) until message_delta
		// gives the real one, and a stream that fails or is closed before then would keep it.
		if msgUsage.set {
			o.ownUsage(msgUsage.in.or(), -1)
		}
	case "message_delta":
		if !deltaStop.empty() {
			o.addReason(deltaStop, false)
		}
		o.anthropicUsage(&usage)
	case "message_stop":
		o.ended = true
	case "error":
		t := streamErrorType
		if errSet && !err.typ.empty() {
			t = err.typ.String()
		}
		o.fail(t)
	case "message": // a non-streamed reply
		o.setIDValue(id)
		o.setModelValue(model)
		if !stopReason.empty() {
			o.addReason(stopReason, false)
		}
		o.anthropicUsage(&usage)
		o.ended = true
	}
	return scanOK
}

// Gemini. A chunk is a GenerateContentResponse with a candidate part that carries text (thoughts
// included), a functionCall, executableCode, codeExecutionResult or inlineData. The end marker is a
// candidate with a finishReason (or a promptFeedback.blockReason). (The reference: geminiEvent.)
func (o *observer) gemini() uint8 {
	s := &o.sc
	var (
		content                      bool
		blockReason                  jstr
		usage                        bool
		prompt, candidates, thoughts count
		modelVersion, responseID     jstr
		errSet                       bool
		err                          errorFields
	)
	st := s.top(func(s *jsonScan) bool {
		var seen uint32
		_, ok := s.object(func(name []byte) bool {
			switch string(name) {
			case "candidates":
				return s.seen(&seen, 1<<0) && s.array(func() bool {
					var cseen uint32
					var reason jstr
					_, ok := s.object(func(name []byte) bool {
						switch string(name) {
						case "content":
							if !s.seen(&cseen, 1) {
								return false
							}
							var pseen uint32
							_, ok := s.object(func(name []byte) bool {
								if string(name) != "parts" {
									_, ok := s.skip()
									return ok
								}
								return s.seen(&pseen, 1) && s.array(func() bool {
									var seen uint32
									_, ok := s.object(func(name []byte) bool {
										var bit uint32
										switch string(name) {
										case "text":
											bit = 1
										case "functioncall":
											bit = 2
										case "executablecode":
											bit = 4
										case "codeexecutionresult":
											bit = 8
										case "inlinedata":
											bit = 16
										default:
											_, ok := s.skip()
											return ok
										}
										var p bool
										ok := s.seen(&seen, bit) && s.present(&p)
										content = content || p
										return ok
									})
									return ok
								})
							})
							return ok
						case "finishreason":
							return s.seen(&cseen, 2) && s.strValue(&reason)
						}
						_, ok := s.skip()
						return ok
					})
					if ok && !reason.empty() && !reason.is("FINISH_REASON_UNSPECIFIED") {
						o.reasons = append(o.reasons, reason)
					}
					return ok
				})
			case "promptfeedback":
				if !s.seen(&seen, 1<<1) {
					return false
				}
				var pseen uint32
				_, ok := s.object(func(name []byte) bool {
					if string(name) == "blockreason" {
						return s.seen(&pseen, 1) && s.strValue(&blockReason)
					}
					_, ok := s.skip()
					return ok
				})
				return ok
			case "usagemetadata":
				if !s.seen(&seen, 1<<2) {
					return false
				}
				var useen uint32
				var ok bool
				usage, ok = s.object(func(name []byte) bool {
					switch string(name) {
					case "prompttokencount":
						return s.seen(&useen, 1) && s.countValue(&prompt)
					case "candidatestokencount":
						return s.seen(&useen, 2) && s.countValue(&candidates)
					case "thoughtstokencount":
						return s.seen(&useen, 4) && s.countValue(&thoughts)
					}
					_, ok := s.skip()
					return ok
				})
				return ok
			case "modelversion":
				return s.seen(&seen, 1<<3) && s.strValue(&modelVersion)
			case "responseid":
				return s.seen(&seen, 1<<4) && s.strValue(&responseID)
			case "error":
				if !s.seen(&seen, 1<<5) {
					return false
				}
				var ok bool
				errSet, ok = s.errorObject(&err)
				return ok
			}
			_, ok := s.skip()
			return ok
		})
		return ok
	})
	if st != scanOK {
		return st
	}
	if errSet {
		o.fail(err.String())
		return scanOK
	}
	o.setIDValue(responseID)
	o.setModelValue(modelVersion)
	if usage {
		out := candidates.or()
		if out >= 0 && thoughts.ok {
			out += thoughts.n
		}
		o.g.SetUsage(prompt.or(), out)
	}
	for _, r := range o.reasons {
		o.addReason(r, true)
		o.ended = true
	}
	if !blockReason.empty() {
		o.addReason(blockReason, true)
		o.ended = true
	}
	if content {
		o.chunk()
	}
	return scanOK
}

// Ollama. A chunk is a line whose message carries content, thinking or tool_calls (/api/chat), or
// that carries response or thinking (/api/generate). The end marker is "done": true. (The
// reference: ollamaEvent.)
func (o *observer) ollama() uint8 {
	s := &o.sc
	var (
		model, doneReason jstr
		content, done     bool
		prompt, eval      count
		errSet            bool
	)
	st := s.top(func(s *jsonScan) bool {
		var seen uint32
		_, ok := s.object(func(name []byte) bool {
			var bit uint32
			switch string(name) {
			case "model":
				return s.seen(&seen, 1<<0) && s.strValue(&model)
			case "message":
				if !s.seen(&seen, 1<<1) {
					return false
				}
				var mseen uint32
				_, ok := s.object(func(name []byte) bool {
					var bit uint32
					switch string(name) {
					case "content":
						bit = 1
					case "thinking":
						bit = 2
					case "tool_calls":
						bit = 4
					default:
						_, ok := s.skip()
						return ok
					}
					var p bool
					ok := s.seen(&mseen, bit) && s.present(&p)
					content = content || p
					return ok
				})
				return ok
			case "response":
				bit = 1 << 2
			case "thinking":
				bit = 1 << 3
			case "done":
				return s.seen(&seen, 1<<4) && s.boolValue(&done)
			case "done_reason":
				return s.seen(&seen, 1<<5) && s.strValue(&doneReason)
			case "prompt_eval_count":
				return s.seen(&seen, 1<<6) && s.countValue(&prompt)
			case "eval_count":
				return s.seen(&seen, 1<<7) && s.countValue(&eval)
			case "error":
				if !s.seen(&seen, 1<<8) {
					return false
				}
				switch s.peek() {
				case '"':
					errSet = true
					_, ok := s.str()
					return ok
				case 'n':
					return s.lit("null")
				}
				return s.bad() // not a string
			default:
				_, ok := s.skip()
				return ok
			}
			var p bool
			ok := s.seen(&seen, bit) && s.present(&p)
			content = content || p
			return ok
		})
		return ok
	})
	if st != scanOK {
		return st
	}
	if errSet {
		o.fail(streamErrorType)
		return scanOK
	}
	o.setModelValue(model)
	if content {
		o.chunk()
	}
	if done {
		if !doneReason.empty() {
			o.addReason(doneReason, false)
		}
		if prompt.ok || eval.ok {
			o.g.SetUsage(prompt.or(), eval.or())
		}
		o.ended = true
	}
	return scanOK
}

// converseEvent reports whether aws-sdk-go-v2 decodes a ConverseStream event of this :event-type
// (bedrockruntime's ConverseStreamOutput union); it passes one of another type on unread, as an
// UnknownUnionMember.
func converseEvent(name []byte) bool {
	switch string(name) {
	case "messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata":
		return true
	}
	return false
}

// errBadEvent ends a generation at a Bedrock event the SDK cannot decode (a payload that is not
// the JSON object its type needs, or an InvokeModelWithResponseStream chunk that is not
// {"bytes": "<base64>"}): aws-sdk-go-v2 (and anthropic-sdk-go's bedrock package, for a chunk) end
// the stream there with an error, so nothing after it reaches the application, nor the span. To
// the application the reply was cut off there, as by a broken framing (errBroken).
var errBadEvent error = &wrap.TypedError{
	Err: errors.New("httpitl: a Bedrock event the SDK cannot decode (a payload that is no JSON object, " +
		`or a chunk that is not {"bytes": "<base64>"}) ended the stream; the rest was not read`),
	Type: itlconv.ErrorTypeIncompleteStream,
}

// badEvent notes an event the SDK cannot decode: the stream ends there for the application.
func (o *observer) badEvent() {
	o.broken, o.eventBroken = true, true
}

// Amazon Bedrock ConverseStream: each event's type is its :event-type header, its JSON the
// message's payload, read as aws-sdk-go-v2 reads it: a known type's payload that is no JSON object
// ends the stream (badEvent), and bytes after the object are not read (sdkObject, lead). A chunk is a contentBlockDelta whose delta carries text, toolUse.input or
// reasoningContent.text; citation, image, toolResult, and reasoning signature or redactedContent
// deltas are not. The end marker is messageStop, with its stopReason; usage comes in the metadata
// event after it. (The reference: refBedrock.) Amazon Nova's InvokeModelWithResponseStream chunks
// nest the same events' objects under their names, read by the same functions (invoke.go).
func (o *observer) bedrock(name []byte) uint8 {
	s := &o.sc
	if converseEvent(name) {
		if !s.sdkObject() {
			o.badEvent()
			return scanOK
		}
		s.reset(s.d)
	}
	switch string(name) {
	case "contentBlockDelta":
		var content bool
		st := s.lead(func(s *jsonScan) bool { _, ok := s.converseDelta(&content); return ok })
		if st != scanOK {
			return st
		}
		if content {
			o.chunk()
		}
	case "messageStop":
		var reason jstr
		st := s.lead(func(s *jsonScan) bool { _, ok := s.converseStop(&reason); return ok })
		if st != scanOK {
			return st
		}
		if !reason.empty() {
			o.addReason(reason, false)
		}
		o.ended = true
	case "metadata":
		var (
			usage   bool
			in, out count
		)
		st := s.lead(func(s *jsonScan) bool { _, ok := s.converseMetadata(&usage, &in, &out); return ok })
		if st != scanOK {
			return st
		}
		if usage {
			o.g.SetUsage(in.or(), out.or())
		}
	}
	return scanOK
}

// converseDelta reads a contentBlockDelta event's object: content is set when its delta carries
// text, toolUse.input or reasoningContent.text.
func (s *jsonScan) converseDelta(content *bool) (bool, bool) {
	// the input of toolUse, the text of reasoningContent
	inner := func(member string) bool {
		var seen uint32
		_, ok := s.object(func(name []byte) bool {
			if string(name) == member {
				var p bool
				ok := s.seen(&seen, 1) && s.present(&p)
				*content = *content || p
				return ok
			}
			_, ok := s.skip()
			return ok
		})
		return ok
	}
	var seen uint32
	return s.object(func(name []byte) bool {
		if string(name) != "delta" {
			_, ok := s.skip()
			return ok
		}
		if !s.seen(&seen, 1) {
			return false
		}
		var dseen uint32
		_, ok := s.object(func(name []byte) bool {
			switch string(name) {
			case "text":
				var p bool
				ok := s.seen(&dseen, 1) && s.present(&p)
				*content = *content || p
				return ok
			case "tooluse":
				return s.seen(&dseen, 2) && inner("input")
			case "reasoningcontent":
				return s.seen(&dseen, 4) && inner("text")
			}
			_, ok := s.skip()
			return ok
		})
		return ok
	})
}

// converseStop reads a messageStop event's object: its stopReason.
func (s *jsonScan) converseStop(reason *jstr) (bool, bool) {
	var seen uint32
	return s.object(func(name []byte) bool {
		if string(name) == "stopreason" {
			return s.seen(&seen, 1) && s.strValue(reason)
		}
		_, ok := s.skip()
		return ok
	})
}

// converseMetadata reads a metadata event's object: usage is set when it has a usage object, with
// its inputTokens and outputTokens.
func (s *jsonScan) converseMetadata(usage *bool, in, out *count) (bool, bool) {
	var seen uint32
	return s.object(func(name []byte) bool {
		if string(name) != "usage" {
			_, ok := s.skip()
			return ok
		}
		if !s.seen(&seen, 1) {
			return false
		}
		var useen uint32
		var ok bool
		*usage, ok = s.object(func(name []byte) bool {
			switch string(name) {
			case "inputtokens":
				return s.seen(&useen, 1) && s.countValue(in)
			case "outputtokens":
				return s.seen(&useen, 2) && s.countValue(out)
			}
			_, ok := s.skip()
			return ok
		})
		return ok
	})
}
