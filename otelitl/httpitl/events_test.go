package httpitl

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl/internal/wrap"
)

var protoNames = map[string]protocol{
	"chat": protoChat, "completions": protoCompletions, "responses": protoResponses, "anthropic": protoAnthropic,
	"gemini": protoGemini, "ollama-chat": protoOllamaChat, "ollama-generate": protoOllamaGen,
}

var allProtos = []protocol{protoChat, protoCompletions, protoResponses, protoAnthropic, protoGemini, protoOllamaChat, protoOllamaGen, protoBedrock,
	protoBedrockInvoke}

// bedrockEvents are the types of the Bedrock events httpitl reads: a Bedrock event's type comes
// from its :event-type header, not from its data.
var bedrockEvents = []string{"contentBlockDelta", "messageStop", "metadata"}

// eventNames returns the event names data is read under as protocol p: none but Bedrock's matter.
func eventNames(p protocol) []string {
	switch p {
	case protoBedrock:
		return bedrockEvents
	case protoBedrockInvoke:
		return []string{"chunk"}
	case protoAnthropic:
		// Anthropic's servers name every event; the SDKs pass over an unnamed one.
		return []string{"message_start", ""}
	}
	return []string{""}
}

// asRead returns the forms data is read in as protocol p: itself, and for
// InvokeModelWithResponseStream also as a chunk's bytes ({"bytes": base64 of data}), so that the
// families' readers meet every event too.
func asRead(p protocol, data []byte) [][]byte {
	if p == protoBedrockInvoke {
		return [][]byte{data, []byte(`{"bytes":"` + base64.StdEncoding.EncodeToString(data) + `"}`)}
	}
	return [][]byte{data}
}

type corpusEvent struct {
	proto protocol
	data  string
}

// loadCorpus reads testdata/events: real events from fakellm and from the SDKs' test files
// (otelitl/test/httpitl's TestWriteEventCorpus writes them).
func loadCorpus(t testing.TB) map[string][]corpusEvent {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "events", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus in testdata/events: %v", err)
	}
	out := map[string][]corpusEvent{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p, q, ok := strings.Cut(sc.Text(), "\t")
			data, err := strconv.Unquote(q)
			if !ok || err != nil || protoNames[p] == 0 {
				t.Fatalf("%s: bad line %q", name, sc.Text())
			}
			out[filepath.Base(name)] = append(out[filepath.Base(name)], corpusEvent{protoNames[p], data})
		}
		f.Close()
	}
	return out
}

// outcome is everything an observer recorded.
type outcome struct {
	rec     *rec
	ended   bool
	errType string
	values  int
}

func (a outcome) equal(b outcome) bool {
	return a.rec.equal(b.rec) && a.ended == b.ended && a.errType == b.errType && a.values == b.values
}

func (a outcome) String() string {
	return fmt.Sprintf("%v ended=%t error=%q values=%d", a.rec, a.ended, a.errType, a.values)
}

// readBoth reads events as protocol p with the scanner and the reference way, and returns what
// each recorded and how many events the scanner left to the reference.
func readBoth(p protocol, streaming bool, events ...[]byte) (scan, ref outcome, fallbacks int) {
	name := ""
	if p == protoAnthropic {
		name = "message_start" // named, as Anthropic's servers name every event
	}
	return readBothNamed(p, name, streaming, events...)
}

// readBothNamed is readBoth for events named name.
func readBothNamed(p protocol, name string, streaming bool, events ...[]byte) (scan, ref outcome, fallbacks int) {
	read := func(reference bool) (outcome, int) {
		r := newRec()
		o := newObserver(call{proto: p}, r, framingSSE, streaming, DefaultMaxEventBytes)
		o.reference = reference
		for _, e := range events {
			o.event([]byte(name), e, false)
		}
		return outcome{r, o.ended, o.errType, o.values}, o.fallbacks
	}
	scan, fallbacks = read(false)
	ref, _ = read(true)
	return scan, ref, fallbacks
}

// checkAgrees fails t when the scanner and the reference disagree on data read as any protocol
// (and any of Bedrock's events), streamed or not.
func checkAgrees(t testing.TB, data []byte) (fallbacks int) {
	t.Helper()
	for _, p := range allProtos {
		for _, name := range eventNames(p) {
			for _, streaming := range []bool{true, false} {
				for _, d := range asRead(p, data) {
					scan, ref, n := readBothNamed(p, name, streaming, d)
					fallbacks += n
					if !scan.equal(ref) {
						t.Fatalf("protocol %d event %q streaming %t: %q\nscanner:   %v\nreference: %v", p, name, streaming, d, scan, ref)
					}
				}
			}
		}
	}
	return fallbacks
}

