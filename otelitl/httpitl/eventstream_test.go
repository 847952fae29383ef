package httpitl

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"
)

// An AWS event-stream encoder for the tests, written from the format (eventstream.go), so that
// httpitl's module needs no AWS SDK. otelitl/test/httpitl drives the real SDK, whose encoder
// writes the frames there.

type esHdr struct {
	name string
	typ  byte // 0 to 9
	val  []byte
}

func esStr(name, v string) esHdr { return esHdr{name, 7, []byte(v)} }

// esEncode encodes one message: its headers in order, then the payload, with both CRCs.
func esEncode(payload string, hs ...esHdr) []byte {
	var h []byte
	for _, hd := range hs {
		h = append(h, byte(len(hd.name)))
		h = append(h, hd.name...)
		h = append(h, hd.typ)
		if hd.typ == 6 || hd.typ == 7 {
			h = binary.BigEndian.AppendUint16(h, uint16(len(hd.val)))
		}
		h = append(h, hd.val...)
	}
	return esRaw(uint32(esOverhead+len(h)+len(payload)), uint32(len(h)), h, []byte(payload))
}

// esRaw writes a message with the given lengths in its prelude, whatever its parts' sizes.
func esRaw(total, hlen uint32, headers, payload []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, total)
	b = binary.BigEndian.AppendUint32(b, hlen)
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	b = append(b, headers...)
	b = append(b, payload...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// esEv encodes an event as Bedrock writes it.
func esEv(eventType, payload string) []byte {
	return esEncode(payload, esStr(":event-type", eventType), esStr(":content-type", "application/json"), esStr(":message-type", "event"))
}

// esExc encodes an exception as Bedrock writes it.
func esExc(exceptionType, payload string) []byte {
	return esEncode(payload, esStr(":exception-type", exceptionType), esStr(":content-type", "application/json"), esStr(":message-type", "exception"))
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// A ConverseStream reply as Bedrock sends it: each payload carries a "p" member of padding.
const pad = `,"p":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"`

var (
	bStart     = esEv("messageStart", `{"role":"assistant"`+pad+`}`)
	bBlock     = esEv("contentBlockStart", `{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"t1","name":"f"}}`+pad+`}`)
	bText      = esEv("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hello"}`+pad+`}`)
	bEmpty     = esEv("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":""}`+pad+`}`)
	bTool      = esEv("contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"city\":"}}`+pad+`}`)
	bThink     = esEv("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"Let me see"}}`+pad+`}`)
	bSignature = esEv("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"signature":"c2ln"}}`+pad+`}`)
	bCitation  = esEv("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"citation":{"title":"t"}}`+pad+`}`)
	bBlockStop = esEv("contentBlockStop", `{"contentBlockIndex":0`+pad+`}`)
	bStop      = esEv("messageStop", `{"stopReason":"end_turn"`+pad+`}`)
	bMeta      = esEv("metadata", `{"usage":{"inputTokens":25,"outputTokens":12,"totalTokens":37},"metrics":{"latencyMs":412}`+pad+`}`)
)

type esGot struct {
	kind          uint8
	typ, payload  string
	over, typeNil bool
}

// esFrames feeds input to a new event-stream framer in pieces cut at the given positions and
// returns the messages.
func esFrames(t testing.TB, max int, input []byte, cuts ...int) []esGot {
	var got []esGot
	f := newEventStreamFramer(max, func(m *esMessage) {
		if len(m.payload) > max {
			t.Fatalf("a payload of %d bytes passed the bound of %d", len(m.payload), max)
		}
		got = append(got, esGot{m.kind, string(m.typ), string(m.payload), m.over, m.typ == nil})
	})
	prev := 0
	for _, c := range cuts {
		f.feed(input[prev:c])
		prev = c
	}
	f.feed(input[prev:])
	f.eof()
	return got
}

func esEq(a, b []esGot) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkESSplits checks that the messages are the same whole, split at every byte boundary, split
// at every pair of boundaries (short inputs) and fed one byte at a time.
func checkESSplits(t *testing.T, max int, input []byte, want []esGot) {
	t.Helper()
	if got := esFrames(t, max, input); !esEq(got, want) {
		t.Fatalf("whole:\n got %v\nwant %v", got, want)
	}
	for i := 1; i < len(input); i++ {
		if got := esFrames(t, max, input, i); !esEq(got, want) {
			t.Fatalf("split at %d:\n got %v\nwant %v", i, got, want)
		}
		if len(input) <= 160 {
			for j := i + 1; j < len(input); j++ {
				if got := esFrames(t, max, input, i, j); !esEq(got, want) {
					t.Fatalf("split at %d and %d:\n got %v\nwant %v", i, j, got, want)
				}
			}
		}
	}
	var cuts []int
	for i := 1; i < len(input); i++ {
		cuts = append(cuts, i)
	}
	if got := esFrames(t, max, input, cuts...); !esEq(got, want) {
		t.Fatalf("byte by byte:\n got %v\nwant %v", got, want)
	}
}

func esEvt(typ, payload string) esGot { return esGot{kind: esEvent, typ: typ, payload: payload} }

func payloadOf(frame []byte) string {
	hlen := binary.BigEndian.Uint32(frame[4:8])
	return string(frame[esPreludeLen+hlen : len(frame)-4])
}

func TestEventStreamFrames(t *testing.T) {
	stream := cat(bStart, bText, bTool, bStop, bMeta)
	checkESSplits(t, 1<<20, stream, []esGot{
		esEvt("messageStart", payloadOf(bStart)), esEvt("contentBlockDelta", payloadOf(bText)),
		esEvt("contentBlockDelta", payloadOf(bTool)), esEvt("messageStop", payloadOf(bStop)), esEvt("metadata", payloadOf(bMeta)),
	})

	all := []esHdr{ // every value type, before the headers we read
		{"t", 0, nil}, {"f", 1, nil}, {"b", 2, []byte{0xff}}, {"s", 3, []byte{1, 2}}, {"i", 4, []byte{1, 2, 3, 4}},
		{"l", 5, make([]byte, 8)}, {"y", 6, []byte("\x00\xff")}, {"ts", 8, make([]byte, 8)}, {"u", 9, make([]byte, 16)},
		{":event-type", 6, []byte("messageStart")}, // bytes, not a string: a later header takes its place
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want []esGot
	}{
		{"every value type", esEncode(`{}`, append(all, esStr(":event-type", "metadata"), esStr(":message-type", "event"))...),
			[]esGot{esEvt("metadata", `{}`)}},
		{"the last of a repeated header", esEncode(`{}`, esStr(":message-type", "exception"), esStr(":event-type", "messageStop"), esStr(":message-type", "event")),
			[]esGot{esEvt("messageStop", `{}`)}},
		{"event type not a string", esEncode(`{}`, esStr(":message-type", "event"), esHdr{":event-type", 4, []byte{0, 0, 0, 1}}),
			[]esGot{{kind: esEvent, payload: `{}`, typeNil: true}}},
		{"event without type", esEncode(`{}`, esStr(":message-type", "event")), []esGot{{kind: esUnknown, payload: `{}`, typeNil: true}}},
		{"no message type", esEncode(`{}`, esStr(":event-type", "messageStop")), []esGot{{kind: esUnknown, payload: `{}`, typeNil: true}}},
		{"message type not a string", esEncode(`{}`, esHdr{":message-type", 6, []byte("event")}, esStr(":event-type", "messageStop")),
			[]esGot{{kind: esUnknown, payload: `{}`, typeNil: true}}},
		{"other message type", esEncode(`{}`, esStr(":message-type", "ping"), esStr(":event-type", "messageStop")),
			[]esGot{{kind: esUnknown, payload: `{}`, typeNil: true}}},
		{"no headers, no payload", esEncode(""), []esGot{{kind: esUnknown, typeNil: true}}},
		{"exception", esExc("throttlingException", `{"message":"slow down"}`),
			[]esGot{{kind: esException, typ: "throttlingException", payload: `{"message":"slow down"}`}}},
		{"exception without type", esEncode(`{}`, esStr(":message-type", "exception")), []esGot{{kind: esException, payload: `{}`, typeNil: true}}},
		{"error", esEncode("", esStr(":message-type", "error"), esStr(":error-code", "InternalFailure"), esStr(":error-message", "m")),
			[]esGot{{kind: esError, typ: "InternalFailure"}}},
		{"empty type", esEncode(`{}`, esStr(":message-type", "event"), esStr(":event-type", "")), []esGot{esEvt("", `{}`)}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkESSplits(t, 1<<20, tc.in, tc.want) })
	}
}

