package httpitl

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// FuzzStream feeds arbitrary bytes, cut at an arbitrary point, through every framing and every
// protocol's observer: nothing panics, no event passes the bound, the events do not depend on
// where the input was cut, the scanner records what the encoding/json reading records for the
// whole stream, and the body returns the input unchanged.
//
//	go test -run '^$' -fuzz '^FuzzStream$' -fuzzminimizetime 5s ./httpitl
//
// -fuzzminimizetime: the fuzzer minimizes every input that finds new coverage, for up to 60 s by
// default, and reports no executions meanwhile; with both workers of a 2-core machine minimizing,
// a long run seems to stop for up to a minute at a time.
func FuzzStream(f *testing.F) {
	for _, s := range []string{
		"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1}}\r\n\r\ndata: [DONE]\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"x\"}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n",
		"data: {\"type\":\"response.output_text.delta\",\"delta\":\"x\"}\n\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":1}}}\n\n",
		"[{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":3}}]",
		"{\"message\":{\"content\":\"a\"},\"done\":false}\n{\"done\":true,\"eval_count\":-1,\"prompt_eval_count\":1e99}\n{\"error\":\"x\"}",
		": ping\r\rdata\r\n\x00\xff{[\"\\",
		"data: {\"id\":\"a\",\"model\":\"m\",\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: {\"id\":\"b\",\"ID\":\"a\",\"model\":\"m\"}\n\ndata: {\"id\":\"a\",\"model\":\"\\u006d\"}\n\n",
	} {
		f.Add([]byte(s), uint16(3), uint8(16))
	}
	f.Fuzz(func(t *testing.T, in []byte, cut uint16, max uint8) {
		limit := int(max) + 1
		at := int(cut) % (len(in) + 1)
		for _, fr := range []framing{framingSSE, framingNDJSON, framingJSON} {
			var whole, split []ev
			record := func(dst *[]ev) emitFunc {
				return func(name, data []byte, over bool) {
					if len(data) > limit || len(name) > maxEventName {
						t.Fatalf("an event of %d bytes (name %d) passed the bound of %d", len(data), len(name), limit)
					}
					*dst = append(*dst, ev{string(name), string(data), over})
				}
			}
			a := newFramer(fr, limit, record(&whole))
			a.feed(in)
			a.eof()
			b := newFramer(fr, limit, record(&split))
			b.feed(in[:at])
			b.feed(in[at:])
			b.eof()
			if !eq(whole, split) {
				t.Fatalf("framing %d: cut at %d changed the events:\n%v\n%v", fr, at, whole, split)
			}
			for _, p := range allProtos {
				var out [2]outcome
				for k, reference := range []bool{false, true} {
					r := newRec()
					o := newObserver(call{proto: p}, r, fr, true, limit)
					o.reference = reference
					for _, e := range whole {
						o.event([]byte(e.name), []byte(e.data), e.over)
					}
					_ = o.failure()
					if len(o.errType) > 128 {
						t.Fatalf("error.type of %d bytes", len(o.errType))
					}
					out[k] = outcome{r, o.ended, o.errType, o.values}
				}
				if !out[0].equal(out[1]) {
					t.Fatalf("framing %d protocol %d: %q\nscanner:   %v\nreference: %v", fr, p, in, out[0], out[1])
				}
			}
			p := allProtos[int(cut)%len(allProtos)]
			bd := &body{rc: io.NopCloser(&cutReader{in, at}), stop: func() bool { return true }, ctx: t.Context(), o: newObserver(call{proto: p}, nil, fr, true, limit)}
			got, err := io.ReadAll(bd)
			if err != nil || string(got) != string(in) {
				t.Fatalf("the body changed the bytes")
			}
		}
	})
}

// FuzzEvent reads arbitrary data as one event of every protocol, streamed and not, with the
// scanner and the encoding/json reading: they record the same, and the scanner accepts exactly
// the JSON encoding/json accepts. The seeds are the corpus of real events and the hostile ones.
//
//	go test -run '^$' -fuzz '^FuzzEvent$' -fuzzminimizetime 5s ./httpitl
func FuzzEvent(f *testing.F) {
	for _, evs := range loadCorpus(f) {
		for _, e := range evs {
			f.Add([]byte(e.data))
		}
	}
	for _, h := range hostile {
		f.Add([]byte(h))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgrees(t, data)
		if got, want := validJSON(data), json.Valid(data); got != want {
			t.Fatalf("valid(%q) = %t, encoding/json says %t", data, got, want)
		}
	})
}