// TestScanAgrees: on every real event of the corpus, read as every protocol, streamed or not, one
// at a time and as whole streams, the scanner records what the encoding/json reading records, and
// leaves none of them to it.
func TestScanAgrees(t *testing.T) {
	total, left := 0, 0
	for name, evs := range loadCorpus(t) {
		byProto := map[protocol][][]byte{}
		for _, e := range evs {
			if n := checkAgrees(t, []byte(e.data)); n > 0 {
				if !repeatsName(e.data) {
					t.Errorf("%s: the scanner left an event without a repeated name to encoding/json: %q", name, e.data)
				}
				left++
			}
			byProto[e.proto] = append(byProto[e.proto], []byte(e.data))
			total++
		}
		for p, stream := range byProto {
			scan, ref, _ := readBoth(p, true, stream...)
			if !scan.equal(ref) {
				t.Fatalf("%s as a stream of protocol %d:\nscanner:   %v\nreference: %v", name, p, scan, ref)
			}
		}
	}
	if total < 1000 {
		t.Fatalf("only %d events in the corpus", total)
	}
	t.Logf("%d events; %d, with a repeated name, left to encoding/json", total, left)
}

// repeatsName reports whether an object of data (valid JSON) has two members whose names
// encoding/json takes for the same.
func repeatsName(data string) bool {
	type frame struct {
		names   map[string]bool // nil for an array
		wantKey bool
	}
	var stack []*frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].names != nil {
			stack[n-1].wantKey = true
		}
	}
	fold := strings.NewReplacer("\u017f", "s", "\u212a", "k")
	dec := json.NewDecoder(strings.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		d, isDelim := tok.(json.Delim)
		if isDelim && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			valueDone()
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].wantKey {
			k := strings.ToLower(fold.Replace(tok.(string)))
			if stack[n-1].names[k] {
				return true
			}
			stack[n-1].names[k], stack[n-1].wantKey = true, false
			continue
		}
		switch {
		case isDelim && d == '{':
			stack = append(stack, &frame{names: map[string]bool{}, wantKey: true})
		case isDelim:
			stack = append(stack, &frame{})
		default:
			valueDone()
		}
	}
}

