package httpitl

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"

	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/otelitl/itl/otelitl"
)

// requestFields are what is read from a request body: the model and whether a stream was asked
// for. Nothing else of the body (the prompt) is kept.
type requestFields struct {
	model     string
	stream    bool
	hasStream bool
}

// maxModelBytes bounds the "model" member's JSON text that is kept and decoded; a longer value
// names no model.
const maxModelBytes = 1024

// The states of reqScan.
const (
	rqStart     = iota // before the object's '{'
	rqKey              // before a member's key, or the object's '}'
	rqKeyStr           // in a member's key
	rqColon            // after a key, before ':'
	rqValue            // before a member's value
	rqStr              // in a member's string value
	rqNested           // in a member's object or array value, depth > 0
	rqNestedStr        // in a string inside it
	rqLit              // in a literal or number
	rqAfter            // after a value: ',' or '}'
	rqDone             // the object ended, or the body is no JSON object: nothing more is read
)

// Which member's value is being read.
const (
	memberOther = iota
	memberModel
	memberStream
)

// reqScan reads the top-level "model" and "stream" members of a JSON object fed to it in pieces of
// any size (Write), as a body passes, holding no more of it than the model's value (at most
// maxModelBytes): so that a model written after a prompt of any length is found, in any body,
// without holding the body. Other members are skipped without being decoded; the text inside
// strings, most of a long prompt (and all of an image's base64), is skipped by searching for the
// next quote. A later member of the same name replaces an earlier one, as encoding/json has it;
// what follows an error in the JSON is not read.
type reqScan struct {
	f      requestFields
	state  uint8
	member uint8
	esc    bool // in a string, the byte before was a backslash
	over   bool // the value kept outgrew its bound
	depth  int
	key    [64]byte // the key so far; a longer key is neither member, even escaped
	keyN   int
	val    []byte // the model's or stream's JSON text so far
	onFind func(requestFields) bool
}

// scanRequest reads the top-level "model" and "stream" members of the JSON object at the start of
// b, which may be cut short.
func scanRequest(b []byte) requestFields {
	var s reqScan
	_, _ = s.Write(b)
	return s.f
}

// Write reads p; it never fails, so that io.Copy reads a whole body.
func (s *reqScan) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && s.state != rqDone {
		switch s.state {
		case rqKeyStr, rqStr, rqNestedStr:
			p = s.inString(p)
			continue
		}
		c := p[0]
		p = p[1:]
		if s.state != rqLit && (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			continue
		}
		switch s.state {
		case rqStart:
			s.expect(c == '{', rqKey)
		case rqKey: // '}' ends the object; anything but a key's quote stops the reading alike
			s.expect(c == '"', rqKeyStr)
			s.keyN = 0
		case rqColon:
			s.expect(c == ':', rqValue)
		case rqValue:
			s.value(c)
		case rqNested:
			switch c {
			case '"':
				s.state = rqNestedStr
			case '{', '[':
				s.depth++
			case '}', ']':
				if s.depth--; s.depth == 0 {
					s.state = rqAfter
				}
			}
		case rqLit:
			switch c {
			case ' ', '\t', '\n', '\r':
				s.literalEnd()
				s.state = rqAfter
			case ',':
				s.literalEnd()
				s.state = rqKey
			case '}':
				s.literalEnd()
				s.state = rqDone
			default:
				s.keep(c)
			}
		case rqAfter:
			switch c {
			case ',':
				s.state = rqKey
			default: // '}' ends the object; anything else breaks it
				s.state = rqDone
			}
		}
	}
	return n, nil
}

// expect moves to next when ok, and stops reading otherwise.
func (s *reqScan) expect(ok bool, next uint8) {
	if ok {
		s.state = next
	} else {
		s.state = rqDone
	}
}

// value starts a member's value at its first byte c.
func (s *reqScan) value(c byte) {
	s.val, s.over = s.val[:0], false
	switch {
	case c == '"':
		s.state = rqStr
		if s.member == memberModel {
			s.keep(c)
		}
	case c == '{' || c == '[':
		s.state, s.depth = rqNested, 1
	default:
		s.state = rqLit
		s.keep(c)
	}
}

