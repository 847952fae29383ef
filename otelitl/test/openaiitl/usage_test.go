package openaiitl_test

import (
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl"
)

// TestUsagePartLikeHTTPITL: a usage object that leaves a count out gives no value for it, as httpitl
// records for the same bytes: an unknown count is not 0 (a dashboard would average the zero in).
// The wrapper recorded openai-go's zero value for the count left out, in Chat Completions and
// Responses streams.
func TestUsagePartLikeHTTPITL(t *testing.T) {
	usage := func(u string) wraptest.Event {
		return wraptest.Event{Data: `{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","choices":[],"usage":` + u + `}`}
	}
	delta := resp("response.output_text.delta", `,"item_id":"i","output_index":0,"content_index":0,"delta":"Hi"`)
	completed := func(u string) wraptest.Event {
		return resp("response.completed", `,"response":{"id":"resp_1","object":"response","created_at":1,"model":"gpt-4.1","status":"completed","output":[],"usage":`+u+`}`)
	}
	for _, tc := range []struct {
		name    string
		events  []wraptest.Event
		read    func(c openai.Client, in *otelitl.Instrumentation) (int, error)
		in, out int64 // -1: none
	}{
		{"chat, prompt tokens only", []wraptest.Event{chatEvents[2], finishChunk("stop"), usage(`{"prompt_tokens":11}`), done}, readChat, 11, -1},
		{"chat, completion tokens only", []wraptest.Event{chatEvents[2], finishChunk("stop"), usage(`{"completion_tokens":2}`), done}, readChat, -1, 2},
		{"chat, a null count", []wraptest.Event{chatEvents[2], finishChunk("stop"), usage(`{"prompt_tokens":11,"completion_tokens":null}`), done}, readChat, 11, -1},
		{"chat, both", []wraptest.Event{chatEvents[2], finishChunk("stop"), usage(`{"prompt_tokens":11,"completion_tokens":2}`), done}, readChat, 11, 2},
		{"responses, input tokens only", []wraptest.Event{delta, completed(`{"input_tokens":11}`)}, readResponses, 11, -1},
		{"responses, output tokens only", []wraptest.Event{delta, completed(`{"output_tokens":2}`)}, readResponses, -1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := wraptest.NewServer(t, tc.events, time.Millisecond)
			viaTransport, wrapped := spansBothWays(t, srv, tc.read)
			for _, k := range []struct {
				key  attribute.Key
				want int64
			}{{semconv.GenAIUsageInputTokensKey, tc.in}, {semconv.GenAIUsageOutputTokensKey, tc.out}} {
				for who, a := range map[string]map[attribute.Key]attribute.Value{"httpitl": viaTransport, "openaiitl": wrapped} {
					v, ok := a[k.key]
					switch {
					case k.want < 0 && ok:
						t.Errorf("%s recorded %s %d, want none", who, k.key, v.AsInt64())
					case k.want >= 0 && (!ok || v.AsInt64() != k.want):
						t.Errorf("%s recorded %s %v (present %t), want %d", who, k.key, v.AsInt64(), ok, k.want)
					}
				}
			}
		})
	}
}
