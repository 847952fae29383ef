package httpitl

import (
	"runtime"
	"testing"
)

// benchEvents is a typical content delta of each protocol, as the providers send it.
var benchEvents = []struct {
	name  string
	proto protocol
	data  string
}{
	{"chat", protoChat, `{"id":"chatcmpl-fake12","object":"chat.completion.chunk","created":1780000000,"model":"fake-gpt","choices":[{"index":0,"delta":{"content":"the model streams "},"finish_reason":null}]}`},
	{"completions", protoCompletions, `{"id":"cmpl-fake12","object":"text_completion","created":1780000000,"model":"fake-gpt","choices":[{"text":"the model streams ","index":0,"logprobs":null,"finish_reason":null}]}`},
	{"responses", protoResponses, `{"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_resp_fake12","output_index":0,"content_index":0,"delta":"the model streams ","logprobs":[]}`},
	{"anthropic", protoAnthropic, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"the model streams "}}`},
	{"gemini", protoGemini, `{"candidates":[{"content":{"parts":[{"text":"the model streams "}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":12,"totalTokenCount":12},"modelVersion":"gemini-2.5-flash","responseId":"fake12gemini"}`},
	{"ollama", protoOllamaChat, `{"model":"llama3.2","created_at":"2026-01-01T00:00:00.123456789Z","message":{"role":"assistant","content":"the model streams "},"done":false}`},
	{"bedrock", protoBedrock, `{"contentBlockIndex":0,"delta":{"text":"the model streams "},"p":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"}`},
	// InvokeModelWithResponseStream chunks: base64 of a Claude content_block_delta, of a Llama chunk
	{"bedrock-invoke-claude", protoBedrockInvoke, `{"bytes":"eyJ0eXBlIjoiY29udGVudF9ibG9ja19kZWx0YSIsImluZGV4IjowLCJkZWx0YSI6eyJ0eXBlIjoidGV4dF9kZWx0YSIsInRleHQiOiJ0aGUgbW9kZWwgc3RyZWFtcyAifX0=","p":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0"}`},
	{"bedrock-invoke-llama", protoBedrockInvoke, `{"bytes":"eyJnZW5lcmF0aW9uIjoiIHRoZSBtb2RlbCBzdHJlYW1zIiwicHJvbXB0X3Rva2VuX2NvdW50IjpudWxsLCJnZW5lcmF0aW9uX3Rva2VuX2NvdW50Ijo3LCJzdG9wX3JlYXNvbiI6bnVsbH0=","p":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0"}`},
}

// benchEventName is the name an event of benchEvents is read under: Bedrock's event type comes
// from its message's headers.
func benchEventName(p protocol) []byte {
	switch p {
	case protoBedrock:
		return []byte("contentBlockDelta")
	case protoBedrockInvoke:
		return []byte("chunk")
	}
	return nil
}

// BenchmarkEvent reads one typical content delta per protocol (for InvokeModelWithResponseStream,
// a chunk of two families: its JSON, base64 and the family's event), with the scanner (read=scan) and
// the reference encoding/json reading (read=json), on an observer recording to a fake. ns/event is
// wall time; cpu-ns/event is the benchmark thread's CPU time, which a shared machine disturbs
// less.
//
//	go test -run '^$' -bench BenchmarkEvent -count 6 ./httpitl
func BenchmarkEvent(b *testing.B) {
	for _, e := range benchEvents {
		for _, ref := range []bool{false, true} {
			read := "scan"
			if ref {
				read = "json"
			}
			b.Run("proto="+e.name+"/read="+read, func(b *testing.B) {
				r := newRec()
				o := newObserver(call{proto: e.proto}, r, framingSSE, true, DefaultMaxEventBytes)
				o.reference = ref
				d, name := []byte(e.data), benchEventName(e.proto)
				o.event(name, d, false)
				if r.chunks != 1 || o.fallbacks != 0 {
					b.Fatalf("%d chunks, %d fallbacks", r.chunks, o.fallbacks)
				}
				b.SetBytes(int64(len(d)))
				b.ReportAllocs()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.ResetTimer()
				cpu0, ok := threadCPU()
				for range b.N { // not b.Loop: the CPU time is read around one run of b.N
					o.event(name, d, false)
				}
				cpu1, _ := threadCPU()
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/event")
				if ok {
					b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/event")
				}
			})
		}
	}
}
