package httpitl

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/otelitl/itl/itlconv"
)

// chunk is an InvokeModelWithResponseStream chunk event carrying data, as Bedrock sends it.
func chunk(data string) []byte {
	return esEv("chunk", `{"bytes":"`+base64.StdEncoding.EncodeToString([]byte(data))+`","p":"abcdefghij"}`)
}

// chunks is a stream of chunk events.
func chunks(data ...string) []byte {
	var b []byte
	for _, d := range data {
		b = append(b, chunk(d)...)
	}
	return b
}

// metrics is Bedrock's amazon-bedrock-invocationMetrics member, as it ends the last chunk.
func metrics(in, out int) string {
	return fmt.Sprintf(`"amazon-bedrock-invocationMetrics":{"inputTokenCount":%d,"outputTokenCount":%d,"invocationLatency":512,"firstByteLatency":301}`, in, out)
}

// Each family's stream, as Bedrock sends it (see doc.go for the sources of each shape). The
// invocation metrics differ from the family's own counts where it has them, to tell which wins.
var (
	invClaude = []string{
		`{"type":"message_start","message":{"id":"msg_bdrk_01","type":"message","role":"assistant","model":"claude-3-5-haiku-20241022","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":19,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"The user"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2ln"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hello"}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" world"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"a\":1}"}}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":12}}`,
		`{"type":"message_stop",` + metrics(20, 13) + `}`,
	}
	invLlama = []string{
		`{"generation":"Hello","prompt_token_count":11,"generation_token_count":1,"stop_reason":null}`,
		`{"generation":" world","prompt_token_count":null,"generation_token_count":2,"stop_reason":null}`,
		`{"generation":"","prompt_token_count":null,"generation_token_count":3,"stop_reason":"stop",` + metrics(12, 4) + `}`,
	}
	invMistral = []string{
		`{"outputs":[{"text":"Hello","stop_reason":null}]}`,
		`{"outputs":[{"text":" world","stop_reason":null}]}`,
		`{"outputs":[{"text":"","stop_reason":"stop"}],` + metrics(15, 2) + `}`,
	}
	invTitan = []string{
		`{"outputText":"Hello","index":0,"totalOutputTextTokenCount":1,"completionReason":null,"inputTextTokenCount":9}`,
		`{"outputText":" world","index":0,"totalOutputTextTokenCount":2,"completionReason":"FINISH","inputTextTokenCount":null,` + metrics(10, 3) + `}`,
	}
	invNova = []string{
		`{"messageStart":{"role":"assistant"}}`,
		`{"contentBlockDelta":{"delta":{"text":"Hello"},"contentBlockIndex":0}}`,
		`{"contentBlockDelta":{"delta":{"text":""},"contentBlockIndex":0}}`,
		`{"contentBlockStop":{"contentBlockIndex":0}}`,
		`{"contentBlockStart":{"start":{"toolUse":{"toolUseId":"t1","name":"f"}},"contentBlockIndex":1}}`,
		`{"contentBlockDelta":{"delta":{"toolUse":{"input":"{\"a\":1}"}},"contentBlockIndex":1}}`,
		`{"contentBlockStop":{"contentBlockIndex":1}}`,
		`{"messageStop":{"stopReason":"tool_use"}}`,
		`{"metadata":{"usage":{"inputTokens":7,"outputTokens":5},"metrics":{},"trace":{}},` + metrics(8, 6) + `}`,
	}
	// Cohere Command R calling a tool: the plan's text, the call's name, its arguments in two
	// pieces (cohere-python's StreamedChatResponse_ToolCallsChunk, ToolCallDelta), then the calls
	// whole (tool-calls-generation), which repeat the chunks.
	invCohereTools = []string{
		`{"is_finished":false,"event_type":"stream-start","generation_id":"g2"}`,
		`{"is_finished":false,"event_type":"tool-calls-chunk","text":"I will look up the weather."}`,
		`{"is_finished":false,"event_type":"tool-calls-chunk","tool_call_delta":{"index":0,"name":"weather"}}`,
		`{"is_finished":false,"event_type":"tool-calls-chunk","tool_call_delta":{"index":0,"parameters":"{\"city\":"}}`,
		`{"is_finished":false,"event_type":"tool-calls-chunk","tool_call_delta":{"index":0,"parameters":""}}`,
		`{"is_finished":false,"event_type":"tool-calls-chunk","tool_call_delta":{"index":0,"parameters":"\"Paris\"}"}}`,
		`{"is_finished":false,"event_type":"tool-calls-generation","text":"I will look up the weather.","tool_calls":[{"name":"weather","parameters":{"city":"Paris"}}]}`,
		`{"is_finished":true,"event_type":"stream-end","response":{"text":"","finish_reason":"COMPLETE"},"finish_reason":"COMPLETE",` + metrics(30, 12) + `}`,
	}
	// OpenAI gpt-oss: Chat Completions chunks (model-parameters-openai), with its own usage.
	invGptOss = []string{
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"openai.gpt-oss-20b-1:0","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"openai.gpt-oss-20b-1:0","choices":[{"index":0,"delta":{"reasoning_content":"The user"},"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"openai.gpt-oss-20b-1:0","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"openai.gpt-oss-20b-1:0","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"openai.gpt-oss-20b-1:0","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls","stop_reason":200012}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"openai.gpt-oss-20b-1:0","choices":[],"usage":{"prompt_tokens":21,"completion_tokens":9,"total_tokens":30},` + metrics(22, 10) + `}`,
	}
	// DeepSeek-R1: {"choices":[{"text","stop_reason"}]} (model-parameters-deepseek), no usage.
	invDeepSeek = []string{
		`{"choices":[{"text":"Hello","stop_reason":null}]}`,
		`{"choices":[{"text":" world","stop_reason":null}]}`,
		`{"choices":[{"text":"","stop_reason":"length"}],` + metrics(6, 2) + `}`,
	}
	// AI21 Jamba: Chat Completions chunks as AI21's API streams them (a role delta, then content;
	// usage null but in the last).
	invJamba = []string{
		`{"id":"chat-1","choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}],"usage":null}`,
		`{"id":"chat-1","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}],"usage":null}`,
		`{"id":"chat-1","choices":[{"index":0,"delta":{"content":" world"},"finish_reason":null}],"usage":null}`,
		`{"id":"chat-1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":14,"total_tokens":17,"completion_tokens":3},` + metrics(15, 4) + `}`,
	}
	invCohere = []string{
		`{"is_finished":false,"event_type":"stream-start","generation_id":"g1"}`,
		`{"is_finished":false,"event_type":"text-generation","text":"Hello"}`,
		`{"is_finished":false,"event_type":"text-generation","text":" world"}`,
		`{"is_finished":true,"event_type":"stream-end","response":{"text":"Hello world","finish_reason":"COMPLETE"},"finish_reason":"COMPLETE",` + metrics(8, 2) + `}`,
	}
)