func TestEventStreamBounded(t *testing.T) {
	huge := esEv("contentBlockDelta", `{"delta":{"text":"`+strings.Repeat("x", 300)+`"}}`)
	small := esEv("messageStop", `{}`)
	limit := len(huge) - esOverhead - 1 // one byte short of the huge message's headers and payload
	checkESSplits(t, limit, cat(small, huge, small), []esGot{
		esEvt("messageStop", `{}`), {kind: esEvent, over: true, typeNil: true}, esEvt("messageStop", `{}`),
	})
	// A message exactly at the bound is read.
	checkESSplits(t, limit+1, cat(huge, small), []esGot{esEvt("contentBlockDelta", payloadOf(huge)), esEvt("messageStop", `{}`)})

	// A 16 MiB message passes unread in 64 KiB pieces without the parser growing.
	var p esParser
	p.max = 4096
	n := 0
	p.emit = func(m *esMessage) {
		n++
		if !m.over {
			t.Errorf("the huge message was read")
		}
	}
	big := esEv("contentBlockDelta", strings.Repeat("y", 16<<20))
	for len(big) > 0 {
		k := min(len(big), 64<<10)
		p.feed(big[:k])
		big = big[k:]
		if cap(p.buf) > 2*p.max {
			t.Fatalf("the parser holds %d bytes for a bound of %d", cap(p.buf), p.max)
		}
	}
	if n != 1 || p.state != esStPrelude {
		t.Fatalf("%d messages, state %d", n, p.state)
	}
}

