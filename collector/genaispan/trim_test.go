package genaispan

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/itlconv"
)

// chunkSpan is a generation span of n chunk events 1 ms apart, written in reverse order (so that
// the decoder sorts them), every third one carrying 2 tokens.
func chunkSpan(n int) ptrace.Span {
	span := ptrace.NewSpan()
	const start = 1_800_000_000_000_000_000
	span.SetStartTimestamp(start)
	span.SetEndTimestamp(pcommon.Timestamp(start + uint64(n+1)*1_000_000))
	span.Attributes().PutStr(string(semconv.GenAIOperationNameKey), "chat")
	for i := n - 1; i >= 0; i-- {
		ev := span.Events().AppendEmpty()
		ev.SetName(itlconv.ChunkEventName)
		ev.SetTimestamp(pcommon.Timestamp(start + uint64(i+1)*1_000_000))
		if i%3 == 0 {
			ev.Attributes().PutInt(string(itlconv.ChunkTokensKey), 2)
		}
	}
	return span
}

// TestTrim checks that Trim lets go of the buffers a long timeline grew, keeps those of a timeline
// of 1,000 chunks, and that a trimmed decoder reads the long timeline again to the same figures.
func TestTrim(t *testing.T) {
	d := New(Config{})
	long := chunkSpan(3 * KeepChunks)
	want := d.Read(long, true).Figures
	if !want.HasGaps || want.OutputTokens != int64(3*KeepChunks+KeepChunks) {
		t.Fatalf("figures of the long span: %+v", want)
	}
	for name, c := range map[string]int{"offsets": cap(d.offsets), "tokens": cap(d.tokens), "pairs": cap(d.pairs), "scratch": cap(d.scratch)} {
		if c < 3*KeepChunks {
			t.Fatalf("%s holds %d after a timeline of %d chunks: the test reads no long timeline", name, c, 3*KeepChunks)
		}
	}
	d.Trim()
	for name, c := range map[string]int{"offsets": cap(d.offsets), "tokens": cap(d.tokens), "pairs": cap(d.pairs), "scratch": cap(d.scratch)} {
		if c != 0 {
			t.Errorf("Trim kept %s of %d", name, c)
		}
	}
	if got := d.Read(long, true).Figures; got != want {
		t.Errorf("figures after Trim:\n%+v\nwant\n%+v", got, want)
	}

	d = New(Config{})
	d.Read(chunkSpan(1000), true)
	offs, toks, pairs, scratch := &d.offsets[:1][0], &d.tokens[:1][0], &d.pairs[:1][0], &d.scratch[:1][0]
	d.Trim()
	if cap(d.offsets) == 0 || &d.offsets[:1][0] != offs || &d.tokens[:1][0] != toks || &d.pairs[:1][0] != pairs || &d.scratch[:1][0] != scratch {
		t.Error("Trim let go of the buffers of a timeline of 1,000 chunks")
	}
}
