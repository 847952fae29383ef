package genaispan_test

import (
	"reflect"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/itlconv"
)

// TestOrdinarySpanAfterModelCall checks Read's shortcut for a span with neither attributes nor
// events: it must leave nothing of the previous span's Call behind, and a span with chunk events
// but no attributes must still take the full path.
func TestOrdinarySpanAfterModelCall(t *testing.T) {
	d := genaispan.New(genaispan.Config{})
	start := pcommon.Timestamp(1_000_000_000)

	withEvents := ptrace.NewSpan()
	withEvents.SetStartTimestamp(start)
	withEvents.SetEndTimestamp(start + 400_000_000)
	for i := range 3 {
		ev := withEvents.Events().AppendEmpty()
		ev.SetName(itlconv.DefaultChunkEventNames[0])
		ev.SetTimestamp(start + pcommon.Timestamp(100_000_000*(i+1)))
	}
	c := d.Read(withEvents, true)
	if !c.ModelCall || !c.Complete || c.Timeline.Len() != 3 || !c.Figures.HasTTFT {
		t.Fatalf("chunk events without attributes: model call %v, complete %v, %d chunks, TTFT %v; want a model call with 3 chunks and a TTFT",
			c.ModelCall, c.Complete, c.Timeline.Len(), c.Figures.HasTTFT)
	}

	bare := ptrace.NewSpan()
	bare.SetStartTimestamp(start)
	bare.SetEndTimestamp(start + 1)
	c = d.Read(bare, true)
	fresh := genaispan.New(genaispan.Config{}).Read(bare, true)
	if c.ModelCall || !reflect.DeepEqual(*c, *fresh) {
		t.Fatalf("a span with no attributes and no events, after a model call:\n%+v\nwant what a fresh decoder reads:\n%+v", *c, *fresh)
	}

	attrsOnly := ptrace.NewSpan()
	attrsOnly.Attributes().PutStr("http.request.method", "GET")
	attrsOnly.Events().AppendEmpty().SetName("exception")
	if c = d.Read(attrsOnly, true); c.ModelCall {
		t.Fatalf("an HTTP span with an exception event read as a model call: %+v", *c)
	}
}
