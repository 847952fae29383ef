package httpitl_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/bedrock"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"go.opentelemetry.io/otel/codes"

	"github.com/otelitl/itl/internal/wraptest"
)

// The real aws-sdk-go-v2 bedrockruntime client calls InvokeModelWithResponseStream, and the real
// anthropic-sdk-go bedrock package streams Claude, on a local server that writes the AWS event
// stream as Bedrock does (chunk events of {"bytes": base64}, encoded with the SDK's own
// eventstream encoder), pausing between the chunks, through httpitl.NewTransport.

// bedrockChunk is a chunk event whose bytes are data; content: data carries output, and httpitl
// must count it.
func bedrockChunk(data string, content bool) bedrockMsg {
	m := bedrockEvent("chunk", `{"bytes":"`+base64.StdEncoding.EncodeToString([]byte(data))+`"`+bedrockPad+`}`)
	m.content = content
	return m
}

// invocationMetrics is the member Bedrock adds to the last chunk of every family.
func invocationMetrics(in, out int) string {
	return fmt.Sprintf(`"amazon-bedrock-invocationMetrics":{"inputTokenCount":%d,"outputTokenCount":%d,"invocationLatency":640,"firstByteLatency":210}`, in, out)
}

// claudeChunks is a Claude reply: thinking, text and a tool call, 5 events that carry output.
func claudeChunks() []bedrockMsg {
	return []bedrockMsg{
		bedrockChunk(`{"type":"message_start","message":{"id":"msg_bdrk_017","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":31,"output_tokens":1}}}`, false),
		bedrockChunk(`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`, false),
		bedrockChunk(`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"The user asks"}}`, true),
		bedrockChunk(`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2lnbmF0dXJl"}}`, false),
		bedrockChunk(`{"type":"content_block_stop","index":0}`, false),
		bedrockChunk(`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`, false),
		bedrockChunk(`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Let me"}}`, true),
		bedrockChunk(`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" check."}}`, true),
		bedrockChunk(`{"type":"content_block_stop","index":1}`, false),
		bedrockChunk(`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_bdrk_1","name":"weather","input":{}}}`, false),
		bedrockChunk(`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}`, false),
		bedrockChunk(`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\":"}}`, true),
		bedrockChunk(`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"Paris\"}"}}`, true),
		bedrockChunk(`{"type":"content_block_stop","index":2}`, false),
		bedrockChunk(`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":27}}`, false),
		bedrockChunk(`{"type":"message_stop",`+invocationMetrics(32, 28)+`}`, false),
	}
}