// hostile are events built to tell the two readings apart.
var hostile = []string{
	// Names: case-folded, escaped, folding from Unicode (K: Kelvin sign, ſ: long s), repeated.
	`{"CHOICES":[{"Delta":{"Content":"x"}}],"ID":"a","Model":"m"}`,
	`{"choices":[{"delta":{"\u0063ontent":"x"}}]}`,
	`{"choices":[{"delta":{"content":"x"}}],"\u0069d":"a"}`,
	`{"choices":[{"delta":{"content":"x"}}],"id":"a","ıd":"b"}`,
	"{\"type\":\"content_block_delta\",\"delta\":{\"thin\u212Aing\":\"x\"}}",
	"{\"done\":true,\"eval_count\":5,\"prompt_eval_\u017Fount\":1}",
	"{\"done\":true,\"eval_count\":5,\"prompt_eval_count\":1,\"done_rea\u017Fon\":\"stop\"}",
	`{"choices":[{"delta":{"content":"x"}}],"choices":[{"delta":{"role":"assistant"}}]}`,
	`{"choices":[{"delta":{"content":"x"}},{"finish_reason":"stop"}],"choices":[{"delta":null}]}`,
	`{"choices":[{"delta":{"content":"x","content":""}}]}`,
	`{"choices":[{"delta":{"content":"","content":"x"}}]}`,
	`{"choices":[{"finish_reason":"a","finish_reason":null}]}`,
	`{"id":"a","id":null}`,
	`{"id":"a","Id":"b","model":"m"}`,
	`{"usage":{"prompt_tokens":3},"usage":{"completion_tokens":4}}`,
	`{"usage":{"prompt_tokens":3},"usage":null}`,
	`{"error":{"code":"a","code":null}}`,
	`{"error":{"code":"a"},"error":null}`,
	`{"type":"error","error":{"type":"x"},"error":{"message":"m"}}`,
	`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"delta":{"text":"x"}}`,
	`{"candidates":[{"finishReason":"STOP"}],"candidates":[{}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"x"}]}},{"content":{"parts":[{"text":"y"}]}}],"candidates":[{"content":{"parts":[]}}],"candidates":[{},{}]}`,
	`{"message":{"content":"x"},"message":null}`,
	`{"done":true,"done":false}`,
	`{"type":"response.completed","response":{"status":"failed"},"response":{"id":"r"}}`,
	`{"object":"response","status":"completed","status":null}`,
	`{"longnamethatisnotanyfieldatallbutlong":{"content":"x"},"choices":[{"text":"y"}]}`,
	// Types: every member we read given every kind of value.
	`{"id":5}`, `{"id":true}`, `{"id":{}}`, `{"id":[]}`, `{"id":null,"choices":[{"text":"x"}]}`,
	`{"choices":{}}`, `{"choices":"x"}`, `{"choices":[1]}`, `{"choices":[null]}`, `{"choices":[[]]}`, `{"choices":null}`,
	`{"choices":[{"delta":5}]}`, `{"choices":[{"delta":[]}]}`, `{"choices":[{"delta":null,"text":"x"}]}`,
	`{"choices":[{"delta":{"tool_calls":{}}}]}`, `{"choices":[{"delta":{"tool_calls":[1]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[null,{"function":null},{"function":{"arguments":"{}"}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":"x"}]}}]}`,
	`{"choices":[{"delta":{"function_call":[]}}]}`, `{"choices":[{"delta":{"audio":{"transcript":{}}}}]}`,
	`{"choices":[{"delta":{"audio":{"transcript":{"a":1}}}}]}`,
	`{"choices":[{"delta":{"content":[]}}]}`, `{"choices":[{"delta":{"content":[ ]}}]}`, `{"choices":[{"delta":{"content":[0]}}]}`,
	`{"choices":[{"delta":{"content":{ }}}]}`, `{"choices":[{"delta":{"content":" "}}]}`, `{"choices":[{"delta":{"content":5}}]}`,
	`{"choices":[{"delta":{"content":true}}]}`, `{"choices":[{"delta":{"content":"\u0000"}}]}`,
	`{"choices":[{"finish_reason":5}]}`, `{"choices":[{"finish_reason":"stop"},{"finish_reason":"length"},{"finish_reason":""}]}`,
	`{"choices":[{"finish_reason":"\u0073top"}]}`, `{"choices":[{"finish_reason":"st\u00f6p"}]}`, "{\"choices\":[{\"finish_reason\":\"st\xffp\"}]}",
	`{"usage":5}`, `{"usage":[]}`, `{"usage":{"prompt_tokens":"3","completion_tokens":-0}}`,
	`{"usage":{"prompt_tokens":3.0,"completion_tokens":1e2}}`, `{"usage":{"prompt_tokens":-1,"completion_tokens":1099511627775}}`,
	`{"usage":{"prompt_tokens":1099511627776,"completion_tokens":99999999999999999999999}}`,
	`{"usage":{"prompt_tokens":null,"completion_tokens":true}}`, `{"usage":{"prompt_tokens":{},"completion_tokens":[1]}}`,
	`{"error":"boom"}`, `{"error":5}`, `{"error":[]}`, `{"error":true}`, `{"error":{}}`, `{"error":null,"id":"a"}`,
	`{"error":{"code":5,"type":"t"}}`, `{"error":{"code":-1.5e3}}`, `{"error":{"code":true,"type":"t"}}`, `{"error":{"code":{},"status":"s"}}`,
	`{"error":{"code":null,"type":null,"status":null}}`, `{"error":{"code":"","type":"","status":"UNAVAILABLE"}}`,
	`{"error":{"code":"\u0001\u007fx\u00e9\ud800"}}`, "{\"error\":{\"code\":\"\xff\xfe\"}}",
	`{"error":{"code":"` + strings.Repeat("é", 200) + `"}}`,
	`{"object":"error","type":"BadRequestError","code":400}`, `{"object":"error"}`, `{"object":"error","type":5,"code":[]}`,
	`{"object":5}`, `{"type":5}`, `{"code":"x"}`,
	`{"type":"error","code":"rate_limit_exceeded"}`, `{"type":"error","code":42}`, `{"type":"error"}`,
	`{"type":"response.output_text.delta","delta":""}`, `{"type":"response.output_text.delta","delta":5}`,
	`{"type":"response.output_text.delta","delta":["x"]}`, `{"type":"response.audio.transcript.delta","delta":"x"}`,
	`{"type":"response.output_text.delt\u0061","delta":"x"}`, `{"type":"response.output_text.delta","delta":"x","type":"x"}`,
	`{"type":"response.completed","response":{}}`, `{"type":"response.completed","response":null}`, `{"type":"response.completed","response":5}`,
	`{"type":"response.incomplete","response":{"incomplete_details":{"reason":"content_filter"}}}`,
	`{"type":"response.incomplete","response":{"incomplete_details":{"reason":"max_output_tokens"}}}`,
	`{"type":"response.incomplete","response":{"incomplete_details":null}}`,
	`{"type":"response.incomplete","response":{"incomplete_details":{"reason":5}}}`,
	`{"type":"response.failed","response":{"error":{"code":"server_error"}}}`, `{"type":"response.failed","response":{"error":{}}}`,
	`{"type":"response.failed","response":{"status":"cancelled"}}`, `{"type":"response.failed","response":{"status":"weird"}}`,
	`{"type":"response.created","response":{"id":"r","model":"m","usage":{"input_tokens":1,"output_tokens":2}}}`,
	`{"object":"response","status":"incomplete","incomplete_details":{"reason":"x"},"usage":{"input_tokens":1}}`,
	`{"object":"response","status":"failed","error":{"code":"c"}}`, `{"error":{"code":"c"}}`, `{"error":{"code":null}}`,
	`{"object":"response","status":"failed","error":"x"}`, `{"object":"response","status":"failed","error":{"code":"two words"}}`,
	`{"type":"error","error":{"code":"c","type":"t"}}`, `{"type":"error","code":"","error":{"type":"t","status":5}}`,
	`{"type":"error","code":"c","error":"x"}`, `{"error":{"type":"t"},"error":null}`, `{"error":{"type":"t"},"type":""}`,
	`{"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":3,"output_tokens":1}}}`,
	`{"type":"message_start","message":null}`, `{"type":"message_start","message":[]}`, `{"type":"message_start","message":{"usage":5}}`,
	`{"type":"content_block_delta","delta":{"partial_json":""}}`, `{"type":"content_block_delta","delta":{"thinking":"t"}}`,
	`{"type":"content_block_delta","delta":null}`, `{"type":"content_block_delta","delta":"x"}`,
	`{"type":"message_delta","delta":{"stop_reason":5}}`, `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`,
	`{"type":"error","error":{"type":""}}`, `{"type":"error","error":null}`, `{"type":"error","error":"x"}`,
	`{"type":"message","id":"i","model":"m","stop_reason":"end_turn","usage":{"input_tokens":1}}`,
	`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f"}},{"inlineData":{}}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"executableCode":{"code":"x"}},{"codeExecutionResult":null}]}}]}`,
	`{"candidates":[{"finishReason":"FINISH_REASON_UNSPECIFIED"}]}`, `{"candidates":[{"finishReason":"MAX_TOKENS"},{"finishReason":"SAFETY"}]}`,
	`{"candidates":[{"finishReason":"ÉTOP"}]}`, `{"candidates":[{"finishReason":"` + strings.Repeat("X", 40) + `"}]}`,
	`{"promptFeedback":{"blockReason":"SAFETY"},"candidates":[{"finishReason":"STOP"}]}`, `{"promptFeedback":null}`, `{"promptFeedback":5}`,
	`{"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4,"thoughtsTokenCount":5}}`,
	`{"usageMetadata":{"promptTokenCount":3,"thoughtsTokenCount":5}}`, `{"usageMetadata":{}}`, `{"usageMetadata":null}`,
	`{"error":{"code":429,"message":"m","status":"RESOURCE_EXHAUSTED"}}`, `{"candidates":[],"modelVersion":"v","responseId":"r"}`,
	`{"candidates":[{"content":{"parts":null}}]}`, `{"candidates":[{"content":{"parts":{}}}]}`, `{"candidates":[{"content":[]}]}`,
	`{"message":{"content":"x"},"done":false}`, `{"message":{"tool_calls":[]}}`, `{"message":{"tool_calls":[{}]}}`, `{"message":5}`,
	`{"response":"x"}`, `{"thinking":"x"}`, `{"done":"true"}`, `{"done":1}`, `{"done":null,"done_reason":"stop"}`,
	`{"done":true,"done_reason":"length","prompt_eval_count":3}`, `{"done":true}`, `{"error":"x","model":"m"}`, `{"error":""}`,
	`{"error":5}`, `{"error":{}}`, `{"error":null,"model":"m","response":"x"}`,
	// Bedrock's events (read as contentBlockDelta, messageStop and metadata).
	`{"contentBlockIndex":0,"delta":{"text":"x"},"p":"abc"}`, `{"delta":{"toolUse":{"input":"{\"a\":"}}}`,
	`{"delta":{"reasoningContent":{"text":"t","signature":"s"}}}`, `{"delta":{"reasoningContent":{"signature":"s"}}}`,
	`{"delta":{"citation":{"title":"x"}}}`, `{"delta":{"toolResult":[{"text":"x"}]}}`, `{"delta":{"image":{"source":{}}}}`,
	`{"Delta":{"ToolUse":{"Input":"x"}}}`, `{"delta":{"tooluse":{"input":{}}}}`, `{"delta":{"toolUse":{"input":[1]}}}`,
	`{"delta":{"toolUse":"x"}}`, `{"delta":{"toolUse":null,"text":""}}`, `{"delta":{"reasoningContent":5}}`, `{"delta":"x"}`,
	`{"delta":{"text":"x"},"delta":null}`, `{"delta":{"toolUse":{"input":"a","input":""}}}`, `{"delta":{"text":"","text":"x"}}`,
	`{"delta":{"reasoningContent":{"text":"x"},"reasoningContent":null}}`, `{"delta":{"reasoningContent":{"text":"","text":"x"}}}`,
	`{"stopReason":"end_turn","additionalModelResponseFields":{"a":1}}`, `{"stopReason":"a","stopReason":null}`, `{"stopReason":5}`,
	`{"stopReason":null}`, `{"stopReason":"guardrail_intervened"}`, `{"stopReason":"\u0065nd_turn"}`, `{"StopReason":"tool_use"}`,
	`{"usage":{"inputTokens":25,"outputTokens":12,"totalTokens":37},"metrics":{"latencyMs":412}}`, `{"usage":{"inputTokens":1},"usage":{"outputTokens":2}}`,
	`{"usage":{"inputTokens":1,"inputTokens":2}}`, `{"usage":{"inputTokens":"3","outputTokens":-1}}`, `{"usage":null}`, `{"usage":[]}`,
	`{"Usage":{"InputTokens":3,"OUTPUTTOKENS":4}}`,
	// Whole values and syntax.
	`null`, ` null `, `[]`, `[{"choices":[{"text":"x"}]}]`, `"x"`, `5`, `true`, ``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,}`,
	`{"choices":[{"text":"x"}]} {}`, `{"choices":[{"text":"x"}]}x`, `{"choices":[{"text":"x"}]}` + "\n", "\t{\"choices\" :\r\n[ { \"text\" : \"x\" } ] }\n",
	`{"choices":[{"text":"x"}]`, `{"choices":[{"text":"x"}}]}`, `{"choices":[{"text":"x"]}]}`, `{"a":[1,2,]}`, `{"a":[,1]}`,
	`{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":1e+}`, `{"a":-0.0e-0}`, `{"a":tru}`, `{"a":nul}`, `{"a":NaN}`,
	`{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12G4"}`, "{\"a\":\"\x01\"}", "{\"a\":\"\x7f\"}", `{"a":"`, `{"a":"\`, `{"a`, `{"a":"x"`,
	"\xef\xbb\xbf{}", "{\"choices\":[{\"text\":\"x\"}]}\x00", `{"a":{"b":[{"c":{}}]},"choices":[{"text":"x"}]}`,
	`{"a":[{]}`, `{"a":{]}`, `{"a":[}`, `{"a":{"b"}}`, `{"a":{"b":1 "c":2}}`, `{"a":[1 2]}`, `{"a" 1}`, `{1:2}`,
	// Nesting at encoding/json's limit and past it, in a skipped member and in a member we read.
	`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `,"choices":[{"text":"x"}]}`,
	`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `,"choices":[{"text":"x"}]}`,
	`{"a":` + strings.Repeat(`{"b":`, 9999) + `1` + strings.Repeat("}", 9999) + `,"choices":[{"text":"x"}]}`,
	`{"a":` + strings.Repeat(`{"b":`, 10000) + `1` + strings.Repeat("}", 10000) + `,"choices":[{"text":"x"}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":` + strings.Repeat("[", 9995) + strings.Repeat("]", 9995) + `}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":` + strings.Repeat("[", 9996) + strings.Repeat("]", 9996) + `}}]}}]}`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	`{"a":` + strings.Repeat(`[{"b":`, 100) + `1` + strings.Repeat(`}]`, 100) + `,"choices":[{"text":"x"}]}`,
	`{"a":` + strings.Repeat(`[{"b":`, 100) + `1` + strings.Repeat(`]}`, 100) + `,"choices":[{"text":"x"}]}`,
	// Bedrock InvokeModelWithResponseStream: a chunk's bytes (checkAgrees reads every event as one
	// too), and its families' members repeated, of the wrong type, and mixed.
	`{"bytes":"eyJnZW5lcmF0aW9uIjoieCJ9"}`, `{"bytes":"eyJnZW5lcmF0aW9uIjoieCJ9","bytes":""}`, `{"bytes":"e30","p":1}`,
	`{"bytes":"eyJn\u005aW5lcmF0aW9uIjoieCJ9"}`, `{"bytes":"eyJn\nZW5lcmF0aW9uIjoieCJ9"}`, `{"bytes":"eyJnZW5lcmF0aW9uIjoieCJ9\u0000"}`,
	`{"bytes":5}`, `{"bytes":null}`, `{"bytes":{}}`, `{"BYTES":"e30="}`, `[]`,
	`{"generation":"x","generation":""}`, `{"generation":"x","stop_reason":"stop","prompt_token_count":3,"generation_token_count":"4"}`,
	`{"outputs":[{"text":"x","stop_reason":"stop"}],"outputs":null}`, `{"outputs":[{"text":"x","text":""},null,{"stop_reason":"length"}]}`,
	`{"outputs":[5]}`, `{"outputs":{}}`, `{"outputText":5}`, `{"outputText":"x","completionReason":"FINISH","inputTextTokenCount":"3"}`,
	`{"amazon-bedrock-invocationMetrics":{"inputTokenCount":1},"AMAZON-BEDROCK-INVOCATIONMETRICS":{"outputTokenCount":2}}`,
	`{"amazon-bedrock-invocationMetrics":{"inputTokenCount":1,"inputTokenCount":2}}`, `{"amazon-bedrock-invocationMetrics":null,"generation":"x"}`,
	`{"amazon-bedrock-invocationMetrics":[],"generation":"x"}`, `{"amazon-bedrock-invocationMetrics":{"inputTokenCount":-1,"outputTokenCount":1.5}}`,
	`{"contentBlockDelta":{"delta":{"text":"x"}},"messageStop":null}`, `{"messageStop":{"stopReason":"end_turn"},"metadata":{"usage":null}}`,
	`{"contentBlockDelta":{"delta":{"text":"x"}},"contentBlockDelta":{"delta":{}}}`, `{"messageStop":5}`, `{"metadata":{"usage":{"inputTokens":1}}}`,
	`{"event_type":"text-generation","text":"x","event_type":"stream-end"}`, `{"event_type":"stream-end","finish_reason":"MAX_TOKENS"}`,
	`{"event_type":5,"text":"x"}`, `{"event_type":"text-generation","text":{}}`,
	`{"event_type":"tool-calls-chunk","tool_call_delta":{"parameters":"x","parameters":""}}`, `{"event_type":"tool-calls-chunk","tool_call_delta":{"text":{}}}`,
	`{"event_type":"tool-calls-chunk","tool_call_delta":null,"text":""}`, `{"event_type":"tool-calls-chunk","tool_call_delta":5}`,
	`{"event_type":"tool-calls-chunk","tool_call_delta":{"name":"f","index":0,"parameters":5}}`, `{"event_type":"tool-calls-generation","tool_calls":[{"name":"f"}],"text":"x"}`,
	`{"choices":[{"text":"x","stop_reason":"stop"}]}`, `{"choices":[{"text":"x","stop_reason":"stop","stop_reason":null}]}`,
	`{"choices":[{"stop_reason":"a\u0062"},{"stop_reason":true},{"finish_reason":"","stop_reason":"c"}]}`, `{"choices":[{"stop_reason":"s","finish_reason":5}]}`,
	`{"choices":[{"delta":{"content":"x"}}],"generation":"y","outputs":[{"text":"z"}]}`, `{"choices":null,"usage":{"prompt_tokens":1},"event_type":"x"}`,
	`{"type":"content_block_delta","delta":{"text":"x"},"generation":"y"}`, `{"Event_Type":"text-generation","Text":"x","outputs":[{"text":"y"}]}`,
	"{\"outputs\":[{\"text\":\"x\"}],\"generation\":\"y\",\"amazon-bedrock-invocationMetric\u017f\":{\"inputTokenCount\":3}}",
}

