package anthropicitl_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/bedrock"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/vertex"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl"
	"github.com/otelitl/itl/otelitl/anthropicitl"
	"github.com/otelitl/itl/otelitl/httpitl"
)

// The wrapper under anthropic-sdk-go's bedrock package (static credentials, SigV4-signed requests
// to a local server writing the AWS event stream as Bedrock's InvokeModelWithResponseStream does,
// frames encoded with aws-sdk-go-v2's own encoder) and under its vertex package, compared with
// httpitl's transport under the same SDK over the same bytes.

// claudeEvents is a Claude reply as Bedrock's chunks carry it: thinking, text and a tool call, 5
// events that carry output; Bedrock's invocation metrics ride on message_stop.
var claudeEvents = []string{
	`{"type":"message_start","message":{"id":"msg_bdrk_017","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":31,"output_tokens":1}}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"The user asks"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2lnbmF0dXJl"}}`,
	`{"type":"content_block_stop","index":0}`,
	`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Let me"}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" check."}}`,
	`{"type":"content_block_stop","index":1}`,
	`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_bdrk_1","name":"weather","input":{}}}`,
	`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}`,
	`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\":"}}`,
	`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"Paris\"}"}}`,
	`{"type":"content_block_stop","index":2}`,
	`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":27}}`,
	`{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":32,"outputTokenCount":28,"invocationLatency":640,"firstByteLatency":210}}`,
}

// claudeWant is what a span of claudeEvents says, whoever records it.
var claudeWant = map[string]string{
	"gen_ai.operation.name": "chat", "otelitl.chunk.count": "5", "gen_ai.usage.input_tokens": "31", "gen_ai.usage.output_tokens": "27",
	"gen_ai.response.finish_reasons": `["tool_use"]`, "gen_ai.response.model": "claude-sonnet-4-20250514",
	"gen_ai.response.id": "msg_bdrk_017", "error.type": "",
}