// invokeFamilies are a reply of each family the transport reads, with what its span must say.
// Where the family gives its own counts, the invocation metrics differ from them, to show which
// wins.
var invokeFamilies = []struct {
	name, model, body string
	msgs              []bedrockMsg
	attrs             map[string]string
}{
	{name: "Claude", model: "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/claude1profile",
		body: `{"anthropic_version":"bedrock-2023-05-31","max_tokens":64,"messages":[{"role":"user","content":"Weather in Paris?"}]}`,
		msgs: claudeChunks(),
		attrs: map[string]string{"otelitl.chunk.count": "5", "gen_ai.usage.input_tokens": "31", "gen_ai.usage.output_tokens": "27",
			"gen_ai.response.finish_reasons": `["tool_use"]`, "gen_ai.response.model": "claude-sonnet-4-20250514", "gen_ai.response.id": "msg_bdrk_017"}},
	{name: "Llama", model: "us.meta.llama3-2-1b-instruct-v1:0", body: `{"prompt":"Hi","max_gen_len":64}`,
		msgs: []bedrockMsg{
			bedrockChunk(`{"generation":"Hello","prompt_token_count":12,"generation_token_count":1,"stop_reason":null}`, true),
			bedrockChunk(`{"generation":" there","prompt_token_count":null,"generation_token_count":2,"stop_reason":null}`, true),
			bedrockChunk(`{"generation":"!","prompt_token_count":null,"generation_token_count":3,"stop_reason":null}`, true),
			bedrockChunk(`{"generation":"","prompt_token_count":null,"generation_token_count":4,"stop_reason":"stop",`+invocationMetrics(13, 5)+`}`, false),
		},
		attrs: map[string]string{"otelitl.chunk.count": "3", "gen_ai.usage.input_tokens": "12", "gen_ai.usage.output_tokens": "4",
			"gen_ai.response.finish_reasons": `["stop"]`}},
	{name: "Mistral", model: "mistral.mistral-large-2402-v1:0", body: `{"prompt":"<s>[INST] Hi [/INST]","max_tokens":64}`,
		msgs: []bedrockMsg{
			bedrockChunk(`{"outputs":[{"text":"Hello","stop_reason":null}]}`, true),
			bedrockChunk(`{"outputs":[{"text":" there","stop_reason":null}]}`, true),
			bedrockChunk(`{"outputs":[{"text":"","stop_reason":"length"}],`+invocationMetrics(9, 2)+`}`, false),
		},
		attrs: map[string]string{"otelitl.chunk.count": "2", "gen_ai.usage.input_tokens": "9", "gen_ai.usage.output_tokens": "2",
			"gen_ai.response.finish_reasons": `["length"]`}},
	{name: "Titan", model: "amazon.titan-text-premier-v1:0", body: `{"inputText":"Hi","textGenerationConfig":{"maxTokenCount":64}}`,
		msgs: []bedrockMsg{
			bedrockChunk(`{"outputText":"Hello","index":0,"totalOutputTextTokenCount":1,"completionReason":null,"inputTextTokenCount":4}`, true),
			bedrockChunk(`{"outputText":" there","index":0,"totalOutputTextTokenCount":2,"completionReason":"FINISH","inputTextTokenCount":null,`+invocationMetrics(5, 3)+`}`, true),
		},
		attrs: map[string]string{"otelitl.chunk.count": "2", "gen_ai.usage.input_tokens": "4", "gen_ai.usage.output_tokens": "2",
			"gen_ai.response.finish_reasons": `["FINISH"]`}},
	{name: "Nova", model: "us.amazon.nova-lite-v1:0", body: `{"messages":[{"role":"user","content":[{"text":"Hi"}]}]}`,
		msgs: []bedrockMsg{
			bedrockChunk(`{"messageStart":{"role":"assistant"}}`, false),
			bedrockChunk(`{"contentBlockDelta":{"delta":{"text":"Hello"},"contentBlockIndex":0}}`, true),
			bedrockChunk(`{"contentBlockDelta":{"delta":{"text":" there"},"contentBlockIndex":0}}`, true),
			bedrockChunk(`{"contentBlockStop":{"contentBlockIndex":0}}`, false),
			bedrockChunk(`{"messageStop":{"stopReason":"end_turn"}}`, false),
			bedrockChunk(`{"metadata":{"usage":{"inputTokens":6,"outputTokens":2},"metrics":{},"trace":{}},`+invocationMetrics(7, 3)+`}`, false),
		},
		attrs: map[string]string{"otelitl.chunk.count": "2", "gen_ai.usage.input_tokens": "6", "gen_ai.usage.output_tokens": "2",
			"gen_ai.response.finish_reasons": `["end_turn"]`}},
	{name: "Cohere Command R", model: "cohere.command-r-v1:0", body: `{"message":"Hi","max_tokens":64,"stream":false}`,
		msgs: []bedrockMsg{
			bedrockChunk(`{"is_finished":false,"event_type":"stream-start","generation_id":"g1"}`, false),
			bedrockChunk(`{"is_finished":false,"event_type":"text-generation","text":"Hello"}`, true),
			bedrockChunk(`{"is_finished":false,"event_type":"text-generation","text":" there"}`, true),
			bedrockChunk(`{"is_finished":true,"event_type":"stream-end","response":{"text":"Hello there","finish_reason":"COMPLETE"},"finish_reason":"COMPLETE",`+invocationMetrics(8, 2)+`}`, false),
		},
		attrs: map[string]string{"otelitl.chunk.count": "2", "gen_ai.usage.input_tokens": "8", "gen_ai.usage.output_tokens": "2",
			"gen_ai.response.finish_reasons": `["COMPLETE"]`}},
	{name: "Cohere Command R calling a tool", model: "cohere.command-r-plus-v1:0",
		body: `{"message":"Weather in Paris?","tools":[{"name":"weather","description":"d","parameter_definitions":{"city":{"type":"str","required":true}}}]}`,
		msgs: []bedrockMsg{
			bedrockChunk(`{"is_finished":false,"event_type":"stream-start","generation_id":"g2"}`, false),
			bedrockChunk(`{"is_finished":false,"event_type":"tool-calls-chunk","text":"I will look up the weather."}`, true),
			bedrockChunk(`{"is_finished":false,"event_type":"tool-calls-chunk","tool_call_delta":{"index":0,"name":"weather"}}`, false),
			bedrockChunk(`{"is_finished":false,"event_type":"tool-calls-chunk","tool_call_delta":{"index":0,"parameters":"{\"city\":"}}`, true),
			bedrockChunk(`{"is_finished":false,"event_type":"tool-calls-chunk","tool_call_delta":{"index":0,"parameters":"\"Paris\"}"}}`, true),
			bedrockChunk(`{"is_finished":false,"event_type":"tool-calls-generation","text":"I will look up the weather.","tool_calls":[{"name":"weather","parameters":{"city":"Paris"}}]}`, false),
			bedrockChunk(`{"is_finished":true,"event_type":"stream-end","response":{"text":"","finish_reason":"COMPLETE"},"finish_reason":"COMPLETE",`+invocationMetrics(40, 15)+`}`, false),
		},
		attrs: map[string]string{"otelitl.chunk.count": "3", "gen_ai.usage.input_tokens": "40", "gen_ai.usage.output_tokens": "15",
			"gen_ai.response.finish_reasons": `["COMPLETE"]`}},
	{name: "Cohere Command R calling a tool, the calls whole", model: "cohere.command-r-v1:0",
		body: `{"message":"Weather in Paris?","tools":[{"name":"weather","description":"d","parameter_definitions":{"city":{"type":"str","required":true}}}]}`,
		msgs: []bedrockMsg{
			bedrockChunk(`{"is_finished":false,"event_type":"stream-start","generation_id":"g3"}`, false),
			bedrockChunk(`{"is_finished":false,"event_type":"tool-calls-generation","text":"I will look up the weather.","tool_calls":[{"name":"weather","parameters":{"city":"Paris"}}]}`, true),
			bedrockChunk(`{"is_finished":true,"event_type":"stream-end","response":{"text":"","finish_reason":"COMPLETE"},"finish_reason":"COMPLETE",`+invocationMetrics(40, 15)+`}`, false),
		},
		attrs: map[string]string{"otelitl.chunk.count": "1", "gen_ai.usage.input_tokens": "40", "gen_ai.usage.output_tokens": "15",
			"gen_ai.response.finish_reasons": `["COMPLETE"]`}},
	{name: "gpt-oss", model: "openai.gpt-oss-120b-1:0", body: `{"messages":[{"role":"user","content":"Hi"}],"max_completion_tokens":64}`,
		msgs: []bedrockMsg{
			bedrockChunk(`{"id":"chatcmpl-b1","object":"chat.completion.chunk","created":1754400000,"model":"openai.gpt-oss-120b-1:0","choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}`, false),
			bedrockChunk(`{"id":"chatcmpl-b1","object":"chat.completion.chunk","created":1754400000,"model":"openai.gpt-oss-120b-1:0","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}`, true),
			bedrockChunk(`{"id":"chatcmpl-b1","object":"chat.completion.chunk","created":1754400000,"model":"openai.gpt-oss-120b-1:0","choices":[{"index":0,"delta":{"content":" there"},"finish_reason":null}]}`, true),
			bedrockChunk(`{"id":"chatcmpl-b1","object":"chat.completion.chunk","created":1754400000,"model":"openai.gpt-oss-120b-1:0","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":70,"completion_tokens":2,"total_tokens":72},`+invocationMetrics(71, 3)+`}`, false),
		},
		attrs: map[string]string{"otelitl.chunk.count": "2", "gen_ai.usage.input_tokens": "70", "gen_ai.usage.output_tokens": "2",
			"gen_ai.response.finish_reasons": `["stop"]`, "gen_ai.response.model": "openai.gpt-oss-120b-1:0", "gen_ai.response.id": "chatcmpl-b1"}},
	{name: "DeepSeek", model: "us.deepseek.r1-v1:0", body: `{"prompt":"Hi","max_tokens":64}`,
		msgs: []bedrockMsg{
			bedrockChunk(`{"choices":[{"text":"Hello","stop_reason":null}]}`, true),
			bedrockChunk(`{"choices":[{"text":" there","stop_reason":null}]}`, true),
			bedrockChunk(`{"choices":[{"text":"","stop_reason":"stop"}],`+invocationMetrics(7, 2)+`}`, false),
		},
		attrs: map[string]string{"otelitl.chunk.count": "2", "gen_ai.usage.input_tokens": "7", "gen_ai.usage.output_tokens": "2",
			"gen_ai.response.finish_reasons": `["stop"]`}},
	{name: "Jamba", model: "ai21.jamba-1-5-mini-v1:0", body: `{"messages":[{"role":"user","content":"Hi"}],"max_tokens":64}`,
		msgs: []bedrockMsg{
			bedrockChunk(`{"id":"chat-b2","choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}],"usage":null}`, false),
			bedrockChunk(`{"id":"chat-b2","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}],"usage":null}`, true),
			bedrockChunk(`{"id":"chat-b2","choices":[{"index":0,"delta":{"content":" there"},"finish_reason":null}],"usage":null}`, true),
			bedrockChunk(`{"id":"chat-b2","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"total_tokens":14,"completion_tokens":2},`+invocationMetrics(13, 3)+`}`, false),
		},
		attrs: map[string]string{"otelitl.chunk.count": "2", "gen_ai.usage.input_tokens": "12", "gen_ai.usage.output_tokens": "2",
			"gen_ai.response.finish_reasons": `["stop"]`, "gen_ai.response.id": "chat-b2"}},
}

