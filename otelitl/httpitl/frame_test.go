package httpitl

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
)

type ev struct {
	name, data string
	over       bool
}

// frame feeds input to a new framer in pieces cut at the given positions and returns the events.
func frame(mode framing, max int, input string, cuts ...int) []ev {
	var got []ev
	f := newFramer(mode, max, func(name, data []byte, over bool) {
		if len(data) > max {
			panic(fmt.Sprintf("an event of %d bytes passed the bound of %d", len(data), max))
		}
		got = append(got, ev{string(name), string(data), over})
	})
	prev := 0
	for _, c := range cuts {
		f.feed([]byte(input[prev:c]))
		prev = c
	}
	f.feed([]byte(input[prev:]))
	f.eof()
	return got
}

func eq(a, b []ev) bool {
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

// checkEverySplit checks that the events are the same whole, split at every byte boundary, split
// at every pair of boundaries (short inputs) and fed one byte at a time.
func checkEverySplit(t *testing.T, mode framing, max int, input string, want []ev) {
	t.Helper()
	if got := frame(mode, max, input); !eq(got, want) {
		t.Fatalf("whole %q:\n got %v\nwant %v", input, got, want)
	}
	for i := 1; i < len(input); i++ {
		if got := frame(mode, max, input, i); !eq(got, want) {
			t.Fatalf("split at %d of %q:\n got %v\nwant %v", i, input, got, want)
		}
		if len(input) <= 120 {
			for j := i + 1; j < len(input); j++ {
				if got := frame(mode, max, input, i, j); !eq(got, want) {
					t.Fatalf("split at %d and %d of %q:\n got %v\nwant %v", i, j, input, got, want)
				}
			}
		}
	}
	var cuts []int
	for i := 1; i < len(input); i++ {
		cuts = append(cuts, i)
	}
	if got := frame(mode, max, input, cuts...); !eq(got, want) {
		t.Fatalf("byte by byte %q:\n got %v\nwant %v", input, got, want)
	}
}

func TestSSE(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []ev
	}{
		{"LF", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []ev{{"", `{"a":1}`, false}, {"", "[DONE]", false}}},
		{"CRLF", "data: {\"a\":1}\r\n\r\ndata: [DONE]\r\n\r\n", []ev{{"", `{"a":1}`, false}, {"", "[DONE]", false}}},
		{"CR", "data: x\r\rdata: y\r\r", []ev{{"", "x", false}, {"", "y", false}}},
		{"mixed", "data: x\r\n\ndata: y\n\r\n", []ev{{"", "x", false}, {"", "y", false}}},
		{"event names", "event: message_start\ndata: {}\n\nevent: ping\ndata: {\"type\":\"ping\"}\n\n", []ev{{"message_start", "{}", false}, {"ping", `{"type":"ping"}`, false}}},
		{"no space", "data:{\"a\":1}\n\n", []ev{{"", `{"a":1}`, false}}},
		{"two spaces keep one", "data:  x\n\n", []ev{{"", " x", false}}},
		{"multi-line data", "data: {\"a\":\ndata: 1}\n\n", []ev{{"", "{\"a\":\n1}", false}}},
		{"comments and keep-alives", ": keep-alive\n\n:\ndata: x\n: mid-event comment\n\n", []ev{{"", "x", false}}},
		{"id and retry ignored", "id: 7\nretry: 100\ndata: x\n\n", []ev{{"", "x", false}}},
		{"unknown field", "foo: bar\ndatum: no\ndata: x\n\n", []ev{{"", "x", false}}},
		{"data without colon", "data\n\n", []ev{{"", "", false}}},
		{"event without data is not dispatched", "event: ping\n\ndata: x\n\n", []ev{{"", "x", false}}},
		{"unterminated last event dropped", "data: x\n\ndata: y\n", []ev{{"", "x", false}}},
		{"blank lines only", "\n\n\r\n\r\n", nil},
		{"leading BOM ignored", "\xEF\xBB\xBFdata: x\n\n", []ev{{"", "x", false}}},
		{"one BOM only", "\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\n", []ev{{"", "y", false}}},
		{"BOM cut short", "\xEF\xBBdata: x\n\ndata: y\n\n", []ev{{"", "y", false}}},
		{"BOM past the start", "data: x\n\n\xEF\xBB\xBFdata: y\n\ndata: z\n\n", []ev{{"", "x", false}, {"", "z", false}}},
		{"binary junk", "\x00\xff\xfe:\x01\n\ndata: \x00\xff\n\n", []ev{{"", "\x00\xff", false}}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkEverySplit(t, framingSSE, 1<<20, tc.in, tc.want) })
	}
}

func TestSSEBounded(t *testing.T) {
	huge := strings.Repeat("x", 5000)
	in := "data: " + huge + "\n\ndata: small\n\nevent: " + huge + "\ndata: y\n\n"
	want := []ev{{"", "", true}, {"", "small", false}, {huge[:maxEventName], "y", false}}
	checkEverySplit(t, framingSSE, 1000, in, want)
	// Two data lines that pass the bound together.
	checkEverySplit(t, framingSSE, 10, "data: 123456\ndata: 7890\n\ndata: ok\n\n", []ev{{"", "", true}, {"", "ok", false}})
	// Data lines that fill the bound, and the line feed that joins them passes it (found by
	// FuzzStream).
	checkEverySplit(t, framingSSE, 3, "data:000\ndata\n\ndata:00\ndata\n\n", []ev{{"", "", true}, {"", "00\n", false}})
}