// TestScanHostile: on events built to tell them apart, the scanner records what the encoding/json
// reading records; only repeated and escaped or non-ASCII names are left to it.
func TestScanHostile(t *testing.T) {
	fallbacks := 0
	for _, h := range hostile {
		fallbacks += checkAgrees(t, []byte(h))
	}
	if fallbacks == 0 {
		t.Fatal("no event was left to encoding/json")
	}
	// The scanner decides these alone.
	for _, h := range []string{
		`{"CHOICES":[{"Delta":{"Content":"x"}}],"ID":"a","Model":"m"}`, `{"id":5}`, `{"choices":[{"text":"\u0078"}]}`,
		`{"choices":[{"delta":{"\u0063ontent":"x"}}]}`, "{\"type\":\"content_block_delta\",\"delta\":{\"thin\u212Aing\":\"x\"}}",
		`{"type":"content_block_delta","delta":{"thin\u212aing":"x"}}`, `{"\u017ftatus":"completed","object":"response"}`,
		`{"😀":{"你好":["مرحبا"]},"choices":[{"text":"\ud83d\ude00"}],"\ud83d\ude00":1,"\ud800":2,"a\nb":3,"\"":4}`,
	} {
		for _, p := range allProtos {
			if _, _, n := readBoth(p, true, []byte(h)); n != 0 {
				t.Errorf("%q as protocol %d was left to encoding/json", h, p)
			}
		}
	}
}