// runInvoke returns a call of InvokeModelWithResponseStream that reads every event (each chunk as
// its bytes); after stopAfter events (when not 0) it closes the stream instead.
func runInvoke(model, body string, stopAfter int) func(*testing.T, *bedrockruntime.Client) converse {
	return func(t *testing.T, c *bedrockruntime.Client) converse {
		out, err := c.InvokeModelWithResponseStream(context.Background(), &bedrockruntime.InvokeModelWithResponseStreamInput{
			ModelId: aws.String(model), Body: []byte(body), ContentType: aws.String("application/json"), Accept: aws.String("application/json"),
		})
		if err != nil {
			return converse{callErr: err.Error()}
		}
		stream := out.GetStream()
		var got converse
		for ev := range stream.Events() {
			if ch, ok := ev.(*types.ResponseStreamMemberChunk); ok {
				got.events = append(got.events, string(ch.Value.Bytes))
			} else {
				got.events = append(got.events, fmt.Sprintf("%T", ev))
			}
			if stopAfter > 0 && len(got.events) == stopAfter {
				break
			}
		}
		_ = stream.Close()
		if err := stream.Err(); err != nil {
			got.streamErr = fmt.Sprintf("%T %v", err, err)
		}
		return got
	}
}

// chunkData returns the bytes of each chunk of msgs, as the application must read them.
func chunkData(t *testing.T, msgs []bedrockMsg) []string {
	var out []string
	for _, m := range msgs {
		var p struct{ Bytes []byte }
		if err := json.Unmarshal(m.msg.Payload, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, string(p.Bytes))
	}
	return out
}

