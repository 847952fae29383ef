package httpitl

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// scanPieces feeds in to a reqScan in pieces of n bytes.
func scanPieces(in []byte, n int) requestFields {
	var s reqScan
	for len(in) > 0 {
		k := min(n, len(in))
		_, _ = s.Write(in[:k])
		in = in[k:]
	}
	return s.f
}

// longPrompt is a request whose prompt, before the model, is far past DefaultMaxRequestBytes, as
// openai-go writes a request (messages before model) with an image or a long document in it.
func longPrompt(n int) string {
	return `{"messages":[{"role":"user","content":[{"type":"text","text":"a \"quoted\" {[line]}\n\\"},` +
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,` + strings.Repeat("iVBORw0KGgo", n/11) + `"}}]}],` +
		`"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true}}`
}

// TestScanRequestInPieces: the fields are the same however the body is cut, down to a byte at a
// time, the model found wherever it is.
func TestScanRequestInPieces(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want requestFields
	}{
		{`{"model":"gpt-4o","stream":true}`, requestFields{"gpt-4o", true, true}},
		{`{"stream":false}`, requestFields{"", false, true}},
		{`{"stream" : true }`, requestFields{"", true, true}},
		{`{"messages":[{"role":"user","content":"a \"model\": x"}],"stream":false,"model":"m"}`, requestFields{"m", false, true}},
		{` { "stream" : true , "model" : "a\u0062" } `, requestFields{"ab", true, true}},
		{`{"nested":{"model":"no","a":["}","]",{"stream":true}]},"model":"yes"}`, requestFields{model: "yes"}},
		{`{"x":"\\","model":"after an escaped backslash"}`, requestFields{model: "after an escaped backslash"}},
		{`{"x":"\\\"","model":"after an escaped quote"}`, requestFields{model: "after an escaped quote"}},
		{`{"model":"first","model":"last"}`, requestFields{model: "last"}},
		{`{"mod\u0065l":"escaped key","str\u0065am":true}`, requestFields{"escaped key", true, true}},
		{`{"model":"` + strings.Repeat("m", maxModelBytes) + `"}`, requestFields{}},
		{`{"model":"` + strings.Repeat("m", maxModelBytes-2) + `"}`, requestFields{model: strings.Repeat("m", maxModelBytes-2)}},
		{`{"modelx":"no","stream":truex}`, requestFields{}},
		{`{"a":1,,"model":"after an error"}`, requestFields{}},
		{`{"a":1}{"model":"a second object"}`, requestFields{}},
		{`"model"`, requestFields{}},
		{longPrompt(3 << 20), requestFields{"gpt-4o", true, true}},
	} {
		for _, n := range []int{1, 2, 3, 7, 64, 1 << 20} {
			if got := scanPieces([]byte(tc.in), n); got != tc.want {
				t.Errorf("%.80q in pieces of %d: %+v, want %+v", tc.in, n, got, tc.want)
			}
		}
	}
}

// FuzzScanRequest: on any JSON object, the fields are what encoding/json decodes (a model of up to
// maxModelBytes-2 bytes of JSON text), whatever the pieces; on anything else, no panic.
func FuzzScanRequest(f *testing.F) {
	for _, s := range []string{`{"model":"m","stream":true}`, `{"messages":[{"content":"\"}"}],"model":"a\u00e9"}`,
		`{"stream":false,"model":null}`, `{"model":["x"],"stream":"true"}`, `{"a":{"b":[1,{"c":"]"}]},"stream":true}`, `[1]`, `{"model":"\ud800"}`, `{"m\u006fdel":"k"}`} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, b []byte, piece uint8) {
		got := scanPieces(b, int(piece)+1)
		if whole := scanRequest(b); whole != got {
			t.Fatalf("in pieces of %d: %+v; whole: %+v", int(piece)+1, got, whole)
		}
		var m map[string]json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(b))
		if dec.Decode(&m) != nil || m == nil {
			return
		}
		var want requestFields
		if raw, ok := m["model"]; ok && len(raw) <= maxModelBytes-1 {
			_ = json.Unmarshal(raw, &want.model)
		}
		var stream *bool // null is no value
		if raw, ok := m["stream"]; ok && json.Unmarshal(raw, &stream) == nil && stream != nil {
			want.stream, want.hasStream = *stream, true
		}
		if got != want {
			t.Fatalf("%q: %+v, encoding/json: %+v", b, got, want)
		}
	})
}

// BenchmarkScanRequest: a 4 MiB request whose model comes last, read whole (a GetBody copy): an
// image's base64 (no escapes); text with an escape every 14 to 28 bytes (quotes and newlines), the
// costlier kind; and text with a newline's escape every 40 bytes and no quote.
func BenchmarkScanRequest(b *testing.B) {
	text := `{"messages":[{"role":"user","content":"` + strings.Repeat(`a line of a document, \"quoted\" once\n`, 4<<20/42) + `"}],"model":"gpt-4o","stream":true}`
	// Escapes and no quote: each escape must not search again to the string's end.
	lines := `{"messages":[{"role":"user","content":"` + strings.Repeat(`a line of a document, without a quote\n`, 4<<20/40) + `"}],"model":"gpt-4o","stream":true}`
	for _, bc := range []struct{ name, body string }{{"image", longPrompt(4 << 20)}, {"text", text}, {"lines", lines}} {
		b.Run(bc.name, func(b *testing.B) {
			body := []byte(bc.body)
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if scanRequest(body).model != "gpt-4o" {
					b.Fatal("no model")
				}
			}
		})
	}
}
