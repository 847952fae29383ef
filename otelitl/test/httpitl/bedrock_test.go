package httpitl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl/httpitl"
)

// The real aws-sdk-go-v2 bedrockruntime client calls ConverseStream on a local server that writes
// the AWS event stream as Bedrock does (frames encoded with the SDK's own eventstream encoder),
// pausing between the deltas, through httpitl.NewTransport.

// bedrockMsg is one message the server writes: an event-stream message, or raw bytes.
type bedrockMsg struct {
	msg     eventstream.Message
	raw     []byte // written instead of msg when not nil
	content bool   // a delta that carries output: httpitl must count it as a chunk
}

// The "p" member Bedrock pads every event's payload with.
const bedrockPad = `,"p":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0"`

func bedrockEvent(eventType, payload string) bedrockMsg {
	var m eventstream.Message
	m.Headers.Set(":event-type", eventstream.StringValue(eventType))
	m.Headers.Set(":content-type", eventstream.StringValue("application/json"))
	m.Headers.Set(":message-type", eventstream.StringValue("event"))
	m.Payload = []byte(payload)
	return bedrockMsg{msg: m}
}

func bedrockDelta(index int, delta string) bedrockMsg {
	m := bedrockEvent("contentBlockDelta", fmt.Sprintf(`{"contentBlockIndex":%d,"delta":%s%s}`, index, delta, bedrockPad))
	m.content = true
	return m
}

func bedrockText(text string) bedrockMsg { return bedrockDelta(0, fmt.Sprintf(`{"text":%q}`, text)) }

func bedrockException(exceptionType, payload string) bedrockMsg {
	var m eventstream.Message
	m.Headers.Set(":exception-type", eventstream.StringValue(exceptionType))
	m.Headers.Set(":content-type", eventstream.StringValue("application/json"))
	m.Headers.Set(":message-type", eventstream.StringValue("exception"))
	m.Payload = []byte(payload)
	return bedrockMsg{msg: m}
}

// corrupt returns m encoded with one payload byte changed: its message CRC no longer holds.
func corrupt(t testing.TB, m bedrockMsg) bedrockMsg {
	var b bytes.Buffer
	if err := eventstream.NewEncoder().Encode(&b, m.msg); err != nil {
		t.Fatal(err)
	}
	raw := b.Bytes()
	raw[len(raw)-6] ^= 1
	return bedrockMsg{raw: raw}
}

var (
	bedrockStart = bedrockEvent("messageStart", `{"role":"assistant"`+bedrockPad+`}`)
	bedrockStop  = func(reason string) bedrockMsg {
		return bedrockEvent("messageStop", `{"stopReason":"`+reason+`"`+bedrockPad+`}`)
	}
	bedrockMetadata = bedrockEvent("metadata", `{"usage":{"inputTokens":31,"outputTokens":10,"totalTokens":41},"metrics":{"latencyMs":88}`+bedrockPad+`}`)
)

// bedrockReply is a whole reply: reasoning, text, a tool call, 9 deltas that carry output and
// three that do not.
func bedrockReply() []bedrockMsg {
	msgs := []bedrockMsg{bedrockStart,
		bedrockDelta(0, `{"reasoningContent":{"text":"The user wants"}}`),
		bedrockDelta(0, `{"reasoningContent":{"text":" the weather."}}`),
		{msg: bedrockDelta(0, `{"reasoningContent":{"signature":"c2lnbmF0dXJl"}}`).msg},
		bedrockEvent("contentBlockStop", `{"contentBlockIndex":0`+bedrockPad+`}`),
	}
	for _, w := range []string{"Let", " me", " check", " the", " weather"} {
		msgs = append(msgs, bedrockDelta(1, fmt.Sprintf(`{"text":%q}`, w)))
	}
	msgs = append(msgs, bedrockMsg{msg: bedrockDelta(1, `{"text":""}`).msg},
		bedrockEvent("contentBlockStop", `{"contentBlockIndex":1`+bedrockPad+`}`),
		bedrockEvent("contentBlockStart", `{"contentBlockIndex":2,"start":{"toolUse":{"toolUseId":"tooluse_1","name":"weather"}}`+bedrockPad+`}`),
		bedrockDelta(2, `{"toolUse":{"input":"{\"city\":"}}`),
		bedrockDelta(2, `{"toolUse":{"input":"\"Paris\"}"}}`),
		bedrockMsg{msg: bedrockDelta(2, `{"toolUse":{"input":""}}`).msg},
		bedrockEvent("contentBlockStop", `{"contentBlockIndex":2`+bedrockPad+`}`),
		bedrockStop("tool_use"), bedrockMetadata)
	return msgs
}