// keep adds c to the value kept for a model or stream member, up to its bound.
func (s *reqScan) keep(c byte) {
	if s.member == memberOther || s.over {
		return
	}
	if len(s.val) >= maxModelBytes {
		s.over = true
		return
	}
	s.val = append(s.val, c)
}

func (s *reqScan) keepAll(b []byte) {
	if s.member == memberOther || s.over || len(b) == 0 {
		return
	}
	if len(s.val)+len(b) > maxModelBytes {
		s.over = true
		return
	}
	s.val = append(s.val, b...)
}

// inString reads p from inside a string up to its closing quote, and returns what follows it.
// Each byte is searched once for a quote and once for a backslash, both searches vectorised (a
// search for either byte is not): the quote first, then the escapes before it, so that a string
// of a million escapes costs no more than a million bytes.
func (s *reqScan) inString(p []byte) []byte {
	if s.esc { // the escaped byte, cut from its backslash by the last piece
		s.esc = false
		s.take(p[:1])
		p = p[1:]
	}
	for len(p) > 0 {
		q := bytes.IndexByte(p, '"')
		seg := p
		if q >= 0 {
			seg = p[:q]
		}
		// Skip the escapes before the quote; one may escape the quote itself.
		i := 0
		for {
			b := bytes.IndexByte(seg[i:], '\\')
			if b < 0 {
				break
			}
			i += b + 2 // the backslash and the byte it escapes
			if i > len(seg) {
				break
			}
		}
		switch {
		case i > len(p): // the piece ends with a backslash
			s.take(p)
			s.esc = true
			return nil
		case i > len(seg): // the quote is escaped: search on after it
			s.take(p[:i])
			p = p[i:]
			continue
		}
		s.take(seg)
		if q < 0 {
			return nil
		}
		s.closeString()
		return p[q+1:]
	}
	return p
}

// take adds string bytes to the key or the value being kept.
func (s *reqScan) take(b []byte) {
	switch s.state {
	case rqKeyStr:
		if s.keyN+len(b) <= len(s.key) {
			copy(s.key[s.keyN:], b)
		}
		s.keyN += len(b)
	case rqStr:
		s.keepAll(b)
	}
}

// closeString ends the string being read.
func (s *reqScan) closeString() {
	switch s.state {
	case rqKeyStr:
		s.state, s.member = rqColon, memberOther
		if s.keyN <= len(s.key) {
			key := s.key[:s.keyN]
			if bytes.IndexByte(key, '\\') >= 0 { // "mod\u0065l" is "model" to a server
				var k string
				if json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &k) != nil {
					return
				}
				key = []byte(k)
			}
			switch string(key) {
			case "model":
				s.member = memberModel
			case "stream":
				s.member = memberStream
			}
		}
	case rqStr:
		s.state = rqAfter
		if s.member == memberModel && !s.over {
			var m string
			if json.Unmarshal(append(s.val, '"'), &m) == nil {
				s.f.model = m
				s.found()
			}
		}
	case rqNestedStr:
		s.state = rqNested
	}
}

// literalEnd reads a literal or number value that just ended.
func (s *reqScan) literalEnd() {
	if s.member != memberStream || s.over {
		return
	}
	switch string(s.val) {
	case "true":
		s.f.stream, s.f.hasStream = true, true
		s.found()
	case "false":
		s.f.stream, s.f.hasStream = false, true
		s.found()
	}
}

// found hands what was found to onFind, when set: a scan of the part of a body read after the
// generation started, which stops once onFind has all it needs (see lateFields).
func (s *reqScan) found() {
	if s.onFind != nil && s.onFind(s.f) {
		s.state = rqDone
	}
}

// lateFields gives a generation what is found in the part of a request body read after the
// generation started (see peekRequest): the first model, when the generation started without one
// (its name and metrics then carry it), and the first "stream" member, when the part read before
// said nothing of it. The generation started with the protocol's default (a stream for Ollama's
// /api/chat and /api/generate, none for the OpenAI and Anthropic APIs); a "stream" found later that
// says otherwise sets gen_ai.request.stream to what the body says: true, or false where the
// default was a stream (a span attribute cannot be removed, and false says "not streamed" as its
// absence does; the collector reads it so). Gemini's and Bedrock's URLs say whether they stream,
// and their bodies' "stream" is never used (applyFields). Its methods are safe for concurrent use:
// the body is read by the base transport's goroutines (or the inner handler), the generation
// started by RoundTrip (or ServeHTTP).
type lateFields struct {
	mu        sync.Mutex
	g         *otelitl.Generation
	span      trace.Span
	started   bool // start has run: g, span and the fields below are set
	model     string
	stream    bool // the first "stream" found, when hasStream
	hasStream bool
	// Set by start: whether the body's "stream" counts for the protocol, and what the span
	// started with (the protocol's default: the part read before said nothing of it).
	bodyStream, defStream bool
}

