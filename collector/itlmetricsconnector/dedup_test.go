package itlmetricsconnector

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelitl/itl/itlconv"
)

// idSpan adds a model call of model to td with trace and span IDs made from i (0: none), one gap
// of 10 ms, and returns it.
func idSpan(td ptrace.Traces, model string, i int) ptrace.Span {
	s := genSpanWith(td, model, 1)
	var tid pcommon.TraceID
	var sid pcommon.SpanID
	if i != 0 {
		binary.BigEndian.PutUint64(tid[8:], uint64(i))
		tid[0] = 0x7a
		binary.BigEndian.PutUint64(sid[:], uint64(i))
	}
	s.SetTraceID(tid)
	s.SetSpanID(sid)
	return s
}

// plainSpan adds a span that is no model call (no timeline, no model) with IDs made from i.
func plainSpan(td ptrace.Traces, i int) ptrace.Span {
	s := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetName("tool")
	var tid pcommon.TraceID
	var sid pcommon.SpanID
	binary.BigEndian.PutUint64(tid[8:], uint64(i))
	tid[0] = 0x7a
	binary.BigEndian.PutUint64(sid[:], uint64(i))
	s.SetTraceID(tid)
	s.SetSpanID(sid)
	return s
}

func withDedup(n int) func(*Config) {
	return func(cfg *Config) { cfg.Deduplicate.MaxSpans = n }
}

// flushed flushes c and returns what it sent last.
func flushed(t *testing.T, c *itlMetrics, sink *consumertest.MetricsSink) pmetric.Metrics {
	t.Helper()
	if err := c.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	all := sink.AllMetrics()
	if len(all) == 0 {
		t.Fatal("nothing flushed")
	}
	return all[len(all)-1]
}

// TestDeduplicateCountsARetryOnce: the same request consumed twice, as the traces pipeline hands it
// to the connector on a client's retry after the exporter refused it, counts each generation once
// with deduplicate.max_spans, CLIENT and SERVER spans alike, and twice without it, as before. The
// skipped spans are counted in the connector's own telemetry, and not among the spans recorded.
func TestDeduplicateCountsARetryOnce(t *testing.T) {
	request := func() ptrace.Traces {
		td := ptrace.NewTraces()
		idSpan(td, "m", 1)
		idSpan(td, "m", 2).SetKind(ptrace.SpanKindServer)
		plainSpan(td, 3)
		return td
	}
	for _, tc := range []struct {
		maxSpans, want int
	}{{0, 2}, {1024, 1}} {
		t.Run(fmt.Sprint("max_spans=", tc.maxSpans), func(t *testing.T) {
			sink := new(consumertest.MetricsSink)
			c := newTestConnector(t, withDedup(tc.maxSpans), sink)
			for range 2 {
				if err := c.ConsumeTraces(context.Background(), request()); err != nil {
					t.Fatal(err)
				}
			}
			md := flushed(t, c, sink)
			want := uint64(tc.want)
			for _, name := range []string{itlconv.TimeToFirstChunk.Name, itlconv.TimePerOutputChunk.Name, itlconv.Duration.Name, itlconv.ServerTimeToFirstToken.Name, itlconv.ServerRequestDuration.Name} {
				if dp, ok := histPoints(md, name)[dpKey{model: "m"}]; !ok || dp.Count() != want {
					t.Errorf("%s: count %d (present %v), want %d", name, dp.Count(), ok, want)
				}
			}
			if n := sumPoints(md, itlconv.Generations.Name, itlconv.TimingKey); n[dpKey{"m", itlconv.TimingKey, itlconv.TimingTimeline}] != int64(tc.want) {
				t.Errorf("generations %v, want %d", n, tc.want)
			}
			if got := ownTelemetry(t, c, "otelcol_connector_itl_metrics_spans_recorded"); got[""] != int64(2*tc.want) {
				t.Errorf("spans recorded %v, want %d", got, 2*tc.want)
			}
			if got := ownTelemetry(t, c, "otelcol_connector_itl_metrics_spans_deduplicated"); got[""] != int64(4-2*tc.want) {
				t.Errorf("spans deduplicated %v, want %d", got, 4-2*tc.want)
			}
		})
	}
}