// validJSON is the scanner's verdict on a whole value.
func validJSON(d []byte) bool {
	var s jsonScan
	s.reset(d)
	return s.top(func(s *jsonScan) bool { _, ok := s.skip(); return ok }) == scanOK
}

// TestScanValid: the scanner accepts exactly the JSON encoding/json accepts.
func TestScanValid(t *testing.T) {
	check := func(d string) {
		if got, want := validJSON([]byte(d)), json.Valid([]byte(d)); got != want {
			t.Errorf("valid(%.80q) = %t, encoding/json says %t", d, got, want)
		}
	}
	for _, h := range hostile {
		check(h)
		for i := 0; i < len(h) && i < 300; i++ { // every prefix
			check(h[:i])
		}
	}
	for _, evs := range loadCorpus(t) {
		for _, e := range evs {
			check(e.data)
		}
	}
}

// TestScanAllocs: reading a content delta allocates nothing once the response's id and model are
// recorded, and neither does reading hostile events again (a skipped value nested to the limit
// grows the scanner's stack once, to 157 words).
func TestScanAllocs(t *testing.T) {
	events := [][]byte{}
	for _, e := range benchEvents {
		events = append(events, []byte(e.data))
	}
	for _, h := range hostile[len(hostile)-10:] {
		events = append(events, []byte(h))
	}
	for _, d := range events {
		for _, p := range allProtos {
			for _, name := range eventNames(p) {
				name := []byte(name)
				o := newObserver(call{proto: p}, newRec(), framingSSE, true, DefaultMaxEventBytes)
				o.event(name, d, false)
				if n := testing.AllocsPerRun(20, func() { o.event(name, d, false) }); n != 0 {
					t.Errorf("protocol %d %s: %.80q: %.0f allocations an event", p, name, d, n)
				}
				if len(o.sc.deep) > (maxDepth+63)/64 {
					t.Errorf("%d words of stack", len(o.sc.deep))
				}
			}
		}
	}
}