// found takes the fields found so far, and says whether nothing more is wanted.
func (l *lateFields) found(f requestFields) bool {
	l.mu.Lock()
	newModel := l.model == "" && f.model != ""
	if newModel {
		l.model = f.model
	}
	newStream := !l.hasStream && f.hasStream
	if newStream {
		l.stream, l.hasStream = f.stream, true
	}
	g, span := l.g, l.span
	setStream := newStream && l.started && l.bodyStream && l.stream != l.defStream
	done := l.model != "" && f.hasStream
	l.mu.Unlock()
	if newModel {
		g.SetRequestModel(f.model) // a nil g does nothing
	}
	if setStream && span != nil {
		span.SetAttributes(semconv.GenAIRequestStream(f.stream))
	}
	return done
}

// start gives l the generation the request started, and what was found before it, if anything.
// c is the call the generation started for: its protocol, and its stream flag, the protocol's
// default.
func (l *lateFields) start(g *otelitl.Generation, span trace.Span, c call) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.g, l.span, l.started = g, span, true
	l.bodyStream, l.defStream = bodySaysStream(c), c.stream
	model, setStream := l.model, l.hasStream && l.bodyStream && l.stream != l.defStream
	stream := l.stream
	l.mu.Unlock()
	g.SetRequestModel(model) // "" does nothing
	if setStream && span != nil {
		span.SetAttributes(semconv.GenAIRequestStream(stream))
	}
}

// peekRequest reads the fields of req's body and returns the request to send: the body's first
// limit bytes are read and replayed ahead of the rest, with ContentLength unchanged and GetBody set
// when that was the whole body (else the request's own). When they hold no model and the body
// goes on, the rest is read as it is sent: a model found there goes to the generation through the
// lateFields returned (nil otherwise), which the caller gives the generation it starts; so does a
// "stream" member there, when none came before (see lateFields).
//
// GetBody is never called, though it would give a copy to read without holding it: anthropic-sdk-go's
// bedrock package makes a GetBody that rewinds and returns the very reader Body reads, so that
// reading its "copy" empties the body sent (net/http then fails the request: "ContentLength=134
// with Body length 0"), and any SDK may do the same.
func peekRequest(req *http.Request, limit int) (*http.Request, requestFields, *lateFields) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, requestFields{}, nil
	}
	buf := make([]byte, 0, min(limit, max(int(req.ContentLength), 512)))
	var err error
	for len(buf) < limit && err == nil {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		var n int
		n, err = req.Body.Read(buf[len(buf):min(cap(buf), limit)])
		buf = buf[:len(buf)+n]
	}
	s := new(reqScan)
	_, _ = s.Write(buf)
	r2 := new(http.Request)
	*r2 = *req
	var late *lateFields
	switch {
	case err == io.EOF:
		r2.Body = &replayBody{Reader: bytes.NewReader(buf), closer: req.Body}
		r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf)), nil }
	case err != nil:
		// The body failed: the transport must see the same failure after the bytes read.
		r2.Body = &replayBody{Reader: io.MultiReader(bytes.NewReader(buf), errReader{err}), closer: req.Body}
	default:
		rest := io.Reader(req.Body)
		if (s.f.model == "" || !s.f.hasStream) && s.state != rqDone {
			late = &lateFields{model: s.f.model}
			s.onFind = late.found
			rest = io.TeeReader(req.Body, s)
		}
		r2.Body = &replayBody{Reader: io.MultiReader(bytes.NewReader(buf), rest), closer: req.Body}
	}
	return r2, s.f, late
}

type replayBody struct {
	io.Reader
	closer io.Closer
}

func (b *replayBody) Close() error { return b.closer.Close() }

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