func TestSSEMemoryStaysBounded(t *testing.T) {
	var p sseParser
	p.max = 4096
	p.emit = func([]byte, []byte, bool) {}
	line := bytes.Repeat([]byte("y"), 1<<16)
	p.feed([]byte("data: "))
	for range 256 { // a 16 MiB line
		p.feed(line)
	}
	if cap(p.data) > 2*p.max {
		t.Fatalf("the parser holds %d bytes for a bound of %d", cap(p.data), p.max)
	}
	p.feed([]byte("\n\n"))
}

func TestNDJSON(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []ev
	}{
		{"LF", "{\"a\":1}\n{\"b\":2}\n", []ev{{"", `{"a":1}`, false}, {"", `{"b":2}`, false}}},
		{"CRLF and blank lines", "{\"a\":1}\r\n\r\n{\"b\":2}\r\n", []ev{{"", `{"a":1}`, false}, {"", `{"b":2}`, false}}},
		{"last line without newline", "{\"a\":1}\n{\"b\":2}", []ev{{"", `{"a":1}`, false}, {"", `{"b":2}`, false}}},
		{"junk", "\x00\xff\nnot json\n", []ev{{"", "\x00\xff", false}, {"", "not json", false}}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkEverySplit(t, framingNDJSON, 1<<20, tc.in, tc.want) })
	}
	checkEverySplit(t, framingNDJSON, 8, "{\"a\":12345}\n{}\n", []ev{{"", "", true}, {"", "{}", false}})
}

func TestJSONSplitter(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []ev
	}{
		{"object", ` {"a":{"b":[1,2]},"c":"}"} `, []ev{{"", `{"a":{"b":[1,2]},"c":"}"}`, false}}},
		{"array elements", "[{\"a\":1}\n,\r\n{\"b\":\"]\\\"\"}]", []ev{{"", `{"a":1}`, false}, {"", `{"b":"]\""}`, false}}},
		{"escaped backslash before quote", `{"a":"\\"}{"b":1}`, []ev{{"", `{"a":"\\"}`, false}, {"", `{"b":1}`, false}}},
		{"scalars skipped", `[1,"x",{"a":1},null]`, []ev{{"", `{"a":1}`, false}}},
		{"cut off", `{"a":1`, nil},
		{"junk", "\x00}}]]{\"a\":1}", []ev{{"", `{"a":1}`, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkEverySplit(t, framingJSON, 1<<20, tc.in, tc.want) })
	}
	checkEverySplit(t, framingJSON, 8, `[{"a":"123456789"},{}]`, []ev{{"", "", true}, {"", "{}", false}})
}

func TestScanRequest(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want requestFields
	}{
		{`{"model":"gpt-4o","stream":true}`, requestFields{"gpt-4o", true, true}},
		{`{"messages":[{"role":"user","content":"a \"model\": x"}],"stream":false,"model":"m"}`, requestFields{"m", false, true}},
		{` { "stream" : true , "model" : "a\u0062" } `, requestFields{"ab", true, true}},
		{`{"nested":{"model":"no"},"model":"yes"}`, requestFields{model: "yes"}},
		{`{"messages":[{"content":"cut off`, requestFields{}},
		{`{"model":"m","messages":[{"content":"cut off`, requestFields{model: "m"}},
		{`[]`, requestFields{}},
		{`{"model":7}`, requestFields{}},
		{"\x00\xff", requestFields{}},
	} {
		if got := scanRequest([]byte(tc.in)); got != tc.want {
			t.Errorf("scanRequest(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// randomReader returns the input in pieces of random sizes.
type randomReader struct {
	b   []byte
	rng *rand.Rand
}

func (r *randomReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.b), 1+r.rng.IntN(40))
	copy(p, r.b[:n])
	r.b = r.b[n:]
	return n, nil
}

func (r *randomReader) Close() error { return nil }

// TestBodyBytesUnchanged checks that the observed body returns exactly the bytes of the base body,
// in the same reads, for every protocol and framing, however the input is cut.
func TestBodyBytesUnchanged(t *testing.T) {
	inputs := []string{
		"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\r\n\r\ndata: [DONE]\n\n",
		"{\"message\":{\"content\":\"a\"},\"done\":false}\n{\"done\":true}\n",
		"[{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]}}]}]",
		strings.Repeat("\x00\xff\r\n:{[\"", 300),
	}
	for seed := range uint64(20) {
		for _, in := range inputs {
			for _, p := range []protocol{protoChat, protoResponses, protoAnthropic, protoGemini, protoOllamaChat} {
				for _, fr := range []framing{framingSSE, framingNDJSON, framingJSON} {
					b := &body{rc: &randomReader{[]byte(in), rand.New(rand.NewPCG(seed, 1))}, stop: func() bool { return true },
						ctx: t.Context(), o: newObserver(call{proto: p}, nil, fr, true, 16)}
					got, err := io.ReadAll(b)
					if err != nil || string(got) != in {
						t.Fatalf("the body changed: %q, %v; want %q", got, err, in)
					}
					if err := iotest.TestReader(&body{rc: io.NopCloser(strings.NewReader(in)), stop: func() bool { return true },
						ctx: t.Context(), o: newObserver(call{proto: p}, nil, fr, true, 16)}, []byte(in)); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
}
