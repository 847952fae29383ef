package httpitl

import (
	"encoding/binary"
	"hash/crc32"
)

// The AWS event stream (application/vnd.amazon.eventstream), in which Amazon Bedrock streams its
// replies: binary messages, one after another, each
//
//	total length    uint32, big-endian: the whole message, these 4 bytes and the message CRC included
//	headers length  uint32
//	prelude CRC     uint32: CRC-32 (IEEE) of the 8 bytes before it
//	headers         each: name length (uint8), name, value type (uint8), value
//	payload         total length - headers length - 16 bytes
//	message CRC     uint32: CRC-32 of every byte before it, from the total length on
//
// Both CRCs are checked, as the SDKs check them: a message whose CRC does not hold never reaches
// the application (aws-sdk-go-v2 ends the stream there with an error), so it must not reach the
// span either, and a prelude whose CRC does not hold gives lengths that cannot be trusted, after
// which no message boundary can be found again. The CRC is computed as the bytes pass, with
// hash/crc32's IEEE table (hardware-accelerated where the CPU has an instruction for it); it needs
// no byte held.

const (
	esPreludeLen = 12 // total length, headers length, prelude CRC
	esOverhead   = 16 // the prelude and the message CRC
)

// Kinds of event-stream messages, by their :message-type header.
const (
	esEvent     = iota + 1 // "event": :event-type names it
	esException            // "exception": :exception-type names it
	esError                // "error": :error-code names it
	esUnknown              // no :message-type, another, or an event without :event-type: the SDK fails
	esCorrupt              // the framing broke (see esParser): nothing after it is read
)

// esMessage is one message of an event stream, as the parser emits it. typ and payload are the
// parser's bytes, valid during the emit call only.
type esMessage struct {
	kind    uint8
	typ     []byte // :event-type, :exception-type or :error-code, when a string header; else nil
	payload []byte
	over    bool // headers and payload outgrew the bound: the message passed unread (esEvent, no typ)
}

// esParser cuts an AWS event stream into messages as its bytes pass. It holds at most one message's
// headers and payload, bounded by max: a larger message passes unread, its CRC still checked. The
// framing breaks at a prelude whose CRC does not hold or whose lengths are impossible (a total
// below 16 bytes, headers longer than the rest), at a message whose CRC does not hold, and at
// headers that do not decode (a value type outside 0 to 9, a header cut short): the parser then
// emits esCorrupt once and reads nothing more of the body, since no boundary after it can be
// trusted. The SDK stops there too.
type esParser struct {
	max  int
	emit func(*esMessage)

	state uint8
	head  [esPreludeLen]byte // the prelude being read, then the message CRC
	n     int                // bytes of head read
	hlen  uint32             // the message's headers length
	left  uint32             // bytes of headers and payload still to come
	crc   uint32             // CRC-32 of the message so far
	over  bool
	buf   []byte // the message's headers and payload so far, unless over
	msg   esMessage
}

const (
	esStPrelude = iota
	esStBody
	esStCRC
	esStDead
)

func (e *esParser) feed(p []byte) {
	for len(p) > 0 {
		switch e.state {
		case esStPrelude:
			k := copy(e.head[e.n:], p)
			e.n += k
			p = p[k:]
			if e.n == esPreludeLen {
				e.n = 0
				e.prelude()
			}
		case esStBody:
			k := len(p)
			if uint64(k) > uint64(e.left) {
				k = int(e.left)
			}
			e.crc = crc32.Update(e.crc, crc32.IEEETable, p[:k])
			if !e.over {
				e.buf = append(e.buf, p[:k]...)
			}
			e.left -= uint32(k)
			p = p[k:]
			if e.left == 0 {
				e.state = esStCRC
			}
		case esStCRC:
			k := copy(e.head[e.n:4], p)
			e.n += k
			p = p[k:]
			if e.n == 4 {
				e.n = 0
				e.end()
			}
		default: // esStDead
			return
		}
	}
}

// prelude checks the prelude in head and starts the message it announces.
func (e *esParser) prelude() {
	total := binary.BigEndian.Uint32(e.head[0:4])
	hlen := binary.BigEndian.Uint32(e.head[4:8])
	if crc32.ChecksumIEEE(e.head[:8]) != binary.BigEndian.Uint32(e.head[8:12]) ||
		total < esOverhead || hlen > total-esOverhead {
		e.corrupt()
		return
	}
	e.crc = crc32.Update(0, crc32.IEEETable, e.head[:esPreludeLen])
	e.hlen, e.left = hlen, total-esOverhead
	e.over = uint64(e.left) > uint64(e.max)
	e.buf = e.buf[:0]
	e.state = esStBody
	if e.left == 0 {
		e.state = esStCRC
	}
}

// end checks the message CRC in head and emits the message.
func (e *esParser) end() {
	if binary.BigEndian.Uint32(e.head[:4]) != e.crc {
		e.corrupt()
		return
	}
	e.state = esStPrelude
	if e.over {
		e.msg = esMessage{kind: esEvent, over: true}
	} else if !e.headers(e.buf[:e.hlen]) {
		e.corrupt()
		return
	} else {
		e.msg.payload = e.buf[e.hlen:]
	}
	e.emit(&e.msg)
	e.msg = esMessage{} // hold no bytes of the message
	if cap(e.buf) > 64<<10 {
		e.buf = nil // nor a large message's buffer
	}
}

func (e *esParser) corrupt() {
	e.state, e.buf = esStDead, nil
	e.msg = esMessage{kind: esCorrupt}
	e.emit(&e.msg)
	e.msg = esMessage{}
}

// esValueLen is the length of a header value of each fixed-size type (0 to 5, 8, 9); -1 for the
// types whose value has a uint16 length first (6: bytes, 7: string).
var esValueLen = [10]int{0, 0, 1, 2, 4, 8, -1, -1, 8, 16}

// esHeader is a header we read: set when present, str when its value is a string.
type esHeader struct {
	v        []byte
	set, str bool
}

// headers decodes h, the headers of a message, into e.msg's kind and type. It returns false for
// headers that do not decode. As in the SDK, a header given twice takes its last value.
func (e *esParser) headers(h []byte) bool {
	var msgType, evType, excType, errCode esHeader
	for len(h) > 0 {
		nl := int(h[0])
		if len(h) < 1+nl+1 {
			return false
		}
		name, typ := h[1:1+nl], h[1+nl]
		h = h[2+nl:]
		if int(typ) >= len(esValueLen) {
			return false
		}
		var v []byte
		if n := esValueLen[typ]; n >= 0 {
			if len(h) < n {
				return false
			}
			v, h = h[:n], h[n:]
		} else {
			if len(h) < 2 {
				return false
			}
			n := int(binary.BigEndian.Uint16(h))
			if len(h) < 2+n {
				return false
			}
			v, h = h[2:2+n], h[2+n:]
		}
		hd := esHeader{v: v, set: true, str: typ == 7}
		switch string(name) {
		case ":message-type":
			msgType = hd
		case ":event-type":
			evType = hd
		case ":exception-type":
			excType = hd
		case ":error-code":
			errCode = hd
		}
	}
	str := func(h esHeader) []byte {
		if h.str {
			return h.v
		}
		return nil
	}
	e.msg = esMessage{kind: esUnknown}
	if !msgType.str {
		return true
	}
	switch string(msgType.v) {
	case "event":
		if evType.set {
			e.msg = esMessage{kind: esEvent, typ: str(evType)}
		}
	case "exception":
		e.msg = esMessage{kind: esException, typ: str(excType)}
	case "error":
		e.msg = esMessage{kind: esError, typ: str(errCode)}
	}
	return true
}