// TestAnthropicPlaceholderOutput: message_start's output_tokens (1) is a placeholder that
// message_delta replaces; a stream that stops before message_delta keeps message_start's input
// tokens and no output count, both ways of reading.
func TestAnthropicPlaceholderOutput(t *testing.T) {
	start := []byte(`{"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":25,"output_tokens":1}}}`)
	text := []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`)
	end := []byte(`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":15}}`)
	for _, c := range []struct {
		name    string
		events  [][]byte
		in, out int
	}{
		{"cut before message_delta", [][]byte{start, text, text}, 25, -1},
		{"whole", [][]byte{start, text, text, end}, 25, 15},
	} {
		scan, ref, _ := readBoth(protoAnthropic, true, c.events...)
		for _, o := range []outcome{scan, ref} {
			if o.rec.in != c.in || o.rec.out != c.out {
				t.Errorf("%s: usage %d/%d, want %d/%d", c.name, o.rec.in, o.rec.out, c.in, c.out)
			}
		}
	}
}

// errorObjects are error members of every shape: named by code, type or status, as a string or a
// number, by none of them or by no code, and errors that are no object.
var errorObjects = []string{
	`{"message":"m","type":"server_error","param":null,"code":"overloaded"}`,
	`{"message":"m","type":"server_error","param":null,"code":null}`,
	`{"message":"m","type":"server_error"}`,
	`{"message":"m","status":"UNAVAILABLE"}`,
	`{"message":"m","code":"","type":"","status":"UNAVAILABLE"}`,
	`{"message":"m","type":"server_error","code":429}`,
	`{"message":"m","code":-1.5e3}`,
	`{"message":"m","code":true,"type":"server_error"}`,
	`{"message":"m","code":{},"type":[]}`,
	`{"message":"m","Code":"upper","TYPE":"t"}`,
	`{"message":"m","code":"a","code":"b"}`,
	`{"message":"m","code":"server\u005ferror"}`,
	`{"message":"m"}`,
	`{"message":"m","type":"server_error","code":"` + strings.Repeat("x", 65) + `"}`,
	`{"message":"m","type":"server_error","code":"two words"}`,
	`{"message":"m","type":"Invalid prompt: the prompt you sent"}`,
	`"server_error"`,
	`["server_error"]`,
	`5`,
	`{}`,
}

