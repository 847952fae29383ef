package httpitl

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/otelitl/itl/itlconv"
)

// bedrockRead reads an event stream as a Bedrock reply, fed in the given pieces, both ways.
func bedrockRead(t *testing.T, limit int, input []byte, pieces int) (scan, ref outcome, decided bool) {
	t.Helper()
	return eventStreamRead(t, protoBedrock, limit, input, pieces)
}

// eventStreamRead reads an event stream as protocol p (ConverseStream or
// InvokeModelWithResponseStream), fed in the given pieces, both ways.
func eventStreamRead(t *testing.T, p protocol, limit int, input []byte, pieces int) (scan, ref outcome, decided bool) {
	t.Helper()
	var out [2]outcome
	var br [2]bool
	for k, reference := range []bool{false, true} {
		r := newRec()
		o := newObserver(call{proto: p}, r, framingEventStream, true, limit)
		o.reference = reference
		rng := rand.New(rand.NewPCG(uint64(pieces), 7))
		for in := input; len(in) > 0; {
			n := len(in)
			if pieces > 1 {
				n = min(n, 1+rng.IntN(max(1, len(input)/pieces)))
			}
			o.feed(in[:n])
			in = in[n:]
		}
		o.fr.eof()
		errType := ""
		if err := o.failure(); err != nil {
			errType = err.(interface{ ErrorType() string }).ErrorType()
		}
		out[k] = outcome{r, o.ended, errType, o.values}
		br[k] = o.decided()
		if o.fallbacks != 0 {
			t.Errorf("%d events left to encoding/json", o.fallbacks)
		}
	}
	if !out[0].equal(out[1]) || br[0] != br[1] {
		t.Fatalf("scanner:   %v\nreference: %v", out[0], out[1])
	}
	return out[0], out[1], br[0]
}

