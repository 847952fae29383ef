package httpitl

import "bytes"

// The framers cut a response body into events as its bytes pass by, holding at most one event
// (bounded by the maximum event size) and never changing or keeping the bytes they are shown.
//
// emit receives an event's name (SSE only), its data, and whether the data outgrew the bound (its
// bytes were then dropped, and the data is empty).
type emitFunc func(name, data []byte, overflow bool)

type framing uint8

const (
	framingSSE         framing = iota + 1 // text/event-stream
	framingNDJSON                         // application/x-ndjson: one JSON value per line
	framingJSON                           // anything else: JSON values, and the elements of a top-level array
	framingEventStream                    // application/vnd.amazon.eventstream: binary messages (eventstream.go)
)

// framer is one of the framers, chosen once per response.
type framer struct {
	mode framing
	sse  sseParser
	nd   lineParser
	js   jsonSplitter
	es   esParser
}

// newFramer returns a framer of text events (SSE, NDJSON or JSON); newEventStreamFramer one of
// AWS event-stream messages.
func newFramer(mode framing, max int, emit emitFunc) *framer {
	f := &framer{mode: mode}
	switch mode {
	case framingSSE:
		f.sse = sseParser{max: max, emit: emit}
	case framingNDJSON:
		f.nd = lineParser{max: max, emit: emit}
	default:
		f.mode = framingJSON
		f.js = jsonSplitter{max: max, emit: emit}
	}
	return f
}

func newEventStreamFramer(max int, emit func(*esMessage)) *framer {
	return &framer{mode: framingEventStream, es: esParser{max: max, emit: emit}}
}

func (f *framer) feed(p []byte) {
	switch f.mode {
	case framingSSE:
		f.sse.feed(p)
	case framingNDJSON:
		f.nd.feed(p)
	case framingEventStream:
		f.es.feed(p)
	default:
		f.js.feed(p)
	}
}

// eof tells the framer the body ended cleanly. An SSE event not closed by a blank line is dropped,
// as the EventSource specification says; a last NDJSON line without its newline counts; an
// event-stream message cut short is dropped.
func (f *framer) eof() {
	if f.mode == framingNDJSON {
		f.nd.flush()
	}
}

// maxEventName bounds the SSE event name kept: the names the protocols use are short.
const maxEventName = 64

// sseParser follows the EventSource specification's parsing rules: one leading U+FEFF byte order
// mark is ignored; lines end in CRLF, LF or CR; a line starting with ':' is a comment;
// "field: value" drops one space after the colon; data lines are joined with LF; a blank line
// dispatches the event. Only the data and event fields are kept.
type sseParser struct {
	max  int
	emit emitFunc

	bom       int  // bytes of a leading byte order mark seen; len(bom) once past the stream's start
	lastCR    bool // the previous byte was CR: an LF right after it ends no second line
	nonEmpty  bool // the current line has bytes
	state     uint8
	field     [5]byte
	fieldN    int // bytes of field name seen; above len(field) it is none we read
	kind      uint8
	skipSpace bool

	data    []byte
	hasData bool
	over    bool
	name    []byte
}

const (
	stField  = iota // reading the field name
	stValue         // reading the value of data or event
	stIgnore        // a comment or a field we do not read: skip to the end of the line
)

const (
	kindOther = iota
	kindData
	kindEvent
)

// bom is U+FEFF in UTF-8, which a stream may start with.
const bom = "\xEF\xBB\xBF"

func (s *sseParser) feed(p []byte) {
	for s.bom < len(bom) && len(p) > 0 {
		if p[0] != bom[s.bom] {
			seen := s.bom
			s.bom = len(bom)
			s.feed([]byte(bom[:seen])) // the start of a BOM and then not: plain bytes
			break
		}
		s.bom++
		p = p[1:]
	}
	for len(p) > 0 {
		if s.lastCR {
			s.lastCR = false
			if p[0] == '\n' {
				p = p[1:]
				continue
			}
		}
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			s.content(p)
			return
		}
		s.content(p[:i])
		s.endLine()
		s.lastCR = p[i] == '\r'
		p = p[i+1:]
	}
}

func (s *sseParser) content(b []byte) {
	if len(b) == 0 {
		return
	}
	if !s.nonEmpty {
		s.nonEmpty = true
		if b[0] == ':' {
			s.state = stIgnore
		}
	}
	switch s.state {
	case stField:
		j := bytes.IndexByte(b, ':')
		name := b
		if j >= 0 {
			name = b[:j]
		}
		if s.fieldN+len(name) <= len(s.field) {
			copy(s.field[s.fieldN:], name)
		}
		s.fieldN += len(name)
		if j < 0 {
			return
		}
		s.startValue()
		if s.state != stValue {
			return
		}
		b = b[j+1:]
		fallthrough
	case stValue:
		if s.skipSpace && len(b) > 0 {
			s.skipSpace = false
			if b[0] == ' ' {
				b = b[1:]
			}
		}
		s.value(b)
	}
}