// cutReader returns its input in two reads, cut at at.
type cutReader struct {
	b  []byte
	at int
}

func (r *cutReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := len(r.b)
	if r.at > 0 {
		n = min(n, r.at)
	}
	n = min(n, len(p))
	copy(p, r.b[:n])
	r.b = r.b[n:]
	r.at -= n
	return n, nil
}

// esKinds are the messages FuzzEventStream encodes, chosen by a part's first byte.
var esKinds = []func(payload string) []byte{
	func(p string) []byte { return esEv("contentBlockDelta", p) },
	func(p string) []byte { return esEv("messageStop", p) },
	func(p string) []byte { return esEv("metadata", p) },
	func(p string) []byte { return esEv("messageStart", p) },
	func(p string) []byte { return esExc("throttlingException", p) },
	func(p string) []byte { return esExc(p, "") },
	func(p string) []byte {
		return esEncode("", esStr(":message-type", "error"), esStr(":error-code", p))
	},
	func(p string) []byte { return esEncode(p, esStr(":message-type", p)) },
	func(p string) []byte { return []byte(p) }, // raw bytes between messages
	// InvokeModelWithResponseStream: a chunk whose bytes are p, and one whose payload is p
	func(p string) []byte {
		return esEv("chunk", `{"bytes":"`+base64.StdEncoding.EncodeToString([]byte(p))+`"}`)
	},
	func(p string) []byte { return esEv("chunk", p) },
}