// bedrockServer answers ConverseStream (and InvokeModelWithResponseStream) with its messages, each gap after the last, and logs when
// it began to write each content delta.
type bedrockServer struct {
	*httptest.Server
	msgs []bedrockMsg
	gap  time.Duration

	mu    sync.Mutex
	sent  []time.Time
	paths []string // the escaped paths asked for
}

func newBedrockServer(t testing.TB, gap time.Duration, msgs ...bedrockMsg) *bedrockServer {
	s := &bedrockServer{msgs: msgs, gap: gap}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *bedrockServer) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	s.paths = append(s.paths, r.URL.EscapedPath())
	s.mu.Unlock()
	if r.Method != http.MethodPost || (!strings.HasSuffix(r.URL.Path, "/converse-stream") && !strings.HasSuffix(r.URL.Path, "/invoke-with-response-stream")) {
		http.Error(w, `{"message":"not found"}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	w.Header().Set("X-Amzn-Requestid", "4a8e8b2c-0000-4000-8000-000000000001")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	fl.Flush()
	enc := eventstream.NewEncoder()
	for _, m := range s.msgs {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(s.gap):
		}
		b := m.raw
		if b == nil {
			var buf bytes.Buffer
			if err := enc.Encode(&buf, m.msg); err != nil {
				panic(err)
			}
			b = buf.Bytes()
		}
		sent := time.Now() // before the write: no client reads the message earlier
		_, _ = w.Write(b)
		fl.Flush()
		if m.content {
			s.mu.Lock()
			s.sent = append(s.sent, sent)
			s.mu.Unlock()
		}
	}
}

func (s *bedrockServer) Sent() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.sent...)
}

// bedrockClient returns a bedrockruntime client for srv, with static fake credentials, over hc.
func bedrockClient(srv *bedrockServer, hc *http.Client) *bedrockruntime.Client {
	return bedrockruntime.New(bedrockruntime.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDFAKE", SecretAccessKey: "fake-secret", Source: "test"}, nil
		}),
		HTTPClient:       hc,
		RetryMaxAttempts: 1,
	})
}

// converse is what an application saw of a ConverseStream call: every event, as JSON, and the
// errors.
type converse struct {
	events             []string
	callErr, streamErr string
}

// runConverse calls ConverseStream and reads every event; after stopAfter events (when not 0) it
// closes the stream instead.
func runConverse(t *testing.T, c *bedrockruntime.Client, model string, stopAfter int) converse {
	t.Helper()
	out, err := c.ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{
		ModelId: aws.String(model),
		Messages: []types.Message{{Role: types.ConversationRoleUser,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "What is the weather in Paris?"}}}},
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(64)},
	})
	if err != nil {
		return converse{callErr: err.Error()}
	}
	stream := out.GetStream()
	var got converse
	for ev := range stream.Events() {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		got.events = append(got.events, fmt.Sprintf("%T %s", ev, b))
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

func (c converse) equal(d converse) bool {
	return strings.Join(c.events, "\n") == strings.Join(d.events, "\n") && c.callErr == d.callErr && c.streamErr == d.streamErr
}

// tracedBedrock returns an HTTP client whose transport is httpitl's over base, and its exporter.
func tracedBedrock(t *testing.T, base http.RoundTripper) (*http.Client, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return &http.Client{Transport: httpitl.NewTransport(base, httpitl.WithTracerProvider(tp))}, exp
}

// sdkRace is an error aws-sdk-go-v2's ConverseStream sometimes gets on its first read of the
// body, with or without httpitl (about once in 300 runs here, through a plain *http.Transport):
// the connection is closed under the event-stream reader. It is no part of what is tested here.
const sdkRace = "use of closed network connection"

// raceAttempts is how many times a run that meets sdkRace is made: on a loaded machine the race
// came three times in a row once (a Jamba InvokeModelWithResponseStream run, with make check
// beside it), where 1 in 300 runs meet it on a quiet one.
const raceAttempts = 10

// checkSameAsPlain runs the call through httpitl over base and without it, each on a server of its
// own with the same script, and fails when the application saw anything different. It returns the
// traced server, what the application saw, and the span. A run that meets sdkRace is run again.
func checkSameAsPlain(t *testing.T, base http.RoundTripper, idle *http.Transport, model string, stopAfter int, gap time.Duration, msgs ...bedrockMsg) (
	*bedrockServer, converse, tracetest.SpanStub, map[attribute.Key]attribute.Value) {
	t.Helper()
	run := func(t *testing.T, c *bedrockruntime.Client) converse { return runConverse(t, c, model, stopAfter) }
	return checkRunSameAsPlain(t, run, base, idle, gap, msgs...)
}

// checkRunSameAsPlain is checkSameAsPlain for any call: run makes it and reads the reply.
func checkRunSameAsPlain(t *testing.T, run func(*testing.T, *bedrockruntime.Client) converse, base http.RoundTripper, idle *http.Transport,
	gap time.Duration, msgs ...bedrockMsg) (*bedrockServer, converse, tracetest.SpanStub, map[attribute.Key]attribute.Value) {
	t.Helper()
	quietGC(t)
	for attempt := 1; ; attempt++ {
		srv, plainSrv := newBedrockServer(t, gap, msgs...), newBedrockServer(t, gap, msgs...)
		hc, exp := tracedBedrock(t, base)
		check := wraptest.NoLeak(t, idle)
		got := run(t, bedrockClient(srv, hc))
		want := run(t, bedrockClient(plainSrv, &http.Client{Transport: base}))
		if attempt < raceAttempts && (strings.Contains(got.streamErr, sdkRace) || strings.Contains(want.streamErr, sdkRace)) {
			t.Logf("attempt %d met the SDK's race (%q, %q): once more", attempt, got.streamErr, want.streamErr)
			wraptest.WaitSpan(exp)
			check()
			continue
		}
		if !got.equal(want) {
			t.Errorf("with httpitl the application saw\n%s\n%s %s\nwithout\n%s\n%s %s",
				strings.Join(got.events, "\n"), got.callErr, got.streamErr, strings.Join(want.events, "\n"), want.callErr, want.streamErr)
		}
		if !wraptest.WaitSpan(exp) {
			t.Fatal("no span")
		}
		span, attrs := oneSpan(t, exp)
		check()
		return srv, got, span, attrs
	}
}

// TestBedrockConverseStream: the span of a whole ConverseStream reply has its model (an
// application inference profile's ARN, which the SDK escapes into the path), provider, usage,
// finish reason, and one chunk per delta that carries output, each when the application read it,
// following the server's pacing.
func TestBedrockConverseStream(t *testing.T) {
	const model = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/fake1profile"
	tr := &http.Transport{}
	srv, got, span, attrs := checkSameAsPlain(t, tr, tr, model, 0, 8*time.Millisecond, bedrockReply()...)
	if got.callErr != "" || got.streamErr != "" || len(got.events) != len(bedrockReply()) {
		t.Fatalf("the application saw %d events, errors %q %q", len(got.events), got.callErr, got.streamErr)
	}
	if p := srv.paths[0]; !strings.Contains(p, "%2Ffake1profile") {
		t.Errorf("the SDK asked for %s: the model id's '/' was not escaped, which this test is about", p)
	}
	wraptest.CheckTimeline(t, span, attrs, srv.Sent(), wraptest.Busy())
	host, port := hostPort(srv.URL)
	checkAttrs(t, span, attrs, map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "aws.bedrock", "gen_ai.request.model": model,
		"gen_ai.request.stream": "true", "gen_ai.usage.input_tokens": "31", "gen_ai.usage.output_tokens": "10",
		"gen_ai.response.finish_reasons": `["tool_use"]`, "otelitl.chunk.count": "9", "server.address": host, "server.port": port,
		"http.response.status_code": "200", "error.type": "",
	})
	if span.Name != "chat "+model {
		t.Errorf("span name %q", span.Name)
	}
}

// TestBedrockConverseStreamByteAtATime: the SDK reads the event stream a few bytes at a time (the
// prelude's fields, the CRCs), and here the base transport returns one byte per Read too: every
// frame reaches httpitl split at every byte.
func TestBedrockConverseStreamByteAtATime(t *testing.T) {
	tr := &http.Transport{}
	_, _, _, attrs := checkSameAsPlain(t, cutRT{base: tr, each: true}, tr, "amazon.nova-lite-v1:0", 0, 0, bedrockReply()...)
	for k, want := range map[string]string{"gen_ai.request.model": "amazon.nova-lite-v1:0", "otelitl.chunk.count": "9",
		"gen_ai.usage.output_tokens": "10", "gen_ai.response.finish_reasons": `["tool_use"]`, "error.type": ""} {
		if g := attrs[attrKey(k)].String(); g != want {
			t.Errorf("%s = %q, want %q", k, g, want)
		}
	}
}

// TestBedrockFailures: an exception mid-stream and at the start, a stream cut before messageStop, a
// frame whose CRC does not hold, an event whose payload the SDK cannot decode (it fails the stream
// there, and closes the body: incomplete_stream as for the bad CRC, not cancelled), and an
// application that stops reading: the application sees with httpitl what it sees without, and the
// span says how the reply ended, with no exception message.
func TestBedrockFailures(t *testing.T) {
	text := []bedrockMsg{bedrockStart, bedrockText("Once"), bedrockText(" upon"), bedrockText(" a time")}
	with := func(msgs ...bedrockMsg) []bedrockMsg { return append(append([]bedrockMsg(nil), text...), msgs...) }
	for _, tc := range []struct {
		name      string
		msgs      []bedrockMsg
		stopAfter int
		errType   string
		chunks    int64
		sdkErr    string // a word of the error the application gets from the stream
	}{
		{name: "model stream error mid-stream", msgs: with(bedrockException("modelStreamErrorException",
			`{"message":"SECRET the model failed","originalStatusCode":500,"originalMessage":"SECRET"}`), bedrockText("never read")),
			errType: "modelStreamErrorException", chunks: 3, sdkErr: "ModelStreamErrorException"},
		{name: "throttled at the start", msgs: []bedrockMsg{bedrockException("throttlingException", `{"message":"SECRET slow down"}`)},
			errType: "throttlingException", sdkErr: "ThrottlingException"},
		{name: "cut before messageStop", msgs: text, errType: "incomplete_stream", chunks: 3},
		{name: "a frame whose CRC does not hold", msgs: with(corrupt(t, bedrockText("garbled")), bedrockText("after"), bedrockStop("end_turn"), bedrockMetadata),
			errType: "incomplete_stream", chunks: 3, sdkErr: "checksum"},
		{name: "the application stops reading", msgs: with(bedrockText("more"), bedrockStop("end_turn"), bedrockMetadata), stopAfter: 2,
			errType: "cancelled", chunks: -1},
		{name: "an event the SDK cannot decode", msgs: with(bedrockEvent("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"cut"`),
			bedrockText("after"), bedrockStop("end_turn"), bedrockMetadata), errType: "incomplete_stream", chunks: 3, sdkErr: "deserialize event contentBlockDelta"},
		{name: "a messageStop of null", msgs: with(bedrockEvent("messageStop", `null`), bedrockMetadata),
			errType: "incomplete_stream", chunks: 3, sdkErr: "deserialize event messageStop"},
		{name: "bytes after an event's object, which the SDK does not read", msgs: with(bedrockEvent("contentBlockDelta",
			`{"contentBlockIndex":0,"delta":{"text":" and"}}{"not":`), bedrockEvent("messageStop", `{"stopReason":"end_turn"} trailing`), bedrockMetadata),
			chunks: 4},
		{name: "complete, no metadata", msgs: with(bedrockStop("max_tokens")), chunks: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &http.Transport{}
			_, got, span, attrs := checkSameAsPlain(t, tr, tr, "anthropic.claude-3-5-haiku-20241022-v1:0", tc.stopAfter, 2*time.Millisecond, tc.msgs...)
			if tc.sdkErr != "" && !strings.Contains(got.streamErr, tc.sdkErr) {
				t.Errorf("the application got %q, want an error with %q", got.streamErr, tc.sdkErr)
			}
			if g := attrs[attrKey("error.type")].AsString(); g != tc.errType {
				t.Errorf("error.type %q, want %q", g, tc.errType)
			}
			if g := attrs[attrKey("otelitl.chunk.count")].AsInt64(); tc.chunks >= 0 && g != tc.chunks {
				t.Errorf("chunk.count %d, want %d", g, tc.chunks)
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