// eventStreamServer answers every request with frames, each written and flushed on its own, and
// keeps the escaped paths asked for.
type eventStreamServer struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newEventStreamServer(t *testing.T, frames [][]byte) *eventStreamServer {
	s := &eventStreamServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.EscapedPath())
		s.mu.Unlock()
		if r.Header.Get("Authorization") == "" || !strings.HasSuffix(r.URL.Path, "/invoke-with-response-stream") {
			http.Error(w, `{"message":"not found"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		for _, f := range frames {
			_, _ = w.Write(f)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// Paths returns the escaped paths asked for so far.
func (s *eventStreamServer) Paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

// chunkFrames encodes each event as Bedrock's chunk event, {"bytes": base64} padded as Bedrock pads it.
func chunkFrames(t *testing.T, events []string) [][]byte {
	var frames [][]byte
	for _, ev := range events {
		frames = append(frames, frame(t, "event", "chunk", `{"bytes":"`+base64.StdEncoding.EncodeToString([]byte(ev))+`","p":"abcdefghijklmnopqrstuvwxyz"}`))
	}
	return frames
}

func bedrockConfig() option.RequestOption {
	return bedrock.WithConfig(aws.Config{Region: "us-east-1",
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDFAKE", SecretAccessKey: "fake-secret", Source: "test"}, nil
		})})
}

// read streams params' reply with c (through the wrapper when wrapped) and returns what the
// application saw: each event's type and JSON, and the stream's error.
func read(c anthropic.Client, in *otelitl.Instrumentation, wrapped bool, p anthropic.MessageNewParams, opts ...option.RequestOption) string {
	var s interface {
		Next() bool
		Current() anthropic.MessageStreamEventUnion
		Err() error
		Close() error
	}
	if wrapped {
		s = anthropicitl.NewStreaming(context.Background(), in, &c.Messages, p, opts...)
	} else {
		s = c.Messages.NewStreaming(context.Background(), p, opts...)
	}
	var b strings.Builder
	for s.Next() {
		fmt.Fprintf(&b, "%s %s\n", s.Current().Type, s.Current().RawJSON())
	}
	fmt.Fprintf(&b, "error: %v", s.Err())
	_ = s.Close()
	return b.String()
}

// attrsOf returns the only span's attributes as strings (a slice as JSON-like text).
func attrsOf(t *testing.T, exp *tracetest.InMemoryExporter) map[string]string {
	t.Helper()
	_, a := wraptest.OneSpan(t, exp)
	m := map[string]string{}
	for k, v := range a {
		if v.Type() == attribute.STRINGSLICE {
			m[string(k)] = `["` + strings.Join(v.AsStringSlice(), `","`) + `"]`
			continue
		}
		m[string(k)] = v.String()
	}
	return m
}

// bothWays reads the reply of a client made with opts twice, through httpitl's transport and
// through the wrapper, checks that the application saw the same, and returns both spans'
// attributes.
func bothWays(t *testing.T, p anthropic.MessageNewParams, opts ...option.RequestOption) (viaTransport, wrapped map[string]string) {
	t.Helper()
	in, exp := wraptest.Tracing(t)
	hc := &http.Client{Transport: httpitl.NewTransport(http.DefaultTransport, httpitl.WithInstrumentation(in))}
	// The HTTP client first: the vertex package wraps the one given before it with its OAuth
	// transport.
	plain := read(anthropic.NewClient(append([]option.RequestOption{option.WithHTTPClient(hc), option.WithMaxRetries(0)}, opts...)...), nil, false, p)
	viaTransport = attrsOf(t, exp)

	in, exp = wraptest.Tracing(t)
	got := read(anthropic.NewClient(append([]option.RequestOption{option.WithHTTPClient(&http.Client{}), option.WithMaxRetries(0)}, opts...)...), in, true, p)
	if got != plain {
		t.Errorf("through the wrapper the application saw\n%s\nthrough httpitl's transport\n%s", got, plain)
	}
	return viaTransport, attrsOf(t, exp)
}

// checkSame checks that both spans have want's values, and the same for every key of either
// (but the server port, each run's own).
func checkSame(t *testing.T, viaTransport, wrapped, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if wrapped[k] != v {
			t.Errorf("wrapper: %s = %q, want %q", k, wrapped[k], v)
		}
		if viaTransport[k] != v {
			t.Errorf("httpitl: %s = %q, want %q", k, viaTransport[k], v)
		}
	}
	for _, k := range []string{"gen_ai.provider.name", "gen_ai.request.model", "otelitl.chunk.count", "gen_ai.usage.input_tokens",
		"gen_ai.usage.output_tokens", "gen_ai.response.finish_reasons", "gen_ai.response.model", "gen_ai.response.id", "error.type", "server.address"} {
		if viaTransport[k] != wrapped[k] {
			t.Errorf("%s: wrapper %q, httpitl %q", k, wrapped[k], viaTransport[k])
		}
	}
}

// TestBedrockLikeHTTPITL: Claude on Amazon Bedrock through anthropic-sdk-go's bedrock package is
// recorded by the wrapper as httpitl's transport records it: provider aws.bedrock, the model id of
// the InvokeModelWithResponseStream URL (a cross-region profile's id, an inference profile's ARN,
// escaped in the path) as the request model, the chunks, usage, finish reason, response model and
// id. The wrapper recorded "anthropic", and read the AWS event stream below the bedrock package's
// translation to SSE as if it were SSE: no chunk, no usage, and incomplete_stream.
func TestBedrockLikeHTTPITL(t *testing.T) {
	for _, model := range []string{"us.anthropic.claude-sonnet-4-20250514-v1:0", "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/claude1profile"} {
		t.Run(model, func(t *testing.T) {
			srv := newEventStreamServer(t, chunkFrames(t, claudeEvents))
			p := params
			p.Model = anthropic.Model(model)
			viaTransport, wrapped := bothWays(t, p, bedrockConfig(), option.WithBaseURL(srv.URL))
			want := map[string]string{"gen_ai.provider.name": "aws.bedrock", "gen_ai.request.model": model}
			for k, v := range claudeWant {
				want[k] = v
			}
			checkSame(t, viaTransport, wrapped, want)
			if ps := srv.Paths(); len(ps) != 2 || ps[0] != ps[1] || !strings.HasSuffix(ps[0], "/invoke-with-response-stream") {
				t.Errorf("the SDK asked for %q", ps)
			}
		})
	}
}

// TestAnthropicUnchanged: a plain client of Anthropic's API (/v1/messages, here on loopback) is
// recorded as anthropic with the params' model, as httpitl's transport records it.
func TestAnthropicUnchanged(t *testing.T) {
	srv := wraptest.NewServer(t, events, 0)
	viaTransport, wrapped := bothWays(t, params, option.WithBaseURL(srv.URL), option.WithAPIKey("key"))
	checkSame(t, viaTransport, wrapped, map[string]string{"gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5",
		"otelitl.chunk.count": "4", "error.type": ""})
}

// frame encodes one event-stream message of messageType ("event", "exception") and type typ.
func frame(t *testing.T, messageType, typ, payload string) []byte {
	var m eventstream.Message
	m.Headers.Set(":"+messageType+"-type", eventstream.StringValue(typ))
	m.Headers.Set(":content-type", eventstream.StringValue("application/json"))
	m.Headers.Set(":message-type", eventstream.StringValue(messageType))
	m.Payload = []byte(payload)
	var b bytes.Buffer
	if err := eventstream.NewEncoder().Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// exceptionFrame is a Bedrock exception message, as the event stream carries it.
func exceptionFrame(t *testing.T, exceptionType, payload string) []byte {
	return frame(t, "exception", exceptionType, payload)
}

// TestBedrockFailuresLikeHTTPITL: a Bedrock stream that fails (an exception mid-stream or at the
// start, a chunk whose bytes are no base64, one cut before message_stop) is recorded by the
// wrapper as httpitl's transport records it, through the bedrock package: the exception's type,
// incomplete_stream for what the SDK cannot read or never got, the chunks before.
func TestBedrockFailuresLikeHTTPITL(t *testing.T) {
	frames := chunkFrames(t, claudeEvents)
	text := frames[:8] // message_start to the second text delta: 3 chunks
	with := func(more ...[]byte) [][]byte { return append(append([][]byte(nil), text...), more...) }
	for _, tc := range []struct {
		name    string
		frames  [][]byte
		errType string
		chunks  string
	}{
		{"model stream error mid-stream", with(exceptionFrame(t, "modelStreamErrorException", `{"message":"the model failed","originalStatusCode":500}`), frames[8]),
			"modelStreamErrorException", "3"},
		{"throttled at the start", [][]byte{exceptionFrame(t, "throttlingException", `{"message":"slow down"}`)}, "throttlingException", "0"},
		{"bytes not base64", with(frame(t, "event", "chunk", `{"bytes":"@@ not base64 @@"}`), frames[8]), "incomplete_stream", "3"},
		{"cut before message_stop", frames[:len(frames)-1], "incomplete_stream", "5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newEventStreamServer(t, tc.frames)
			viaTransport, wrapped := bothWays(t, params, bedrockConfig(), option.WithBaseURL(srv.URL))
			checkSame(t, viaTransport, wrapped, map[string]string{"gen_ai.provider.name": "aws.bedrock", "error.type": tc.errType, "otelitl.chunk.count": tc.chunks})
		})
	}
}

// vertexConfig is anthropic-sdk-go's vertex package with static Google credentials (no network,
// no Application Default Credentials), for project my-project in region, sending to base.
func vertexConfig(region, base string) []option.RequestOption {
	creds := &google.Credentials{ProjectID: "my-project", TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "ya29.test", TokenType: "Bearer"})}
	return []option.RequestOption{vertex.WithCredentials(context.Background(), region, "my-project", creds), option.WithBaseURL(base)}
}

// TestVertexLikeHTTPITL: Claude on Vertex AI through anthropic-sdk-go's vertex package
// (streamRawPredict under publishers/anthropic, Anthropic's SSE events) is recorded by the wrapper
// as httpitl's transport records it: provider gcp.vertex_ai, the URL's model (the params' model,
// a version after '@'), the chunks, usage, finish reason, response model and id.
func TestVertexLikeHTTPITL(t *testing.T) {
	for _, region := range []string{"us-east5", "global"} {
		t.Run(region, func(t *testing.T) {
			srv := wraptest.NewServer(t, events, 0)
			p := params
			p.Model = "claude-sonnet-4-5@20250929"
			viaTransport, wrapped := bothWays(t, p, vertexConfig(region, srv.URL)...)
			checkSame(t, viaTransport, wrapped, map[string]string{"gen_ai.provider.name": "gcp.vertex_ai", "gen_ai.request.model": "claude-sonnet-4-5@20250929",
				"otelitl.chunk.count": "4", "gen_ai.usage.input_tokens": "25", "gen_ai.usage.output_tokens": "15", "gen_ai.response.finish_reasons": `["end_turn"]`,
				"gen_ai.response.model": "claude-sonnet-4-5-20250929", "gen_ai.response.id": "msg_1", "error.type": ""})
			urls, hs := srv.URLs(), srv.Headers()
			want := "/v1/projects/my-project/locations/" + region + "/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"
			if len(urls) != 2 || urls[0].Path != want || urls[1].Path != want {
				t.Errorf("the SDK asked for %v, want %s twice", urls, want)
			}
			for _, h := range hs {
				if h.Get("Authorization") != "Bearer ya29.test" {
					t.Errorf("Authorization %q: the vertex package's client was not used", h.Get("Authorization"))
				}
			}
		})
	}
}

// TestVertexRawPredictByHTTPITL: httpitl's transport reads Claude's unstreamed reply on Vertex AI
// (rawPredict, one Messages API message as JSON) as Anthropic's: provider gcp.vertex_ai, the URL's
// model, the reply's usage, finish reason, model and id; the application gets the message it gets
// without the transport.
func TestVertexRawPredictByHTTPITL(t *testing.T) {
	const msg = `{"id":"msg_vrtx_01","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Hello"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":3}}`
	paths := make(chan string, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths <- r.URL.Path
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(msg))
	}))
	t.Cleanup(srv.Close)
	p := params
	p.Model = "claude-sonnet-4-5@20250929"
	in, exp := wraptest.Tracing(t)
	hc := &http.Client{Transport: httpitl.NewTransport(http.DefaultTransport, httpitl.WithInstrumentation(in))}
	c := anthropic.NewClient(append([]option.RequestOption{option.WithHTTPClient(hc), option.WithMaxRetries(0)}, vertexConfig("us-east5", srv.URL)...)...)
	m, err := c.Messages.New(context.Background(), p)
	if err != nil || m.ID != "msg_vrtx_01" || len(m.Content) != 1 || m.Content[0].Text != "Hello" {
		t.Fatalf("the application got %+v, %v", m, err)
	}
	if len(paths) != 1 {
		t.Errorf("the SDK made %d requests, want 1", len(paths))
	} else if p := <-paths; !strings.HasSuffix(p, "/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict") {
		t.Errorf("the SDK asked for %q", p)
	}
	a := attrsOf(t, exp)
	for k, v := range map[string]string{"gen_ai.provider.name": "gcp.vertex_ai", "gen_ai.request.model": "claude-sonnet-4-5@20250929",
		"gen_ai.usage.input_tokens": "12", "gen_ai.usage.output_tokens": "3", "gen_ai.response.finish_reasons": `["end_turn"]`,
		"gen_ai.response.model": "claude-sonnet-4-5-20250929", "gen_ai.response.id": "msg_vrtx_01", "error.type": ""} {
		if a[k] != v {
			t.Errorf("%s = %q, want %q", k, a[k], v)
		}
	}
}