// TestBedrock reads ConverseStream replies, whole, in random pieces and a byte at a time, with the
// scanner and the encoding/json reading: the chunks, usage, finish reason, and error.type each
// records.
func TestBedrock(t *testing.T) {
	long := `{"contentBlockIndex":0,"delta":{"text":"` + strings.Repeat("w", 2000) + `"}}`
	for _, tc := range []struct {
		name    string
		stream  []byte
		chunks  int
		in, out int
		reasons []string
		errType string // the failure's, "" for none
		decided bool   // the events read decide the end: a later Close or read error changes nothing
	}{
		{name: "complete", stream: cat(bStart, bBlock, bText, bEmpty, bTool, bThink, bSignature, bCitation, bBlockStop, bStop, bMeta),
			chunks: 3, in: 25, out: 12, reasons: []string{"end_turn"}, decided: true},
		{name: "no metadata", stream: cat(bStart, bText, bStop), chunks: 1, in: -1, out: -1, reasons: []string{"end_turn"}, decided: true},
		{name: "no messageStop", stream: cat(bStart, bText, bText), chunks: 2, in: -1, out: -1, errType: itlconv.ErrorTypeIncompleteStream},
		{name: "cut in a frame", stream: cat(bStart, bText, bStop)[:len(bStart)+len(bText)+10], chunks: 1, in: -1, out: -1,
			errType: itlconv.ErrorTypeIncompleteStream},
		{name: "exception mid-stream", stream: cat(bStart, bText, esExc("modelStreamErrorException", `{"message":"SECRET","originalStatusCode":500}`)),
			chunks: 1, in: -1, out: -1, errType: "modelStreamErrorException", decided: true},
		{name: "throttling, then more", stream: cat(bStart, esExc("throttlingException", `{"message":"m"}`), esExc("validationException", `{}`), bText, bStop),
			chunks: 1, in: -1, out: -1, reasons: []string{"end_turn"}, errType: "throttlingException", decided: true},
		{name: "exception type as free text", stream: cat(bStart, esExc("Too many tokens, please wait: SECRET", `{}`), bStop),
			in: -1, out: -1, reasons: []string{"end_turn"}, errType: itlconv.ErrorTypeStreamError, decided: true},
		{name: "exception type too long", stream: cat(esExc(strings.Repeat("x", 65), `{}`)), in: -1, out: -1, errType: itlconv.ErrorTypeStreamError, decided: true},
		{name: "exception without type", stream: cat(bText, esEncode(`{}`, esStr(":message-type", "exception"))), chunks: 1, in: -1, out: -1,
			errType: itlconv.ErrorTypeStreamError, decided: true},
		{name: "error message", stream: cat(bText, esEncode("", esStr(":message-type", "error"), esStr(":error-code", "InternalFailure"))), chunks: 1,
			in: -1, out: -1, errType: "InternalFailure", decided: true},
		{name: "unknown message type", stream: cat(bText, esEncode(`{}`, esStr(":message-type", "surprise")), bStop), chunks: 1, in: -1, out: -1,
			reasons: []string{"end_turn"}, errType: itlconv.ErrorTypeStreamError, decided: true},
		{name: "unknown event type", stream: cat(bText, esEv("somethingNew", `{"delta":{"text":"x"}}`), bStop), chunks: 1, in: -1, out: -1,
			reasons: []string{"end_turn"}, decided: true},
		{name: "corrupt before messageStop", stream: cat(bStart, bText, flip(bText, 9), bText, bStop, bMeta), chunks: 1, in: -1, out: -1,
			errType: itlconv.ErrorTypeIncompleteStream, decided: true},
		{name: "corrupt after messageStop", stream: cat(bText, bStop, flip(bMeta, len(bMeta)-1)), chunks: 1, in: -1, out: -1,
			reasons: []string{"end_turn"}, decided: true},
		{name: "too large to read", stream: cat(esEv("contentBlockDelta", long), bText, bStop), chunks: 1, in: -1, out: -1,
			reasons: []string{"end_turn"}, decided: true},
		{name: "messageStop not JSON", stream: cat(bText, esEv("messageStop", `{"stopReason":`)), chunks: 1, in: -1, out: -1,
			errType: itlconv.ErrorTypeIncompleteStream, decided: true},
		{name: "messageStop null: the SDK fails there", stream: cat(bText, esEv("messageStop", `null`)), chunks: 1, in: -1, out: -1,
			errType: itlconv.ErrorTypeIncompleteStream, decided: true},
		{name: "an event the SDK cannot decode: the rest unread", stream: cat(bStart, bText, esEv("contentBlockDelta", `{"delta":{"text":"x"}`),
			bText, bStop, bMeta), chunks: 1, in: -1, out: -1, errType: itlconv.ErrorTypeIncompleteStream, decided: true},
		{name: "payloads that are no object: the SDK fails", stream: cat(bText, esEv("metadata", `[]`), bStop), chunks: 1, in: -1, out: -1,
			errType: itlconv.ErrorTypeIncompleteStream, decided: true},
		{name: "an empty payload: the SDK fails", stream: cat(bText, esEv("contentBlockStop", ``), bStop), chunks: 1, in: -1, out: -1,
			errType: itlconv.ErrorTypeIncompleteStream, decided: true},
		{name: "a payload not JSON after messageStop changes nothing", stream: cat(bText, bStop, esEv("metadata", `{`)), chunks: 1, in: -1, out: -1,
			reasons: []string{"end_turn"}, decided: true},
		{name: "bytes after the event's object: read as the SDK reads it", stream: cat(bText, esEv("contentBlockDelta", " \n{\"delta\":{\"text\":\"x\"}} trailing"),
			esEv("messageStop", `{"stopReason":"end_turn"}{`)), chunks: 2, in: -1, out: -1, reasons: []string{"end_turn"}, decided: true},
		{name: "an unknown event type is not read: the SDK passes it on", stream: cat(bText, esEv("somethingNew", `nope`), bStop), chunks: 1, in: -1, out: -1,
			reasons: []string{"end_turn"}, decided: true},
		{name: "hostile members", stream: cat(
			esEv("contentBlockDelta", `{"delta":{"text":5}}`), esEv("contentBlockDelta", `{"delta":{"toolUse":"x"}}`),
			esEv("contentBlockDelta", `{"delta":null}`), esEv("contentBlockDelta", `{"Delta":{"TEXT":"x"}}`),
			esEv("contentBlockDelta", `{"delta":{"reasoningContent":{"text":{}}}}`), esEv("contentBlockDelta", `{"delta":{"toolUse":{"input":[1]}}}`),
			esEv("metadata", `{"usage":{"inputTokens":"3","outputTokens":1.5}}`), esEv("messageStop", `{"stopReason":7}`),
			esEv("metadata", `{"usage":{"inputTokens":4}}`), esEv("messageStop", `{"stopReason":"max_tokens"}`)),
			chunks: 2, in: 4, out: -1, reasons: []string{"max_tokens"}, decided: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, pieces := range []int{1, 7, len(tc.stream)} {
				scan, _, decided := bedrockRead(t, 1000, tc.stream, pieces)
				r := scan.rec
				if r.chunks != tc.chunks || r.in != tc.in || r.out != tc.out || strings.Join(r.reasons, ",") != strings.Join(tc.reasons, ",") ||
					scan.errType != tc.errType || decided != tc.decided {
					t.Fatalf("in %d pieces: %v decided=%t\nwant chunks %d usage %d/%d reasons %q error %q decided=%t",
						pieces, scan, decided, tc.chunks, tc.in, tc.out, tc.reasons, tc.errType, tc.decided)
				}
			}
		})
	}
}

