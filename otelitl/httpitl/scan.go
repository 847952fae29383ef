package httpitl

import (
	"encoding/binary"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// jsonScan reads one event's JSON in a single pass, without allocating: the protocols' readers
// (events.go) walk the members they read and skip the rest, checking the syntax of every byte as
// encoding/json does, so that an event the scanner accepts is one json.Unmarshal accepts, and the
// values it reports are the ones json.Unmarshal would store in the reference structs
// (reference.go).
//
// Member names are matched as encoding/json matches them to fields: decoded, without regard to
// case, folding the two runes that fold to ASCII letters (see fold).
//
// Reading stops at the first problem. A syntax error, or a member we read holding a value of the
// wrong type, makes the whole event unreadable (json.Unmarshal returns an error for both, and the
// event is then ignored). One case is left to encoding/json (scanFallback): a member we read that
// appears twice in its object, which json.Unmarshal merges into the first (structs field by field,
// slices element by element). Real streams do not repeat members.
type jsonScan struct {
	d     []byte
	i     int
	depth int // nesting depth at i, counting every array and object as encoding/json does
	state uint8
	name  [32]byte // the member name being read, in lower case (longer names are none we read; the longest: amazon-bedrock-invocationmetrics)
	deep  []uint64 // the kinds of skipped containers deeper than 64 levels (hostile input only)
}

const (
	scanOK       = iota
	scanBad      // not valid JSON, or a member of the wrong type: json.Unmarshal returns an error
	scanFallback // left to encoding/json: a member we read appears twice in its object
)

// maxDepth is encoding/json's nesting limit: a deeper value is a syntax error.
const maxDepth = 10000

func (s *jsonScan) reset(d []byte) {
	s.d, s.i, s.depth, s.state = d, 0, 0, scanOK
}

func (s *jsonScan) bad() bool {
	if s.state == scanOK {
		s.state = scanBad
	}
	return false
}

func (s *jsonScan) fallback() bool {
	if s.state == scanOK {
		s.state = scanFallback
	}
	return false
}

func (s *jsonScan) ws() {
	for s.i < len(s.d) {
		switch s.d[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the byte at i after whitespace: 0 at the end (and at a NUL, never valid where
// peek is asked).
func (s *jsonScan) peek() byte {
	s.ws()
	if s.i < len(s.d) {
		return s.d[s.i]
	}
	return 0
}

// top reads a whole event: whitespace, one value read by val, whitespace, and nothing else. It
// returns the scan's state.
func (s *jsonScan) top(val func(s *jsonScan) bool) uint8 {
	if val(s) {
		if s.ws(); s.i < len(s.d) {
			s.bad()
		}
	}
	return s.state
}

// lead reads the value at the start of a payload (after whitespace) by val, and nothing after it:
// the way aws-sdk-go-v2 reads an AWS event-stream message's JSON payload, whose parser stops at the
// end of the first value (bytes after it are never looked at). It returns the scan's state.
func (s *jsonScan) lead(val func(s *jsonScan) bool) uint8 {
	val(s)
	return s.state
}

// sdkObject reads the value at the start of a payload as aws-sdk-go-v2 must to decode an event
// of a type it knows (see lead): an object, syntactically whole. It reports false for anything
// else (no value, null, another type, a syntax error before the object's end), on which the SDK
// fails the stream. The SDK's parser checks the syntax encoding/json checks (its own comment: the
// same nesting limit "matches stdlib"), which the scanner checks too.
func (s *jsonScan) sdkObject() bool {
	return s.lead(func(s *jsonScan) bool {
		if s.peek() != '{' {
			return s.bad()
		}
		_, ok := s.skip()
		return ok
	}) == scanOK
}

// Classes of string bytes.
const (
	cPlain = iota // ASCII that needs no decoding
	cStop         // '"', '\\' or a control character
	cHigh         // not ASCII
)

var strClass = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c == '"' || c == '\\' || c < 0x20:
			t[c] = cStop
		case c >= utf8.RuneSelf:
			t[c] = cHigh
		}
	}
	return t
}()

// Flags of a string.
const (
	fEsc  = 1 << iota // has escapes
	fHigh             // has bytes above ASCII
	fNum              // a number literal given where a string or number is accepted (an error code)
)

// jstr is a string (or number) value: its bytes as they are in the event, quotes included, and
// whether they need decoding. The zero jstr is absent, which the readers treat like null and "".
type jstr struct {
	q []byte
	f uint8
}

// empty is true for an absent value and for "": every other string decodes to a non-empty one.
func (j jstr) empty() bool { return len(j.q) == 0 || (j.f&fNum == 0 && len(j.q) == 2) }

// plain returns the value's bytes when they are its decoded text (no escapes, valid UTF-8).
func (j jstr) plain() ([]byte, bool) {
	if j.f&fNum != 0 {
		return j.q, true
	}
	if len(j.q) < 2 {
		return nil, true
	}
	b := j.q[1 : len(j.q)-1]
	if j.f&fEsc != 0 || (j.f&fHigh != 0 && !utf8.Valid(b)) {
		return nil, false
	}
	return b, true
}

// String decodes the value as encoding/json does (escapes; invalid UTF-8 to U+FFFD).
func (j jstr) String() string {
	if b, ok := j.plain(); ok {
		return string(b)
	}
	var s string
	_ = json.Unmarshal(j.q, &s) // valid: the scanner checked it
	return s
}

// is compares the decoded value with s, without allocating for a plain value.
func (j jstr) is(s string) bool {
	if b, ok := j.plain(); ok {
		return string(b) == s
	}
	return j.String() == s
}

// str reads a string at i (which must be '"') and returns it, quotes included.
func (s *jsonScan) str() (jstr, bool) {
	d := s.d
	start := s.i
	i := start + 1
	var f uint8
	for {
		for i+8 <= len(d) && special(binary.LittleEndian.Uint64(d[i:])) == 0 {
			i += 8 // eight plain bytes at once
		}
		for i < len(d) && strClass[d[i]] == cPlain {
			i++
		}
		if i >= len(d) {
			return jstr{}, s.bad()
		}
		switch c := d[i]; {
		case c == '"':
			s.i = i + 1
			return jstr{q: d[start : i+1], f: f}, true
		case c >= utf8.RuneSelf:
			f |= fHigh
			i++
		case c == '\\':
			f |= fEsc
			if i+1 >= len(d) {
				return jstr{}, s.bad()
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(d) || !isHex(d[i+2]) || !isHex(d[i+3]) || !isHex(d[i+4]) || !isHex(d[i+5]) {
					return jstr{}, s.bad()
				}
				i += 6
			default:
				return jstr{}, s.bad()
			}
		default: // a control character
			return jstr{}, s.bad()
		}
	}
}

// special is non-zero when one of the eight bytes of x is not a plain string byte: '"', '\\', a
// control character or a byte above ASCII. (It may flag plain bytes after a special one; str then
// reads byte by byte.)
func special(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) &^ v & highs }
	return zero(x^(ones*'"')) | zero(x^(ones*'\\')) | (x-ones*0x20)&^x&highs | x&highs
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// num reads a number at i: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonScan) num() ([]byte, bool) {
	d := s.d
	start, i := s.i, s.i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	default:
		return nil, s.bad()
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || !isDigit(d[i]) {
			return nil, s.bad()
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			return nil, s.bad()
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	s.i = i
	return d[start:i], true
}

// lit reads the literal w (true, false or null) at i.
func (s *jsonScan) lit(w string) bool {
	if len(s.d)-s.i < len(w) || string(s.d[s.i:s.i+len(w)]) != w {
		return s.bad()
	}
	s.i += len(w)
	return true
}

// scalar reads a string, number or literal at i.
func (s *jsonScan) scalar(c byte) bool {
	switch c {
	case '"':
		_, ok := s.str()
		return ok
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	}
	_, ok := s.num()
	return ok
}

// skip reads past the value at i (after whitespace), checking its syntax, and returns whether it
// carries output: a non-empty string, array or object (the rule of the reference's present type).
func (s *jsonScan) skip() (carries, ok bool) {
	c := s.peek()
	switch c {
	case '{', '[':
		start := s.i
		if !s.skipContainer() {
			return false, false
		}
		// Valid JSON: the container is empty exactly when its closer follows its opener and
		// whitespace.
		j := start + 1
		for s.d[j] == ' ' || s.d[j] == '\t' || s.d[j] == '\n' || s.d[j] == '\r' {
			j++
		}
		return s.d[j] != '}' && s.d[j] != ']', true
	case '"':
		j, ok := s.str()
		return ok && len(j.q) > 2, ok
	case 0:
		return false, s.bad()
	}
	return false, s.scalar(c)
}

// skipContainer reads past the array or object at i, without recursion: the kind of each open
// container is a bit of a stack (1: object), in a word for the first 64 levels and in s.deep for
// the rest.
func (s *jsonScan) skipContainer() bool {
	base := s.depth
	var low uint64
	isObj := func(level int) bool { // level >= 0: depth - base - 1
		if level < 64 {
			return low&(1<<level) != 0
		}
		level -= 64
		return s.deep[level/64]&(1<<(level%64)) != 0
	}
	push := func(obj bool) bool {
		s.depth++
		if s.depth > maxDepth {
			return s.bad()
		}
		level := s.depth - base - 1
		var w *uint64
		if level < 64 {
			w = &low
		} else {
			level -= 64
			for len(s.deep) <= level/64 {
				s.deep = append(s.deep, 0)
			}
			w, level = &s.deep[level/64], level%64
		}
		if obj {
			*w |= 1 << level
		} else {
			*w &^= 1 << level
		}
		return true
	}
	// Each turn starts at a value (after whitespace), or right after a value when after is set.
	after := false
	for {
		if !after {
			c := s.peek()
			switch c {
			case '{':
				if !push(true) {
					return false
				}
				s.i++
				switch s.peek() {
				case '}':
					s.i++
					s.depth--
					after = true
					continue
				case '"':
					if !s.memberName() {
						return false
					}
					continue
				}
				return s.bad()
			case '[':
				if !push(false) {
					return false
				}
				s.i++
				if s.peek() == ']' {
					s.i++
					s.depth--
					after = true
				}
				continue
			case 0:
				return s.bad()
			}
			if !s.scalar(c) {
				return false
			}
			after = true
		}
		if s.depth == base {
			return true
		}
		c := s.peek()
		obj := isObj(s.depth - base - 1)
		switch {
		case c == ',' && obj:
			s.i++
			if s.peek() != '"' || !s.memberName() {
				return s.bad()
			}
			after = false
		case c == ',':
			s.i++
			after = false
		case c == '}' && obj, c == ']' && !obj:
			s.i++
			s.depth--
		default:
			return s.bad()
		}
	}
}

// memberName reads a member's name, whitespace and the colon, up to its value.
func (s *jsonScan) memberName() bool {
	if _, ok := s.str(); !ok {
		return false
	}
	if s.peek() != ':' {
		return s.bad()
	}
	s.i++
	return true
}

// object reads a member whose type is a struct or a pointer to one: an object, read member by
// member, or null, which leaves it unset. For each member, m gets its name in ASCII lower case
// (names longer than any we read come as nil) with the scan at its value, and must read the
// value. It returns whether there was an object; anything but an object or null is a type error.
func (s *jsonScan) object(m func(name []byte) bool) (obj, ok bool) {
	switch s.peek() {
	case '{':
	case 'n':
		return false, s.lit("null")
	default:
		return false, s.bad()
	}
	s.depth++
	if s.depth > maxDepth {
		return false, s.bad()
	}
	s.i++
	for first := true; ; first = false {
		c := s.peek()
		if c == '}' && first {
			s.i++
			s.depth--
			return true, true
		}
		if !first {
			switch c {
			case '}':
				s.i++
				s.depth--
				return true, true
			case ',':
				s.i++
				c = s.peek()
			default:
				return false, s.bad()
			}
		}
		if c != '"' {
			return false, s.bad()
		}
		key, ok := s.str()
		if !ok {
			return false, false
		}
		if s.peek() != ':' {
			return false, s.bad()
		}
		s.i++
		if !m(s.fold(key)) {
			return false, false
		}
	}
}

// fold returns a member name the way encoding/json matches it to a field, for our fields, whose
// names are ASCII: decoded, in lower case, with the two runes that fold to ASCII letters (U+017F
// long s, U+212A Kelvin sign) folded to them. A name that cannot match any of ours (another rune,
// or longer than any) comes back nil.
func (s *jsonScan) fold(key jstr) []byte {
	raw := key.q[1 : len(key.q)-1]
	buf := &s.name
	if key.f == 0 {
		if len(raw) > len(buf) {
			return nil
		}
		for k, c := range raw {
			if 'A' <= c && c <= 'Z' { // lower a copy
				n := copy(buf[:], raw)
				for ; k < n; k++ {
					if 'A' <= buf[k] && buf[k] <= 'Z' {
						buf[k] += 'a' - 'A'
					}
				}
				return buf[:n]
			}
		}
		return raw
	}
	n := 0
	for i := 0; i < len(raw); {
		r, size := rune(raw[i]), 1
		switch {
		case r == '\\' && raw[i+1] == 'u':
			r, size = 0, 6
			for _, h := range raw[i+2 : i+6] {
				r = r<<4 | rune(unhex(h))
			}
		case r == '\\':
			return nil // '"', '\\', '/' or a control character: in none of our names
		case r >= utf8.RuneSelf:
			r, size = utf8.DecodeRune(raw[i:])
		}
		i += size
		switch {
		case r == 0x17f:
			r = 's'
		case r == 0x212a:
			r = 'k'
		case 'A' <= r && r <= 'Z':
			r += 'a' - 'A'
		case r >= utf8.RuneSelf || r < 0x20:
			return nil // decodes to a rune of none of our names (surrogates too: to U+FFFD or above U+FFFF)
		}
		if n == len(buf) {
			return nil
		}
		buf[n] = byte(r)
		n++
	}
	return buf[:n]
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// array reads a member whose type is a slice: an array, calling e with the scan at each element
// (e must read it), or null (no elements). Anything else is a type error.
func (s *jsonScan) array(e func() bool) bool {
	switch s.peek() {
	case '[':
	case 'n':
		return s.lit("null")
	default:
		return s.bad()
	}
	s.depth++
	if s.depth > maxDepth {
		return s.bad()
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		s.depth--
		return true
	}
	for {
		if !e() {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return true
		default:
			return s.bad()
		}
	}
}

// seen marks bit in *set, and leaves the event to encoding/json when it was marked already: a
// member we read appears twice in its object.
func (s *jsonScan) seen(set *uint32, bit uint32) bool {
	if *set&bit != 0 {
		return s.fallback()
	}
	*set |= bit
	return true
}

// strValue reads a member of type string: a string, or null (which leaves it empty).
func (s *jsonScan) strValue(dst *jstr) bool {
	switch s.peek() {
	case '"':
		j, ok := s.str()
		*dst = j
		return ok
	case 'n':
		return s.lit("null")
	case 0:
		return s.bad()
	}
	return s.bad() // a number, boolean, array or object where a string belongs
}

// codeValue reads a member of the reference's code type: a string, or a number (its literal);
// null empties it; anything else leaves it empty.
func (s *jsonScan) codeValue(dst *jstr) bool {
	switch c := s.peek(); {
	case c == '"':
		j, ok := s.str()
		*dst = j
		return ok
	case c == '-' || isDigit(c):
		b, ok := s.num()
		*dst = jstr{q: b, f: fNum}
		return ok
	}
	*dst = jstr{}
	_, ok := s.skip()
	return ok
}

// count is a token count: a non-negative integer below 2^40, else unknown.
type count struct {
	n  int
	ok bool
}

func (c count) or() int {
	if c.ok {
		return c.n
	}
	return -1
}

// countValue reads a member of type count: a number written as an integer in range; anything
// else leaves it unknown (strconv.ParseInt of the value's text, as the reference does).
func (s *jsonScan) countValue(dst *count) bool {
	c := s.peek()
	if c != '-' && !isDigit(c) {
		*dst = count{}
		_, ok := s.skip()
		return ok
	}
	b, ok := s.num()
	if !ok {
		return false
	}
	*dst = parseCount(b)
	return true
}

func parseCount(b []byte) count {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	n := 0
	for _, c := range b {
		if !isDigit(c) {
			return count{} // a fraction or an exponent: ParseInt refuses it
		}
		n = n*10 + int(c-'0')
		if n >= 1<<40 {
			return count{}
		}
	}
	if neg && n != 0 {
		return count{}
	}
	return count{n: n, ok: true}
}

// boolValue reads a member of type bool: true, false, or null (false).
func (s *jsonScan) boolValue(dst *bool) bool {
	switch s.peek() {
	case 't':
		*dst = true
		return s.lit("true")
	case 'f':
		*dst = false
		return s.lit("false")
	case 'n':
		return s.lit("null")
	}
	return s.bad()
}

// present reads any value and returns whether it carries output.
func (s *jsonScan) present(dst *bool) bool {
	c, ok := s.skip()
	*dst = c
	return ok
}

// lowerASCII returns s in lower case the way strings.ToLower does, without allocating for the
// finish reasons the protocols send.
func lowerASCII(b []byte) string {
	var buf [32]byte
	if len(b) <= len(buf) {
		n := copy(buf[:], b)
		ascii := true
		for k := range n {
			c := buf[k]
			if c >= utf8.RuneSelf {
				ascii = false
				break
			}
			if 'A' <= c && c <= 'Z' {
				buf[k] = c + 'a' - 'A'
			}
		}
		if ascii {
			return intern(buf[:n])
		}
	}
	return strings.ToLower(string(b))
}

// intern returns the finish reasons the protocols send as constants, anything else as a new
// string.
func intern(b []byte) string {
	switch string(b) {
	case "stop":
		return "stop"
	case "length":
		return "length"
	case "tool_calls":
		return "tool_calls"
	case "content_filter":
		return "content_filter"
	case "function_call":
		return "function_call"
	case "end_turn":
		return "end_turn"
	case "max_tokens":
		return "max_tokens"
	case "stop_sequence":
		return "stop_sequence"
	case "tool_use":
		return "tool_use"
	case "pause_turn":
		return "pause_turn"
	case "refusal":
		return "refusal"
	case "safety":
		return "safety"
	case "recitation":
		return "recitation"
	case "other":
		return "other"
	case "load":
		return "load"
	case "guardrail_intervened":
		return "guardrail_intervened"
	case "content_filtered":
		return "content_filtered"
	}
	return string(b)
}
