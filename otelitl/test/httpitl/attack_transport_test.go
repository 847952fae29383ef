package httpitl_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

// splitStream is a Chat Completions stream that uses what the EventSource format allows: a
// comment, id and retry fields, CRLF, CR-only and LF line ends, data: with and without its space,
// an event name, data over two lines, and content with multi-byte UTF-8 (2, 3 and 4 bytes a rune).
// It carries 4 chunks, a finish reason and usage.
const splitStream = ": keep-alive\r\n" +
	"id: 1\r\nretry: 100\r\n" +
	`data:{"id":"c1","model":"m-é","choices":[{"index":0,"delta":{"role":"assistant"}}]}` + "\r\n\r\n" +
	`data: {"choices":[{"index":0,"delta":{"content":"hé"}}]}` + "\r\r" +
	"event: message\n" + `data: {"choices":[{"index":0,"delta":{"content":"日本"}}]}` + "\n\n" +
	`data: {"choices":[{"index":0,` + "\r\n" + `data: "delta":{"content":"😀"}}]}` + "\r\n\n" +
	`data: {"choices":[{"index":0,"delta":{"content":"x"}}]}` + "\n\r\n" +
	`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}` + "\n\n" +
	"data: [DONE]\n\n"

const chatReq = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`

// TestAttackSplitAtEveryByte: the stream reaches httpitl cut at every byte offset in turn (inside
// CRLF, inside a UTF-8 rune, inside "data:", inside [DONE]), and byte by byte: the caller gets the
// bytes unchanged and the span is the same every time.
func TestAttackSplitAtEveryByte(t *testing.T) {
	srv := serveRaw(t, "text/event-stream", splitStream)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	run := func(what string, rt cutRT) {
		c, exp := tracedOver(t, rt)
		_, got, err := post(context.Background(), t, c, srv.URL+"/v1/chat/completions", chatReq)
		if err != nil || string(got) != splitStream {
			t.Fatalf("%s: the caller got %q, %v", what, got, err)
		}
		a := attrsOf(waitSpans(t, exp, 1)[0])
		for k, want := range map[string]string{"otelitl.chunk.count": "4", "error.type": "", "gen_ai.response.finish_reasons": `["stop"]`,
			"gen_ai.usage.input_tokens": "3", "gen_ai.usage.output_tokens": "4", "gen_ai.response.id": "c1", "gen_ai.response.model": "m-é"} {
			if got := a[attrKey(k)].String(); got != want {
				t.Errorf("%s: %s = %q, want %q", what, k, got, want)
			}
		}
	}
	run("byte by byte", cutRT{base: tr, each: true})
	for i := 1; i < len(splitStream); i++ {
		run(fmt.Sprintf("cut at %d (%q|%q)", i, splitStream[max(0, i-6):i], splitStream[i:min(len(splitStream), i+6)]), cutRT{base: tr, cuts: []int{i}})
	}
}

// TestAttackBOM: the EventSource specification ignores one leading U+FEFF byte order mark. A
// stream that starts with one must give the span it gives without, however the BOM is cut.
func TestAttackBOM(t *testing.T) {
	const bom = "\xEF\xBB\xBF"
	stream := bom + `data: {"id":"c1","model":"m-é","choices":[{"index":0,"delta":{"content":"first"}}]}` + "\n\n" + splitStream
	srv := serveRaw(t, "text/event-stream", stream)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	for _, cuts := range [][]int{nil, {1}, {2}, {3}, {1, 2, 3, 4}} {
		c, exp := tracedOver(t, cutRT{base: tr, cuts: cuts})
		_, got, err := post(context.Background(), t, c, srv.URL+"/v1/chat/completions", chatReq)
		if err != nil || string(got) != stream {
			t.Fatalf("cuts %v: the caller got %q, %v", cuts, got, err)
		}
		a := attrsOf(waitSpans(t, exp, 1)[0])
		if n := a["otelitl.chunk.count"].AsInt64(); n != 5 {
			t.Errorf("cuts %v: %d chunks, want 5: the event after the BOM was not read", cuts, n)
		}
	}
}