// TestBedrockInvokeStream: for each family, the span of a whole InvokeModelWithResponseStream
// reply has the model from the URL (an application inference profile's ARN for Claude, which
// names no family), the provider, the family's usage and finish reason, and one chunk per event
// that carries output, each when the application read it, following the server's pacing; and the
// application read every chunk's bytes unchanged.
func TestBedrockInvokeStream(t *testing.T) {
	for _, fam := range invokeFamilies {
		t.Run(fam.name, func(t *testing.T) {
			tr := &http.Transport{}
			srv, got, span, attrs := checkRunSameAsPlain(t, runInvoke(fam.model, fam.body, 0), tr, tr, 6*time.Millisecond, fam.msgs...)
			if got.callErr != "" || got.streamErr != "" || strings.Join(got.events, "\n") != strings.Join(chunkData(t, fam.msgs), "\n") {
				t.Fatalf("the application saw %q, errors %q %q", got.events, got.callErr, got.streamErr)
			}
			wraptest.CheckTimeline(t, span, attrs, srv.Sent(), wraptest.Busy())
			host, port := hostPort(srv.URL)
			want := map[string]string{
				"gen_ai.operation.name": "chat", "gen_ai.provider.name": "aws.bedrock", "gen_ai.request.model": fam.model,
				"gen_ai.request.stream": "true", "server.address": host, "server.port": port, "http.response.status_code": "200", "error.type": "",
			}
			for k, v := range fam.attrs {
				want[k] = v
			}
			checkAttrs(t, span, attrs, want)
			if span.Name != "chat "+fam.model {
				t.Errorf("span name %q", span.Name)
			}
		})
	}
}