// TestChatErrorLikeWrappers: the SDK wrappers name a Chat Completions error event with
// wrap.ErrorObjectType of its error member; the scanner and the reference name it the same.
func TestChatErrorLikeWrappers(t *testing.T) {
	for _, obj := range errorObjects {
		want := wrap.ErrorObjectType([]byte(obj))
		scan, ref, _ := readBoth(protoChat, true, []byte(`{"error":`+obj+`}`))
		if scan.errType != want || ref.errType != want {
			t.Errorf("error %s: scanner %q, reference %q, wrappers %q", obj, scan.errType, ref.errType, want)
		}
	}
}

// TestResponsesErrorLikeChat: in a Responses stream, an event whose error member names the error
// ({"error": {...}}, which openai-go returns as a stream error), and an error event (type "error")
// without a code of its own whose error is nested, as OpenAI sends it, are named as a Chat
// Completions error event is, by wrap.ErrorObjectType. The scanner named the first by its code
// alone and an error that is no object not at all, and the second "stream_error".
func TestResponsesErrorLikeChat(t *testing.T) {
	for _, obj := range errorObjects {
		want := wrap.ErrorObjectType([]byte(obj))
		for _, ev := range []string{
			`{"error":` + obj + `}`,
			`{"type":"error","sequence_number":2,"error":` + obj + `}`,
			`{"type":"error","code":null,"error":` + obj + `}`,
		} {
			scan, ref, _ := readBoth(protoResponses, true, []byte(ev))
			if scan.errType != want || ref.errType != want {
				t.Errorf("%s: scanner %q, reference %q, want %q", ev, scan.errType, ref.errType, want)
			}
		}
	}
	// An error event's own code comes first; no error member, or a null one, names no error.
	for ev, want := range map[string]string{
		`{"type":"error","code":"rate_limit_exceeded","error":{"code":"other"}}`: "rate_limit_exceeded",
		`{"type":"error","code":"two words","error":{"code":"other"}}`:           streamErrorType,
		`{"type":"error","error":null}`:                                          streamErrorType,
		`{"error":null}`:                                                         "",
		`{"object":"response","status":"completed","error":"x"}`:                 "",
		`{"object":"response","status":"failed","error":{"type":"t"}}`:           itlconv.ErrorTypeResponseFailed,
	} {
		scan, ref, _ := readBoth(protoResponses, true, []byte(ev))
		if scan.errType != want || ref.errType != want {
			t.Errorf("%s: scanner %q, reference %q, want %q", ev, scan.errType, ref.errType, want)
		}
	}
}