// startValue is called at the colon that ends a field name.
func (s *sseParser) startValue() {
	s.state, s.skipSpace = stValue, true
	field := ""
	if s.fieldN <= len(s.field) {
		field = string(s.field[:s.fieldN]) // no allocation: compared, not kept
	}
	switch field {
	case "data":
		s.kind = kindData
		if s.hasData && !s.over {
			s.value([]byte{'\n'}) // the line feed that joins data lines counts against the bound
		}
		s.hasData = true
	case "event":
		s.kind = kindEvent
		s.name = s.name[:0]
	default:
		s.kind, s.state = kindOther, stIgnore
	}
}

func (s *sseParser) value(b []byte) {
	switch s.kind {
	case kindData:
		if s.over {
			return
		}
		if len(s.data)+len(b) > s.max {
			s.over = true
			s.data = s.data[:0]
			return
		}
		s.data = append(s.data, b...)
	case kindEvent:
		if room := maxEventName - len(s.name); room > 0 {
			s.name = append(s.name, b[:min(room, len(b))]...)
		}
	}
}

func (s *sseParser) endLine() {
	switch {
	case !s.nonEmpty:
		s.dispatch()
	case s.state == stField:
		// A line without a colon names a field with an empty value.
		s.startValue()
	}
	s.nonEmpty, s.state, s.fieldN, s.kind, s.skipSpace = false, stField, 0, kindOther, false
}

func (s *sseParser) dispatch() {
	if s.hasData {
		s.emit(s.name, s.data, s.over)
	}
	if cap(s.data) > 64<<10 {
		s.data = nil // do not hold on to a large event's buffer
	}
	s.data, s.hasData, s.over, s.name = s.data[:0], false, false, s.name[:0]
}

// lineParser cuts NDJSON into lines, dropping a CR before the LF and blank lines.
type lineParser struct {
	max  int
	emit emitFunc
	line []byte
	over bool
	any  bool
}

func (l *lineParser) feed(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.add(p)
			return
		}
		l.add(p[:i])
		l.flush()
		p = p[i+1:]
	}
}

func (l *lineParser) add(b []byte) {
	if len(b) == 0 {
		return
	}
	l.any = true
	if l.over {
		return
	}
	if len(l.line)+len(b) > l.max {
		l.over, l.line = true, l.line[:0]
		return
	}
	l.line = append(l.line, b...)
}

func (l *lineParser) flush() {
	if line := bytes.TrimSpace(l.line); len(line) > 0 || l.over {
		l.emit(nil, line, l.over)
	}
	if cap(l.line) > 64<<10 {
		l.line = nil
	}
	l.line, l.over, l.any = l.line[:0], false, false
}

// jsonSplitter emits each complete top-level JSON object of a body and, when the top-level value is
// an array (Gemini's streamGenerateContent without alt=sse streams one), each element of it as soon
// as it is complete. Bytes outside objects and arrays (whitespace, commas, junk) are skipped.
type jsonSplitter struct {
	max  int
	emit emitFunc

	depth      int  // nesting depth, counting the top-level array
	inArray    bool // the current top-level value is an array
	collecting bool // inside a value being emitted
	inStr, esc bool
	buf        []byte
	over       bool
}

func (j *jsonSplitter) base() int {
	if j.inArray {
		return 1
	}
	return 0
}

func (j *jsonSplitter) feed(p []byte) {
	from := 0 // start of the bytes of p that belong to the value being collected
	for i := 0; i < len(p); i++ {
		c := p[i]
		if j.inStr {
			if j.esc {
				j.esc = false
				continue
			}
			k := bytes.IndexAny(p[i:], "\"\\")
			if k < 0 {
				i = len(p) - 1
				continue
			}
			i += k
			if p[i] == '\\' {
				j.esc = true
			} else {
				j.inStr = false
			}
			continue
		}
		switch c {
		case '"':
			j.inStr = true
		case '{', '[':
			if !j.collecting {
				if j.depth == 0 && c == '[' {
					j.inArray = true
					j.depth = 1
					continue
				}
				if j.depth != j.base() {
					j.depth++ // unbalanced input; keep counting
					continue
				}
				j.collecting, from = true, i
			}
			j.depth++
		case '}', ']':
			if j.depth > 0 {
				j.depth--
			}
			if j.collecting && j.depth == j.base() {
				j.add(p[from : i+1])
				j.emit(nil, j.buf, j.over)
				if cap(j.buf) > 64<<10 {
					j.buf = nil
				}
				j.buf, j.over, j.collecting = j.buf[:0], false, false
			} else if j.inArray && j.depth == 0 {
				j.inArray = false
			}
		}
	}
	if j.collecting {
		j.add(p[from:])
	}
}

func (j *jsonSplitter) add(b []byte) {
	if j.over {
		return
	}
	if len(j.buf)+len(b) > j.max {
		j.over, j.buf = true, j.buf[:0]
		return
	}
	j.buf = append(j.buf, b...)
}