// TestDeduplicateWithinARequest: a span twice in one request counts once too, and spans without
// IDs, which nothing tells apart, count every time.
func TestDeduplicateWithinARequest(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, withDedup(1024), sink)
	td := ptrace.NewTraces()
	for range 3 {
		idSpan(td, "same", 7)
		idSpan(td, "anonymous", 0)
	}
	if err := c.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	ttft := histPoints(flushed(t, c, sink), itlconv.TimeToFirstChunk.Name)
	if n := ttft[dpKey{model: "same"}].Count(); n != 1 {
		t.Errorf("one span three times in a request: %d observations, want 1", n)
	}
	if n := ttft[dpKey{model: "anonymous"}].Count(); n != 3 {
		t.Errorf("three spans without IDs: %d observations, want 3", n)
	}
}

// TestDeduplicateTellsSidesAndTracesApart: a SERVER span with the trace and span ID of a CLIENT span
// is another span, as Zipkin's shared spans are (B3 gives the server the client's span ID, and a
// Zipkin receiver in front keeps it): the connector counts the server's view apart from the
// client's, so both count, and so does a span whose span ID only is another's, in another trace.
// A retry of all three is skipped.
func TestDeduplicateTellsSidesAndTracesApart(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, withDedup(1024), sink)
	request := func() ptrace.Traces {
		td := ptrace.NewTraces()
		idSpan(td, "m", 1)
		idSpan(td, "m", 1).SetKind(ptrace.SpanKindServer)
		s := idSpan(td, "m", 1)
		tid := s.TraceID()
		tid[1] = 1
		s.SetTraceID(tid)
		return td
	}
	for range 2 {
		if err := c.ConsumeTraces(context.Background(), request()); err != nil {
			t.Fatal(err)
		}
	}
	md := flushed(t, c, sink)
	for name, want := range map[string]uint64{
		itlconv.TimeToFirstChunk.Name: 2, itlconv.Duration.Name: 2,
		itlconv.ServerTimeToFirstToken.Name: 1, itlconv.ServerRequestDuration.Name: 1,
	} {
		var n uint64
		if dp, ok := histPoints(md, name)[dpKey{model: "m"}]; ok {
			n = dp.Count()
		}
		if n != want {
			t.Errorf("%s: count %d, want %d", name, n, want)
		}
	}
	if got := ownTelemetry(t, c, "otelcol_connector_itl_metrics_spans_deduplicated"); got[""] != 3 {
		t.Errorf("spans deduplicated %v, want 3: the retry of each", got)
	}
}

// TestDeduplicateRemembersOnlyModelCalls: spans the connector does not count take no room, so that
// agent and tool spans cannot push a model call out before its retry.
func TestDeduplicateRemembersOnlyModelCalls(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, withDedup(1024), sink) // remembers while fewer than 512 other spans come
	first := ptrace.NewTraces()
	idSpan(first, "m", 1)
	others := ptrace.NewTraces()
	for i := range 2000 {
		plainSpan(others, 100+i).Attributes().PutStr("gen_ai.operation.name", "execute_tool")
	}
	for _, td := range []ptrace.Traces{first, others, first} {
		if err := c.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	if n := histPoints(flushed(t, c, sink), itlconv.TimeToFirstChunk.Name)[dpKey{model: "m"}].Count(); n != 1 {
		t.Errorf("a model call resent after 2000 tool spans: %d observations, want 1", n)
	}
}

// TestDeduplicateBound: a span sent again after fewer than max_spans/2 other spans is skipped, and
// one sent again after max_spans others counts again, wherever it fell in a generation; a span that
// keeps coming back stays remembered.
func TestDeduplicateBound(t *testing.T) {
	const n = 20
	seen := func(d *dedup, i int) bool { // a CLIENT span with IDs made from i
		var tid pcommon.TraceID
		var sid pcommon.SpanID
		binary.BigEndian.PutUint64(tid[:], uint64(i)+1)
		binary.BigEndian.PutUint64(sid[:], uint64(i)+1)
		return d.seen(tid, sid, false)
	}
	for before := range n + 1 { // where the span falls in its generation
		for between := range 2 * n {
			d := newDedup(n)
			next := 1000
			add := func(k int) {
				for range k {
					if seen(d, next) {
						t.Fatalf("a new span %d taken for a duplicate", next)
					}
					next++
				}
			}
			add(before)
			if seen(d, 0) {
				t.Fatal("the span taken for a duplicate at its first coming")
			}
			add(between)
			dup := seen(d, 0)
			if between < n/2 && !dup {
				t.Errorf("%d spans before it, resent after %d others (fewer than %d): counted again", before, between, n/2)
			}
			if between >= n && dup {
				t.Errorf("%d spans before it, resent after %d others (max_spans %d): still skipped", before, between, n)
			}
		}
	}
	d := newDedup(n)
	seen(d, 0)
	for i := range 10 * n {
		if i%(n/2-1) == 0 && !seen(d, 0) {
			t.Fatalf("a span resent every %d spans was forgotten after %d", n/2-1, i)
		}
		seen(d, i+1)
	}
}

