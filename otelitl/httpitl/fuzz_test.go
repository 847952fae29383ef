package httpitl

import (
	"io"
	"testing"
)

// FuzzStream feeds arbitrary bytes, cut at an arbitrary point, through every framing and every
// protocol's observer: nothing panics, no event passes the bound, the events do not depend on
// where the input was cut, and the body returns the input unchanged.
//
//	go test -fuzz FuzzStream ./httpitl
func FuzzStream(f *testing.F) {
	for _, s := range []string{
		"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1}}\r\n\r\ndata: [DONE]\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"x\"}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n",
		"data: {\"type\":\"response.output_text.delta\",\"delta\":\"x\"}\n\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":1}}}\n\n",
		"[{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":3}}]",
		"{\"message\":{\"content\":\"a\"},\"done\":false}\n{\"done\":true,\"eval_count\":-1,\"prompt_eval_count\":1e99}\n{\"error\":\"x\"}",
		": ping\r\rdata\r\n\x00\xff{[\"\\",
	} {
		f.Add([]byte(s), uint16(3), uint8(16))
	}
	f.Fuzz(func(t *testing.T, in []byte, cut uint16, max uint8) {
		limit := int(max) + 1
		at := int(cut) % (len(in) + 1)
		for _, p := range []protocol{protoChat, protoCompletions, protoResponses, protoAnthropic, protoGemini, protoOllamaChat, protoOllamaGen} {
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
				o := newObserver(call{proto: p}, nil, fr, true, limit)
				for _, e := range whole {
					o.event([]byte(e.name), []byte(e.data), e.over)
				}
				_ = o.failure()
				if len(o.errType) > 128 {
					t.Fatalf("error.type of %d bytes", len(o.errType))
				}
				bd := &body{rc: io.NopCloser(&cutReader{in, at}), stop: func() bool { return true }, ctx: t.Context(), o: newObserver(call{proto: p}, nil, fr, true, limit)}
				got, err := io.ReadAll(bd)
				if err != nil || string(got) != string(in) {
					t.Fatalf("the body changed the bytes")
				}
			}
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