// TestBedrockInvokeByteAtATime: the base transport returns one byte per Read: every frame, and
// every chunk's base64, reaches httpitl split at every byte.
func TestBedrockInvokeByteAtATime(t *testing.T) {
	tr := &http.Transport{}
	fam := invokeFamilies[0]
	_, _, _, attrs := checkRunSameAsPlain(t, runInvoke(fam.model, fam.body, 0), cutRT{base: tr, each: true}, tr, 0, fam.msgs...)
	for k, want := range fam.attrs {
		if g := attrs[attrKey(k)].String(); g != want {
			t.Errorf("%s = %q, want %q", k, g, want)
		}
	}
}

// TestBedrockInvokeFailures: an exception mid-stream and at the start, a chunk whose bytes are not
// base64 (the SDK fails the stream there), an OpenAI-shaped family's error chunk (which the SDK
// passes on), a stream cut before its last chunk, and an application that stops reading: the
// application sees with httpitl what it sees without, and the span says how the reply ended, with
// no exception message.
func TestBedrockInvokeFailures(t *testing.T) {
	llama := invokeFamilies[1]
	jamba := invokeFamilies[len(invokeFamilies)-1]
	if jamba.name != "Jamba" {
		t.Fatalf("the last family is %s", jamba.name)
	}
	text := llama.msgs[:3]
	with := func(msgs ...bedrockMsg) []bedrockMsg { return append(append([]bedrockMsg(nil), text...), msgs...) }
	badBase64 := bedrockEvent("chunk", `{"bytes":"@@ not base64 @@"`+bedrockPad+`}`)
	for _, tc := range []struct {
		name      string
		jamba     bool // a Jamba call, else a Llama one
		msgs      []bedrockMsg
		stopAfter int
		errType   string
		chunks    int64
		sdkErr    string // a word of the error the application gets from the stream
	}{
		{name: "an OpenAI-shaped error chunk", jamba: true, msgs: []bedrockMsg{jamba.msgs[0], jamba.msgs[1],
			bedrockChunk(`{"error":{"code":"model_error","type":"server_error","message":"SECRET the model failed"}}`, false), jamba.msgs[3]},
			errType: "model_error", chunks: 1},
		{name: "model stream error mid-stream", msgs: with(bedrockException("modelStreamErrorException",
			`{"message":"SECRET the model failed","originalStatusCode":500,"originalMessage":"SECRET"}`), llama.msgs[3]),
			errType: "modelStreamErrorException", chunks: 3, sdkErr: "ModelStreamErrorException"},
		{name: "throttled at the start", msgs: []bedrockMsg{bedrockException("throttlingException", `{"message":"SECRET slow down"}`)},
			errType: "throttlingException", sdkErr: "ThrottlingException"},
		{name: "bytes not base64", msgs: with(badBase64, llama.msgs[3]), errType: "incomplete_stream", chunks: 3, sdkErr: "base64"},
		{name: "a chunk of null", msgs: with(bedrockEvent("chunk", `null`), llama.msgs[3]), errType: "incomplete_stream", chunks: 3, sdkErr: "deserialize event chunk"},
		{name: "bytes after a chunk's object, which the SDK does not read", msgs: with(bedrockEvent("chunk",
			`{"bytes":"`+base64.StdEncoding.EncodeToString([]byte(`{"generation":" more","generation_token_count":4}`))+`"} {"bytes":`), llama.msgs[3]),
			chunks: 4},
		{name: "cut before the last chunk", msgs: text, errType: "incomplete_stream", chunks: 3},
		{name: "the application stops reading", msgs: llama.msgs, stopAfter: 2, errType: "cancelled", chunks: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &http.Transport{}
			run := runInvoke(llama.model, llama.body, tc.stopAfter)
			if tc.jamba {
				run = runInvoke(jamba.model, jamba.body, tc.stopAfter)
			}
			_, got, span, attrs := checkRunSameAsPlain(t, run, tr, tr, 2*time.Millisecond, tc.msgs...)
			if tc.sdkErr != "" && !strings.Contains(got.streamErr, tc.sdkErr) {
				t.Errorf("the application got %q, want an error with %q", got.streamErr, tc.sdkErr)
			}
			if g := attrs[attrKey("error.type")].AsString(); g != tc.errType {
				t.Errorf("error.type %q, want %q", g, tc.errType)
			}
			if g := attrs[attrKey("otelitl.chunk.count")].AsInt64(); tc.chunks >= 0 && g != tc.chunks {
				t.Errorf("chunk.count %d, want %d", g, tc.chunks)
			}
			if (span.Status.Code == codes.Error) != (tc.errType != "") {
				t.Errorf("span status %v with error.type %q", span.Status, tc.errType)
			}
			all := span.Status.Description
			for _, kv := range span.Attributes {
				all += kv.Value.String()
			}
			if strings.Contains(all, "SECRET") {
				t.Errorf("an exception's message reached the span: %q", all)
			}
		})
	}
}