// TestBedrockBodyUnchanged: the observed body returns exactly the bytes of the base body, in the
// same reads, for whole, corrupt and oversized event streams, however the input is cut.
func TestBedrockBodyUnchanged(t *testing.T) {
	inputs := [][]byte{
		cat(bStart, bText, bTool, bStop, bMeta),
		cat(bStart, bText, flip(bText, 2), bText, bStop),
		cat(esEv("contentBlockDelta", strings.Repeat("q", 100)), bText, esExc("throttlingException", `{}`)),
		[]byte(strings.Repeat("\x00\xff\r\n:{[\"", 30)),
	}
	for seed := range uint64(20) {
		for _, in := range inputs {
			b := &body{rc: &randomReader{bytes.Clone(in), rand.New(rand.NewPCG(seed, 1))}, stop: func() bool { return true },
				ctx: t.Context(), o: newObserver(call{proto: protoBedrock}, nil, framingEventStream, true, 64)}
			got, err := io.ReadAll(b)
			if err != nil || !bytes.Equal(got, in) {
				t.Fatalf("the body changed: %q, %v; want %q", got, err, in)
			}
			if err := iotest.TestReader(&body{rc: io.NopCloser(bytes.NewReader(in)), stop: func() bool { return true },
				ctx: t.Context(), o: newObserver(call{proto: protoBedrock}, nil, framingEventStream, true, 64)}, in); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestDetectBedrock(t *testing.T) {
	for _, tc := range []struct {
		method, url, model string // model "": not recognised
	}{
		{"POST", "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream",
			"anthropic.claude-3-5-sonnet-20240620-v1:0"},
		{"POST", "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-3-7-sonnet-20250219-v1:0/converse-stream",
			"us.anthropic.claude-3-7-sonnet-20250219-v1:0"},
		{"POST", "https://h/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aapplication-inference-profile%2Fa1b2c3/converse-stream",
			"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3"},
		{"POST", "https://h/model/arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.meta.llama3-2-1b-instruct-v1:0/converse-stream",
			"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.meta.llama3-2-1b-instruct-v1:0"},
		{"POST", "http://127.0.0.1:8080/gateway/bedrock/model/amazon.nova-lite-v1%3A0/converse-stream/", "amazon.nova-lite-v1:0"},
		{"POST", "https://h/model/a%20b%2Fc%25d/converse-stream?x=1", "a b/c%d"},
		{"GET", "https://h/model/m/converse-stream", ""},
		{"POST", "https://h/model//converse-stream", ""},
		{"POST", "https://h/converse-stream", ""},
		{"POST", "https://h/models/m/converse-stream", ""},
		{"POST", "https://h/model/m/converse", ""},
		{"POST", "https://h/model/m/invoke", ""},
	} {
		req, err := http.NewRequest(tc.method, tc.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := detect(req)
		if tc.model == "" {
			if ok {
				t.Errorf("%s %s recognised as %+v", tc.method, tc.url, c)
			}
			continue
		}
		want := call{proto: protoBedrock, operation: "chat", provider: "aws.bedrock", model: tc.model, stream: true, framing: framingEventStream}
		if !ok || c != want {
			t.Errorf("%s: %+v, %t; want %+v", tc.url, c, ok, want)
		}
		// The body's members say nothing of a Bedrock call; its reply is an event stream whatever
		// its Content-Type.
		applyFields(&c, requestFields{model: "other", stream: false, hasStream: true})
		if c != want || framingOf("application/json", c) != framingEventStream {
			t.Errorf("%s: the request body or the Content-Type changed %+v", tc.url, c)
		}
	}
}