// flip returns b with the bit of byte i flipped.
func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 1
	return c
}

func TestEventStreamCorrupt(t *testing.T) {
	first, next := esEv("messageStart", `{}`), esEv("messageStop", `{}`)
	hdr := func(h []byte) []byte { return esRaw(uint32(esOverhead+len(h)), uint32(len(h)), h, nil) }
	huge := esEv("contentBlockDelta", strings.Repeat("z", 500))
	for _, tc := range []struct {
		name string
		bad  []byte
	}{
		{"prelude CRC", flip(next, 9)},
		{"total length, prelude CRC not matching", flip(next, 3)},
		{"total length below 16", esRaw(15, 0, nil, nil)},
		{"total length 0", esRaw(0, 0, nil, nil)},
		{"headers longer than the message", esRaw(20, 5, nil, []byte("abcd"))},
		{"headers length past the total, wrapping", esRaw(16, 0xffffffff, nil, nil)},
		{"message CRC", flip(next, len(next)-1)},
		{"a payload byte", flip(next, len(next)-6)},
		{"a header byte", flip(next, esPreludeLen+3)},
		{"value type 10", hdr([]byte("\x01a\x0a"))},
		{"value type 255", hdr([]byte("\x01a\xff"))},
		{"name cut short", hdr([]byte("\x05ab"))},
		{"no value type", hdr([]byte("\x01a"))},
		{"fixed value cut short", hdr([]byte("\x01a\x04\x00\x00"))},
		{"string length cut short", hdr([]byte("\x01a\x07\x00"))},
		{"string cut short", hdr([]byte("\x01a\x07\x00\x05abc"))},
		{"uuid cut short", hdr([]byte("\x01a\x09" + strings.Repeat("u", 15)))},
		{"message CRC of a message too large to read", flip(huge, len(huge)-2)},
		{"a byte of a message too large to read", flip(huge, 300)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Nothing after the break is read, not even a valid message.
			checkESSplits(t, 256, cat(first, tc.bad, next, first), []esGot{esEvt("messageStart", `{}`), {kind: esCorrupt, typeNil: true}})
		})
	}
	// A broken stream does not hold the message it was reading.
	var p esParser
	p.max, p.emit = 1<<20, func(*esMessage) {}
	large := esEv("messageStart", strings.Repeat("x", 100<<10))
	p.feed(large[:len(large)-1000])
	p.feed(flip(large, len(large)-1)[len(large)-1000:])
	if p.state != esStDead || p.buf != nil {
		t.Fatalf("state %d, %d bytes held", p.state, cap(p.buf))
	}
}