// TestResponseFailedCodeIsACode: a failed or cancelled response is named by its error's code when
// that is a code, else "response_failed" or "response_cancelled", as the package doc says and as
// openaiitl names it; the scanner named a code that is no code (free text, too long) "stream_error".
func TestResponseFailedCodeIsACode(t *testing.T) {
	long := strings.Repeat("x", 65)
	for ev, want := range map[string]string{
		`{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error"}}}`:  "server_error",
		`{"type":"response.failed","response":{"status":"failed","error":{"code":500}}}`:             "500",
		`{"type":"response.failed","response":{"status":"failed","error":{"code":null}}}`:            itlconv.ErrorTypeResponseFailed,
		`{"type":"response.failed","response":{"status":"failed","error":{"code":"two words"}}}`:     itlconv.ErrorTypeResponseFailed,
		`{"type":"response.failed","response":{"status":"failed","error":{"code":"` + long + `"}}}`:  itlconv.ErrorTypeResponseFailed,
		`{"type":"response.failed","response":{"status":"cancelled","error":{"code":"two words"}}}`:  "response_cancelled",
		`{"object":"response","status":"failed","error":{"code":"Your prompt mentioned something"}}`: itlconv.ErrorTypeResponseFailed,
	} {
		scan, ref, _ := readBoth(protoResponses, true, []byte(ev))
		if scan.errType != want || ref.errType != want {
			t.Errorf("%s: scanner %q, reference %q, want %q", ev, scan.errType, ref.errType, want)
		}
	}
}

// TestChatStopReason: on /chat/completions a choice's stop_reason is no finish reason (vLLM's is
// the stop string or token id beside finish_reason); only InvokeModelWithResponseStream's
// OpenAI-shaped families read it (DeepSeek's).
func TestChatStopReason(t *testing.T) {
	for _, p := range []protocol{protoChat, protoCompletions} {
		scan, ref, _ := readBoth(p, true, []byte(`{"choices":[{"text":"x","stop_reason":"stop"}]}`),
			[]byte(`{"choices":[{"delta":{"content":"x"},"finish_reason":"stop","stop_reason":"</s>"}]}`))
		if !scan.equal(ref) || strings.Join(scan.rec.reasons, ",") != "stop" || scan.ended {
			t.Errorf("protocol %d: %v, reference %v; want the reason stop, once, and no end", p, scan, ref)
		}
	}
}

// TestNothingAfterDone: in a Chat Completions or Completions stream nothing after [DONE] is read
// (an error event, a chunk, usage, a finish reason), by the scanner or the reference: every SDK
// stops reading at [DONE], so neither the application nor the SDK wrappers see it. Before, an
// error event after [DONE] named the generation, and chunks and usage after it counted, when the
// bytes were read. An error before [DONE] still names it.
func TestNothingAfterDone(t *testing.T) {
	for _, p := range []protocol{protoChat, protoCompletions} {
		chunk := []byte(`{"id":"c","choices":[{"index":0,"delta":{"content":"a"},"text":"a","finish_reason":null}]}`)
		finish := []byte(`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		errEv := []byte(`{"error":{"message":"m","type":"server_error","code":"overloaded"}}`)
		usage := []byte(`{"id":"c","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":99}}`)
		late := []byte(`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`)
		done := []byte(`[DONE]`)
		scan, ref, _ := readBoth(p, true, chunk, finish, done, errEv, chunk, usage, late)
		for name, o := range map[string]outcome{"scanner": scan, "reference": ref} {
			if o.errType != "" || !o.ended || o.rec.chunks != 1 || o.rec.out != -1 || len(o.rec.reasons) != 1 {
				t.Errorf("protocol %d, %s: %v; want no error, 1 chunk, no usage, one finish reason", p, name, o)
			}
		}
		scan, ref, _ = readBoth(p, true, chunk, finish, errEv, done)
		if scan.errType != "overloaded" || ref.errType != "overloaded" {
			t.Errorf("protocol %d, an error before [DONE]: scanner %q, reference %q, want overloaded", p, scan.errType, ref.errType)
		}
	}
}