// TestInvoke reads InvokeModelWithResponseStream replies of each family, whole, in random pieces
// and a byte at a time, with the scanner and the encoding/json reading; and the ways a chunk can be
// bad.
func TestInvoke(t *testing.T) {
	llamaText := chunk(invLlama[0])
	escaped := func(data string) []byte { // the base64 with its first byte written as \u00XX
		b := base64.StdEncoding.EncodeToString([]byte(data))
		return esEv("chunk", fmt.Sprintf(`{"bytes":"\u%04x%s"}`, b[0], b[1:]))
	}
	for _, tc := range []struct {
		name    string
		stream  []byte
		chunks  int
		in, out int
		reasons []string
		errType string
		decided bool
	}{
		{name: "Claude: its own usage wins", stream: chunks(invClaude...), chunks: 4, in: 19, out: 12, reasons: []string{"tool_use"}, decided: true},
		{name: "Claude without its usage: the metrics", stream: chunks(
			`{"type":"message_start","message":{"id":"m","model":"claude"}}`, invClaude[6], invClaude[14]),
			chunks: 1, in: 20, out: 13, decided: true},
		{name: "Llama", stream: chunks(invLlama...), chunks: 2, in: 11, out: 3, reasons: []string{"stop"}, decided: true},
		{name: "Mistral: usage from the metrics", stream: chunks(invMistral...), chunks: 2, in: 15, out: 2, reasons: []string{"stop"}, decided: true},
		{name: "Titan", stream: chunks(invTitan...), chunks: 2, in: 9, out: 2, reasons: []string{"FINISH"}, decided: true},
		{name: "Nova", stream: chunks(invNova...), chunks: 2, in: 7, out: 5, reasons: []string{"tool_use"}, decided: true},
		{name: "Cohere Command R", stream: chunks(invCohere...), chunks: 2, in: 8, out: 2, reasons: []string{"COMPLETE"}, decided: true},
		{name: "Cohere Command R calling a tool: the plan and the arguments", stream: chunks(invCohereTools...), chunks: 3, in: 30, out: 12,
			reasons: []string{"COMPLETE"}, decided: true},
		{name: "Cohere Command R calling a tool without tool-calls-chunk: the generation is the chunk", stream: chunks(invCohereTools[0], invCohereTools[6], invCohereTools[7]),
			chunks: 1, in: 30, out: 12, reasons: []string{"COMPLETE"}, decided: true},
		{name: "Cohere Command R: a tool-calls-generation with no calls nor text is none", stream: chunks(invCohereTools[0],
			`{"event_type":"tool-calls-generation","text":"","tool_calls":[]}`, invCohereTools[7]),
			in: 30, out: 12, reasons: []string{"COMPLETE"}, decided: true},
		{name: "gpt-oss: its own usage wins", stream: chunks(invGptOss...), chunks: 3, in: 21, out: 9, reasons: []string{"tool_calls"}, decided: true},
		{name: "DeepSeek: stop_reason, usage from the metrics", stream: chunks(invDeepSeek...), chunks: 2, in: 6, out: 2, reasons: []string{"length"}, decided: true},
		{name: "Jamba", stream: chunks(invJamba...), chunks: 2, in: 14, out: 3, reasons: []string{"stop"}, decided: true},
		{name: "OpenAI-shaped: a finish reason ends it without the metrics", stream: chunks(invDeepSeek[0], `{"choices":[{"text":"","stop_reason":"stop"}]}`),
			chunks: 1, in: -1, out: -1, reasons: []string{"stop"}, decided: true},
		{name: "OpenAI-shaped: finish_reason wins over stop_reason; a stop_reason not a string is none",
			stream: chunks(`{"choices":[{"text":"x","finish_reason":"length","stop_reason":"stop"},{"text":"y","stop_reason":7},{"text":"z","stop_reason":{}}]}`, invDeepSeek[2]),
			chunks: 1, in: 6, out: 2, reasons: []string{"length", "length"}, decided: true},
		{name: "OpenAI-shaped: an error object fails it, as on /chat/completions", stream: chunks(invJamba[1], `{"choices":[],"error":{"code":"model_error","message":"SECRET"}}`),
			chunks: 1, in: -1, out: -1, errType: "model_error", decided: true},
		{name: "OpenAI-shaped: an error chunk without choices fails it", stream: chunks(invJamba[1], `{"error":{"code":"model_error","message":"SECRET"}}`, invJamba[2]),
			chunks: 2, in: -1, out: -1, errType: "model_error", decided: true},
		{name: "OpenAI-shaped: an error chunk that is no object is stream_error", stream: chunks(invJamba[1], `{"error":"SECRET the model failed"}`),
			chunks: 1, in: -1, out: -1, errType: itlconv.ErrorTypeStreamError, decided: true},
		{name: "OpenAI-shaped: an error null names none", stream: chunks(invJamba[1], `{"error":null}`, invJamba[3]),
			chunks: 1, in: 14, out: 3, reasons: []string{"stop"}, decided: true},
		{name: "unknown family: no chunks, the metrics end it", stream: chunks(`{"completion":"x","stop_reason":null}`, `{"completion":"","stop_reason":"stop_sequence",`+metrics(5, 6)+`}`),
			in: 5, out: 6, decided: true},
		{name: "two families' members: the first family's reading", stream: chunks(`{"type":"content_block_delta","delta":{"text":"x"},"generation":"y","outputs":[{"text":"z"}]}`, invLlama[2]),
			chunks: 1, in: 12, out: 3, reasons: []string{"stop"}, decided: true},
		{name: "cut before the last chunk", stream: chunks(invLlama[:2]...), chunks: 2, in: 11, out: 2, errType: itlconv.ErrorTypeIncompleteStream},
		{name: "cut in a frame", stream: chunks(invMistral...)[:len(chunks(invMistral...))-9], chunks: 2, in: -1, out: -1,
			errType: itlconv.ErrorTypeIncompleteStream},
		{name: "exception mid-stream", stream: cat(llamaText, esExc("modelStreamErrorException", `{"message":"SECRET"}`), chunk(invLlama[1])),
			chunks: 2, in: 11, out: 2, errType: "modelStreamErrorException", decided: true},
		{name: "bad base64: the rest unread", stream: cat(llamaText, esEv("chunk", `{"bytes":"@@not base64@@"}`), chunk(invLlama[1]),
			esExc("throttlingException", `{}`), chunk(invLlama[2])),
			chunks: 1, in: 11, out: 1, errType: itlconv.ErrorTypeIncompleteStream, decided: true},
		{name: "bad base64 after the end", stream: cat(chunks(invLlama...), esEv("chunk", `{"bytes":"YQ"}`)),
			chunks: 2, in: 11, out: 3, reasons: []string{"stop"}, decided: true},
		{name: "payload not JSON", stream: cat(llamaText, esEv("chunk", `{"bytes":`), chunk(invLlama[2])),
			chunks: 1, in: 11, out: 1, errType: itlconv.ErrorTypeIncompleteStream, decided: true},
		{name: "bytes not a string", stream: cat(llamaText, esEv("chunk", `{"bytes":5}`), chunk(invLlama[2])),
			chunks: 1, in: 11, out: 1, errType: itlconv.ErrorTypeIncompleteStream, decided: true},
		{name: "bytes null, empty, absent: nothing to read", stream: cat(llamaText, esEv("chunk", `{"bytes":null}`), esEv("chunk", `{"bytes":""}`),
			esEv("chunk", `{}`), chunk(invLlama[2])), chunks: 1, in: 11, out: 3, reasons: []string{"stop"}, decided: true},
		{name: "payload null: the SDK fails there", stream: cat(llamaText, esEv("chunk", `null`), chunk(invLlama[2])),
			chunks: 1, in: 11, out: 1, errType: itlconv.ErrorTypeIncompleteStream, decided: true},
		{name: "payload empty or no object: the SDK fails there", stream: cat(llamaText, esEv("chunk", ``), esEv("chunk", `[]`), chunk(invLlama[2])),
			chunks: 1, in: 11, out: 1, errType: itlconv.ErrorTypeIncompleteStream, decided: true},
		{name: "bytes after the payload's object: read as the SDK reads it", stream: cat(llamaText,
			esEv("chunk", `{"bytes":"`+base64.StdEncoding.EncodeToString([]byte(invLlama[1]))+`"} {`), chunk(invLlama[2])),
			chunks: 2, in: 11, out: 3, reasons: []string{"stop"}, decided: true},
		{name: "decoded bytes not JSON: read on", stream: cat(llamaText, chunk(`{"generation":"x"`), chunk("\x00\xff"), chunk(invLlama[2])),
			chunks: 1, in: 11, out: 3, reasons: []string{"stop"}, decided: true},
		{name: "escaped base64", stream: cat(escaped(invLlama[0]), escaped(invLlama[2])), chunks: 1, in: 11, out: 3, reasons: []string{"stop"}, decided: true},
		{name: "too large to read", stream: cat(chunk(`{"generation":"`+strings.Repeat("w", 1000)+`"}`), chunks(invLlama...)),
			chunks: 2, in: 11, out: 3, reasons: []string{"stop"}, decided: true},
		{name: "another event type", stream: cat(esEv("somethingNew", `{"bytes":"`+base64.StdEncoding.EncodeToString([]byte(invLlama[0]))+`"}`), chunk(invLlama[2])),
			in: 12, out: 3, reasons: []string{"stop"}, decided: true},
		{name: "a family's member of the wrong type: the chunk records nothing", stream: chunks(`{"generation":5,`+metrics(1, 2)+`}`, invLlama[2]),
			in: 12, out: 3, reasons: []string{"stop"}, decided: true},
		{name: "metrics of the wrong type", stream: chunks(`{"generation":"x","amazon-bedrock-invocationMetrics":[1]}`, invLlama[1]),
			chunks: 1, out: 2, in: -1, errType: itlconv.ErrorTypeIncompleteStream},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, pieces := range []int{1, 7, len(tc.stream)} {
				scan, _, decided := eventStreamRead(t, protoBedrockInvoke, 1000, tc.stream, pieces)
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

// TestInvokeModel: Claude's message_start gives the response model and id.
func TestInvokeModel(t *testing.T) {
	scan, _, _ := eventStreamRead(t, protoBedrockInvoke, DefaultMaxEventBytes, chunks(invClaude...), 3)
	if scan.rec.model != "claude-3-5-haiku-20241022" || scan.rec.id != "msg_bdrk_01" {
		t.Fatalf("%v", scan)
	}
}

// TestInvokeBounded: the decoding buffer is no larger than a chunk's bound allows, and a large one
// is not kept after its chunk.
func TestInvokeBounded(t *testing.T) {
	const limit = 4 << 10
	o := newObserver(call{proto: protoBedrockInvoke}, newRec(), framingEventStream, true, limit)
	big := `{"generation":"` + strings.Repeat("w", 2900) + `"}`
	o.feed(chunk(big))
	if got := cap(o.inv); got == 0 || got > limit*3/4+8 {
		t.Fatalf("decoding buffer of %d bytes for a bound of %d", got, limit)
	}
	o = newObserver(call{proto: protoBedrockInvoke}, newRec(), framingEventStream, true, 1<<20)
	o.feed(chunk(`{"generation":"` + strings.Repeat("w", 100<<10) + `"}`))
	if o.inv != nil {
		t.Fatalf("a decoding buffer of %d bytes kept", cap(o.inv))
	}
}

// TestInvokeBodyUnchanged: the observed body returns exactly the bytes of the base body, for
// whole, bad and oversized chunks, however the input is cut.
func TestInvokeBodyUnchanged(t *testing.T) {
	inputs := [][]byte{
		chunks(invClaude...),
		cat(chunk(invLlama[0]), esEv("chunk", `{"bytes":"@@"}`), chunk(invLlama[2])),
		cat(chunk(strings.Repeat("q", 100)), chunk(invTitan[0]), esExc("throttlingException", `{}`)),
	}
	for seed := range uint64(20) {
		for _, in := range inputs {
			b := &body{rc: &randomReader{bytes.Clone(in), rand.New(rand.NewPCG(seed, 1))}, stop: func() bool { return true },
				ctx: t.Context(), o: newObserver(call{proto: protoBedrockInvoke}, nil, framingEventStream, true, 64)}
			got, err := io.ReadAll(b)
			if err != nil || !bytes.Equal(got, in) {
				t.Fatalf("the body changed: %q, %v; want %q", got, err, in)
			}
			if err := iotest.TestReader(&body{rc: io.NopCloser(bytes.NewReader(in)), stop: func() bool { return true },
				ctx: t.Context(), o: newObserver(call{proto: protoBedrockInvoke}, nil, framingEventStream, true, 64)}, in); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestDetectBedrockInvoke(t *testing.T) {
	for _, tc := range []struct {
		url, model string // model "": not recognised
	}{
		{"https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke-with-response-stream",
			"anthropic.claude-3-5-haiku-20241022-v1:0"},
		{"https://h/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aapplication-inference-profile%2Fa1b2c3/invoke-with-response-stream/",
			"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3"},
		{"https://h/model/m/invoke", ""},
		{"https://h/model//invoke-with-response-stream", ""},
		{"https://h/invoke-with-response-stream", ""},
	} {
		req, err := http.NewRequest("POST", tc.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := detect(req)
		if tc.model == "" {
			if ok {
				t.Errorf("%s recognised as %+v", tc.url, c)
			}
			continue
		}
		want := call{proto: protoBedrockInvoke, operation: "chat", provider: "aws.bedrock", model: tc.model, stream: true, framing: framingEventStream}
		if !ok || c != want {
			t.Errorf("%s: %+v, %t; want %+v", tc.url, c, ok, want)
		}
		// A family's request body says "stream": false (Cohere's may); the URL says it streams.
		applyFields(&c, requestFields{model: "other", stream: false, hasStream: true})
		if c != want || framingOf("application/json", c) != framingEventStream {
			t.Errorf("%s: the request body or the Content-Type changed %+v", tc.url, c)
		}
	}
}
