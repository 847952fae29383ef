package genaispan_test

import (
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/internal/golden"
	"github.com/otelitl/itl/itlconv"
)

// bedrockSpans are the spans of the Bedrock fixtures: the captured spans of the OpenTelemetry JS
// AWS SDK instrumentation (bedrock-converse, bedrock-invoke) and the spans written from the Python
// botocore instrumentation's Bedrock Runtime extension (testdata/written/botocore-bedrock-*).
func bedrockSpans(t *testing.T) map[string][]ptrace.Span {
	t.Helper()
	out := map[string][]ptrace.Span{}
	for _, name := range []string{"bedrock-converse", "bedrock-invoke"} {
		out[name] = capturedSpans(t, name)
	}
	for _, wc := range golden.LoadWritten(t) {
		if !strings.HasPrefix(wc.Name, "botocore-bedrock-") {
			continue
		}
		pwalk.Spans(wc.Traces, func(_ pcommon.Map, s ptrace.Span) { out[wc.Name] = append(out[wc.Name], s) })
	}
	if len(out) != 4 {
		t.Fatalf("%d Bedrock fixtures, want 4 (2 captured, 2 written)", len(out))
	}
	return out
}

// TestBedrockModelCalls: both AWS SDK instrumentations write a span for every AWS call. A Bedrock
// Runtime model call (ConverseStream, InvokeModelWithResponseStream) is one model call with the
// conventions' provider, aws.bedrock (written as gen_ai.system), its request model, the span's
// whole duration (both end it when the stream has been read) and no time to first chunk (neither
// writes one); the JS instrumentation's InvokeModel spans carry no gen_ai.operation.name and count
// under the legacy conventions' rule. Every other AWS call (ListAsyncInvokes of the same client,
// S3 GetObject) is no model call.
func TestBedrockModelCalls(t *testing.T) {
	want := map[string]struct{ call, model, other string }{
		"bedrock-converse":                 {"chat cap-bedrock-converse", "cap-bedrock-converse", "BedrockRuntime.ListAsyncInvokes"},
		"bedrock-invoke":                   {"BedrockRuntime.InvokeModelWithResponseStream", "anthropic.claude-cap-bedrock-invoke", ""},
		"botocore-bedrock-converse-stream": {"chat amazon.nova-lite-v1:0", "amazon.nova-lite-v1:0", "S3.GetObject"},
		"botocore-bedrock-invoke-stream":   {"chat anthropic.claude-3-haiku-20240307-v1:0", "anthropic.claude-3-haiku-20240307-v1:0", ""},
	}
	for name, spans := range bedrockSpans(t) {
		w := want[name]
		d := genaispan.New(genaispan.Config{})
		var calls, others []string
		for _, s := range spans {
			c := d.Read(s, false)
			if !c.ModelCall {
				others = append(others, s.Name())
				continue
			}
			calls = append(calls, s.Name())
			if c.Provider != itlconv.AWSBedrockSystem || c.Model != w.model {
				t.Errorf("%s: %q read with provider %q, model %q; want aws.bedrock, %q", name, s.Name(), c.Provider, c.Model, w.model)
			}
			if dur := float64(s.EndTimestamp()-s.StartTimestamp()) / 1e9; !c.HasDuration || c.Duration != dur {
				t.Errorf("%s: duration %v (present %v), want the span's %v", name, c.Duration, c.HasDuration, dur)
			}
			if c.Figures.HasTTFT || c.HasTimeline() {
				t.Errorf("%s: a time to first chunk from %q, which the instrumentation does not write", name, c.TTFTSource)
			}
			if !c.Figures.HasOutputTokens || !c.HasInputTokens {
				t.Errorf("%s: no usage read", name)
			}
			if bad := c.Malformed(); len(bad) > 0 {
				t.Errorf("%s: malformed %v", name, bad)
			}
		}
		if len(calls) != 1 || calls[0] != w.call {
			t.Errorf("%s: model calls %v, want [%s]", name, calls, w.call)
		}
		var wantOthers []string
		if w.other != "" {
			wantOthers = []string{w.other}
		}
		if !slices.Equal(others, wantOthers) {
			t.Errorf("%s: spans that are no model call %v, want %v", name, others, wantOthers)
		}
	}
}

// TestAWSCallsNoModelCall: the spans both instrumentations write for AWS calls that ask no model
// (their rpc.* keys, an SQS call's messaging.* keys, an error's) are no model call, whatever
// service they name, Bedrock Runtime's included.
func TestAWSCallsNoModelCall(t *testing.T) {
	d := genaispan.New(genaispan.Config{})
	for _, c := range []struct {
		name  string
		attrs map[string]any
	}{
		{"SQS.SendMessage", map[string]any{"rpc.system": itlconv.AWSSDKRPCSystem, "rpc.service": "SQS", "rpc.method": "SendMessage",
			"cloud.region": "us-east-1", "messaging.system": "aws_sqs", "messaging.destination.name": "jobs",
			"messaging.operation.type": "send", "aws.request.id": "c0ffee", "http.response.status_code": int64(200)}},
		{"Bedrock Runtime.ListAsyncInvokes", map[string]any{"rpc.system": itlconv.AWSSDKRPCSystem, "rpc.service": "Bedrock Runtime",
			"rpc.method": "ListAsyncInvokes", "server.address": "bedrock-runtime.us-east-1.amazonaws.com", "http.status_code": int64(200)}},
		{"BedrockRuntime.ApplyGuardrail", map[string]any{"rpc.system": itlconv.AWSSDKRPCSystem, "rpc.service": "BedrockRuntime",
			"rpc.method": "ApplyGuardrail", "http.response.status_code": int64(400), "error.type": "ValidationException"}},
	} {
		s := ptrace.NewSpan()
		s.SetName(c.name)
		s.SetKind(ptrace.SpanKindClient)
		s.SetStartTimestamp(1_780_000_000_000_000_000)
		s.SetEndTimestamp(1_780_000_000_040_000_000)
		if err := s.Attributes().FromRaw(c.attrs); err != nil {
			t.Fatal(err)
		}
		if r := d.Read(s, false); r.ModelCall {
			t.Errorf("%s: a model call (provider %q, model %q)", c.name, r.Provider, r.Model)
		}
	}
}