// TestDeduplicateConcurrent: requests that share spans, consumed at once by several goroutines, count
// each span once (run under -race too).
func TestDeduplicateConcurrent(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := newTestConnector(t, withDedup(10_000), sink)
	const writers, spans = 4, 300
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range spans {
				td := ptrace.NewTraces()
				idSpan(td, "m", 1+(i+w*7)%spans) // every writer sends every span, in its own order
				if err := c.ConsumeTraces(context.Background(), td); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if n := histPoints(flushed(t, c, sink), itlconv.TimeToFirstChunk.Name)[dpKey{model: "m"}].Count(); n != spans {
		t.Errorf("%d observations of %d spans sent by %d writers each, want %d", n, spans, writers, spans)
	}
	if got := ownTelemetry(t, c, "otelcol_connector_itl_metrics_spans_deduplicated"); got[""] != (writers-1)*spans {
		t.Errorf("spans deduplicated %v, want %d", got, (writers-1)*spans)
	}
}

// maxBytesPerDedupSpan is the most heap deduplicate.max_spans may hold per span it counts: the
// README states the figure, and Validate the memory a max_spans takes.
const maxBytesPerDedupSpan = dedupBytesPerSpan

// dedupHeap feeds a deduplicator of max_spans n with 10n distinct spans and returns the live heap
// it holds per max_spans once it has seen 2n of them, and once it has seen all 10n.
func dedupHeap(tb testing.TB, n int) (at2n, at10n float64) {
	tb.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d := newDedup(n)
	var tid pcommon.TraceID
	var sid pcommon.SpanID
	tid[0] = 1
	for i := range 10 * n {
		binary.BigEndian.PutUint64(tid[8:], uint64(i))
		binary.BigEndian.PutUint64(sid[:], uint64(i)+1)
		if d.seen(tid, sid, false) {
			tb.Fatalf("span %d taken for a duplicate", i)
		}
		if i == 2*n-1 || i == 10*n-1 {
			runtime.GC()
			runtime.ReadMemStats(&after)
			per := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
			if i == 2*n-1 {
				at2n = per
			} else {
				at10n = per
			}
		}
	}
	runtime.KeepAlive(d)
	return at2n, at10n
}

// TestDeduplicateMemory: the deduplicator holds at most maxBytesPerDedupSpan per max_spans, and
// no more after 10 x max_spans spans than after 2 x max_spans at the size the shipped
// configurations set: its memory has a bound. The bound holds at the least max_spans Validate
// takes, and at 3,524, the most measured from 1,024 to 200,000 (62 bytes): there the maps' tables
// split as the generations turn over, after 2 x max_spans spans, each left half full.
func TestDeduplicateMemory(t *testing.T) {
	at2n, at10n := dedupHeap(t, 100_000)
	t.Logf("%.1f bytes per max_spans after 200,000 spans, %.1f after 1,000,000", at2n, at10n)
	if at10n > maxBytesPerDedupSpan || at2n > maxBytesPerDedupSpan {
		t.Errorf("%.1f and %.1f bytes per max_spans, more than %d", at2n, at10n, maxBytesPerDedupSpan)
	}
	if at10n > at2n*1.1 {
		t.Errorf("the memory grew from %.1f to %.1f bytes per max_spans between 2 and 10 x max_spans spans", at2n, at10n)
	}
	for _, n := range []int{minDedupSpans, 3524} {
		at2n, at10n := dedupHeap(t, n)
		t.Logf("max_spans %d: %.1f bytes per max_spans after %d spans, %.1f after %d", n, at2n, 2*n, at10n, 10*n)
		if at10n > maxBytesPerDedupSpan || at2n > maxBytesPerDedupSpan {
			t.Errorf("max_spans %d: %.1f and %.1f bytes per max_spans, more than %d", n, at2n, at10n, maxBytesPerDedupSpan)
		}
	}
}

// BenchmarkDedupMemory reports the heap deduplicate.max_spans holds per span (B/span), at the
// size gateway.yaml sets.
func BenchmarkDedupMemory(b *testing.B) {
	for b.Loop() {
		_, at10n := dedupHeap(b, 100_000)
		b.ReportMetric(at10n, "B/span")
	}
}