// anthropicBedrock streams a Claude reply with anthropic-sdk-go's bedrock package (static
// credentials, srv as the endpoint) over hc, and returns every event the application read, as
// its type and JSON, and the stream's error.
func anthropicBedrock(t *testing.T, srv *bedrockServer, hc *http.Client, model string) converse {
	t.Helper()
	c := anthropic.NewClient(
		bedrock.WithConfig(aws.Config{Region: "us-east-1",
			Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: "AKIDFAKE", SecretAccessKey: "fake-secret", Source: "test"}, nil
			})}),
		aoption.WithBaseURL(srv.URL), aoption.WithHTTPClient(hc), aoption.WithMaxRetries(0),
	)
	stream := c.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
		Model: anthropic.Model(model), MaxTokens: 64,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Paris?"))},
	})
	var got converse
	for stream.Next() {
		ev := stream.Current()
		got.events = append(got.events, ev.Type+" "+ev.RawJSON())
	}
	if err := stream.Err(); err != nil {
		got.streamErr = err.Error()
	}
	_ = stream.Close()
	return got
}

// TestBedrockInvokeAnthropicSDK: anthropic-sdk-go's bedrock package, which streams Claude through
// InvokeModelWithResponseStream (and turns the chunks into the SSE events of Anthropic's API above
// the transport): the application reads with httpitl what it reads without, every event of the
// reply, and the span has the model from the URL, Claude's usage, finish reason, response model
// and id, and one chunk per event that carries output, following the server's pacing.
func TestBedrockInvokeAnthropicSDK(t *testing.T) {
	quietGC(t)
	const model = "us.anthropic.claude-sonnet-4-20250514-v1:0"
	msgs := claudeChunks()
	tr := &http.Transport{}
	srv, plainSrv := newBedrockServer(t, 6*time.Millisecond, msgs...), newBedrockServer(t, 6*time.Millisecond, msgs...)
	hc, exp := tracedBedrock(t, tr)
	check := wraptest.NoLeak(t, tr)
	got := anthropicBedrock(t, srv, hc, model)
	want := anthropicBedrock(t, plainSrv, &http.Client{Transport: tr}, model)
	if got.streamErr != "" || strings.Join(got.events, "\n") != strings.Join(want.events, "\n") || got.streamErr != want.streamErr {
		t.Fatalf("with httpitl the application saw\n%s\n%s\nwithout\n%s\n%s", strings.Join(got.events, "\n"), got.streamErr,
			strings.Join(want.events, "\n"), want.streamErr)
	}
	if len(got.events) != len(msgs) {
		t.Fatalf("the application read %d events of %d", len(got.events), len(msgs))
	}
	if !wraptest.WaitSpan(exp) {
		t.Fatal("no span")
	}
	span, attrs := oneSpan(t, exp)
	check()
	if p := srv.paths[0]; p != "/model/us.anthropic.claude-sonnet-4-20250514-v1:0/invoke-with-response-stream" &&
		p != "/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/invoke-with-response-stream" {
		t.Errorf("the SDK asked for %s", p)
	}
	wraptest.CheckTimeline(t, span, attrs, srv.Sent(), wraptest.Busy())
	want2 := map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "aws.bedrock", "gen_ai.request.model": model, "error.type": ""}
	for k, v := range invokeFamilies[0].attrs {
		want2[k] = v
	}
	checkAttrs(t, span, attrs, want2)
}
