package itlmetricsconnector

import (
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// dedup remembers the spans the connector counted lately, by trace and span ID, so that a span sent
// again counts once: a client retries a request the pipeline refused (a gateway's exporter queue
// full, "sending queue is full") or that timed out, and the traces pipeline hands the connector
// every attempt, as it hands each of its exporters.
//
// It holds two generations of IDs, each of at most half of max_spans: the current one, which takes
// each new span, and the previous one. When the current one is full it becomes the previous one and
// the previous one, emptied, the current one (its map keeps its room, so that memory stays where it
// was). A span is thus remembered while fewer than max_spans/2 other spans come after it, and
// forgotten once max_spans have; a span found in the previous generation takes a place in the
// current one as a new one does, so it counts among the others. Memory never holds more than
// max_spans IDs.
type dedup struct {
	mu        sync.Mutex
	half      int
	cur, prev map[spanKey]side
}

// spanKey is a span's trace ID then its span ID.
type spanKey [24]byte

// side says which spans of a trace and span ID were seen: a SERVER span, any other, or both. The
// server's view of a request and the client's are two spans to count, even where they share their
// IDs, as Zipkin's shared spans do (B3 gives the server the client's span ID). Held as the map's
// value, it takes the byte that the key's slot took as padding without one.
type side uint8

const (
	sideClient side = 1 << iota // any span but a SERVER span
	sideServer
)

func newDedup(maxSpans int) *dedup {
	return &dedup{half: max(maxSpans/2, 1), cur: map[spanKey]side{}, prev: map[spanKey]side{}}
}

// seen reports whether the span (server: of SERVER kind) was counted among the spans remembered,
// and remembers it: a span found in the previous generation moves to the current one, so that a
// request a client keeps retrying stays remembered as long as it keeps coming. A span without a trace or a span ID (which
// OTLP does not allow, and some clients send) is never a duplicate: nothing tells two such apart.
func (d *dedup) seen(tid pcommon.TraceID, sid pcommon.SpanID, server bool) bool {
	if tid.IsEmpty() || sid.IsEmpty() {
		return false
	}
	var k spanKey
	copy(k[:16], tid[:])
	copy(k[16:], sid[:])
	s := sideClient
	if server {
		s = sideServer
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	had := d.cur[k]
	if had&s != 0 {
		return true
	}
	dup := d.prev[k]&s != 0
	d.cur[k] = had | s
	if len(d.cur) >= d.half {
		d.cur, d.prev = d.prev, d.cur
		clear(d.cur)
	}
	return dup
}

// dedupBytesPerSpan is the most heap the deduplicator holds per max_spans (TestDeduplicateMemory,
// BenchmarkDedupMemory).
const dedupBytesPerSpan = 64