// FuzzEventStream feeds an AWS event stream through the event-stream framer and a Bedrock
// observer (ConverseStream's and InvokeModelWithResponseStream's): nothing panics, no payload passes the bound, the messages do not depend on how the
// input was cut (at one point, or a byte at a time), the scanner records what the encoding/json
// reading records, and the body returns the input unchanged. With encode set, the input is a list
// of parts cut at 0xFE bytes, each encoded as a message whose kind its first byte chooses (valid
// CRCs, so that the fuzzer reaches the events' JSON); else it is the stream itself (mostly broken
// framing).
//
//	go test -run '^$' -fuzz '^FuzzEventStream$' -fuzzminimizetime 5s ./httpitl
func FuzzEventStream(f *testing.F) {
	f.Add(cat(bStart, bText, bTool, bThink, bSignature, bStop, bMeta), false, uint16(40), uint8(200))
	f.Add(cat(bStart, bText, flip(bText, 9), bStop), false, uint16(90), uint8(255))
	f.Add(cat(bText, esExc("modelStreamErrorException", `{"message":"m"}`)), false, uint16(7), uint8(255))
	f.Add(cat(esEv("contentBlockDelta", strings.Repeat("x", 300)), bText, bStop)[:400], false, uint16(300), uint8(100))
	f.Add([]byte("\x00{\"delta\":{\"text\":\"x\"}}\xfe\x01{\"stopReason\":\"end_turn\"}\xfe\x02{\"usage\":{\"inputTokens\":3,\"outputTokens\":4}}"), true, uint16(5), uint8(255))
	f.Add([]byte("\x00{\"delta\":{\"toolUse\":{\"input\":\"{}\"}}}\xfe\x04{}\xfe\x05Too many\xfe\x06InternalFailure\xfe\x07event\xfe\x08\x00\x00"), true, uint16(20), uint8(64))
	f.Add(chunks(invClaude...), false, uint16(200), uint8(255))
	f.Add(cat(chunk(invLlama[0]), esEv("chunk", `{"bytes":"@@"}`), chunk(invLlama[2])), false, uint16(50), uint8(200))
	f.Add([]byte("\x09{\"generation\":\"x\",\"prompt_token_count\":3}\xfe\x0a{\"bytes\":\"!\"}\xfe\x09{\"outputs\":[{\"text\":\"y\",\"stop_reason\":\"stop\"}],\"amazon-bedrock-invocationMetrics\":{\"inputTokenCount\":4}}"), true, uint16(9), uint8(255))
	f.Add(chunks(invGptOss...), false, uint16(300), uint8(255))
	f.Add(cat(chunks(invDeepSeek...), chunks(invCohereTools...)), false, uint16(120), uint8(255))
	f.Add([]byte("\x09{\"choices\":[{\"text\":\"x\",\"stop_reason\":7}]}\xfe\x09{\"event_type\":\"tool-calls-chunk\",\"tool_call_delta\":{\"parameters\":\"{}\"}}\xfe\x09{\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":2}}"), true, uint16(9), uint8(255))
	f.Add(cat(chunks(invCohereTools[0], invCohereTools[6], invCohereTools[6], invCohereTools[2], invCohereTools[3], invCohereTools[6], invCohereTools[7])), false, uint16(80), uint8(255))
	f.Add(cat(bText, esEv("contentBlockDelta", ` {"delta":{"text":"x"}} {`), esEv("messageStop", `null`), bStop), false, uint16(30), uint8(255))
	f.Add(cat(bText, esEv("metadata", `[`), esEv("chunk", `{"bytes":"eyJnZW5lcmF0aW9uIjoieCJ9"}x`), esEv("chunk", ``), bStop), false, uint16(30), uint8(255))
	f.Add(cat(chunk(invJamba[1]), chunk(`{"error":{"code":"model_error","message":"m"}}`), chunk(`{"error":"x"}`), chunk(`{"error":null}`)), false, uint16(60), uint8(255))
	f.Fuzz(func(t *testing.T, in []byte, encode bool, cut uint16, max uint8) {
		limit := int(max) + 1
		if encode {
			var stream []byte
			for _, part := range bytes.Split(in, []byte{0xfe}) {
				if len(part) > 0 {
					stream = append(stream, esKinds[int(part[0])%len(esKinds)](string(part[1:]))...)
				}
			}
			in = stream
		}
		at := int(cut) % (len(in) + 1)
		whole := esFrames(t, limit, in)
		if split := esFrames(t, limit, in, at); !esEq(whole, split) {
			t.Fatalf("cut at %d changed the messages:\n%v\n%v", at, whole, split)
		}
		var each []int
		for i := 1; i < len(in); i++ {
			each = append(each, i)
		}
		if one := esFrames(t, limit, in, each...); !esEq(whole, one) {
			t.Fatalf("a byte at a time changed the messages:\n%v\n%v", whole, one)
		}
		for k, m := range whole {
			if m.kind == esCorrupt && k != len(whole)-1 {
				t.Fatalf("a message after the framing broke: %v", whole)
			}
		}
		for _, p := range []protocol{protoBedrock, protoBedrockInvoke} {
			var out [2]outcome
			var decided [2]bool
			for k, reference := range []bool{false, true} {
				r := newRec()
				o := newObserver(call{proto: p}, r, framingEventStream, true, limit)
				o.reference = reference
				o.feed(in[:at])
				o.feed(in[at:])
				o.fr.eof()
				_ = o.failure()
				if len(o.errType) > 64 {
					t.Fatalf("error.type of %d bytes", len(o.errType))
				}
				if cap(o.inv) > limit {
					t.Fatalf("a decoding buffer of %d bytes for a bound of %d", cap(o.inv), limit)
				}
				out[k], decided[k] = outcome{r, o.ended, o.errType, o.values}, o.decided()
			}
			if !out[0].equal(out[1]) || decided[0] != decided[1] {
				t.Fatalf("protocol %d: %q\nscanner:   %v\nreference: %v", p, in, out[0], out[1])
			}
			bd := &body{rc: io.NopCloser(&cutReader{in, at}), stop: func() bool { return true }, ctx: t.Context(),
				o: newObserver(call{proto: p}, nil, framingEventStream, true, limit)}
			got, err := io.ReadAll(bd)
			if err != nil || !bytes.Equal(got, in) {
				t.Fatalf("the body changed the bytes")
			}
		}
	})
}