// TestWithProvider: WithProvider names the provider, given to the client or to one call (the
// call's wins), over what the URL tells (Bedrock's invoke path); an empty one leaves the URL's. The
// request is sent as without it.
func TestWithProvider(t *testing.T) {
	for _, tc := range []struct {
		name         string
		client, call []option.RequestOption
		bedrock      bool
		want         string
	}{
		{"client", []option.RequestOption{anthropicitl.WithProvider("my-gateway")}, nil, false, "my-gateway"},
		{"call", nil, []option.RequestOption{anthropicitl.WithProvider("aws.bedrock")}, false, "aws.bedrock"},
		{"call over client", []option.RequestOption{anthropicitl.WithProvider("my-gateway")}, []option.RequestOption{anthropicitl.WithProvider("gcp.vertex_ai")}, false, "gcp.vertex_ai"},
		{"over Bedrock's path", []option.RequestOption{anthropicitl.WithProvider("my-gateway")}, nil, true, "my-gateway"},
		{"empty", []option.RequestOption{anthropicitl.WithProvider("")}, nil, true, "aws.bedrock"},
		{"anthropic over Bedrock's path", nil, []option.RequestOption{anthropicitl.WithProvider("anthropic")}, true, "anthropic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var base string
			var opts []option.RequestOption
			if tc.bedrock {
				srv := newEventStreamServer(t, chunkFrames(t, claudeEvents))
				base, opts = srv.URL, []option.RequestOption{bedrockConfig()}
			} else {
				srv := wraptest.NewServer(t, events, 0)
				base, opts = srv.URL, []option.RequestOption{option.WithAPIKey("key")}
			}
			in, exp := wraptest.Tracing(t)
			c := anthropic.NewClient(append(append(tc.client, opts...), option.WithBaseURL(base), option.WithMaxRetries(0))...)
			got := read(c, in, true, params, tc.call...)
			if !strings.HasSuffix(got, "error: <nil>") || strings.Count(got, "\n") < 5 {
				t.Errorf("the application saw\n%s", got)
			}
			if p := attrsOf(t, exp)["gen_ai.provider.name"]; p != tc.want {
				t.Errorf("gen_ai.provider.name %q, want %q", p, tc.want)
			}
		})
	}
}
