package e2e

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// retryRequest is one client export of spans generations of chunks chunks each, in otelitl's compact
// form, their IDs made from first onwards.
func retryRequest(first, spans, chunks int) ptraceotlp.ExportRequest {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "retry-dedup")
	ss := rs.ScopeSpans().AppendEmpty().Spans()
	start := time.Now().Add(-time.Minute)
	for i := range spans {
		s := ss.AppendEmpty()
		var tid pcommon.TraceID
		var sid pcommon.SpanID
		tid[0] = 0x5e
		binary.BigEndian.PutUint64(tid[8:], uint64(first+i))
		binary.BigEndian.PutUint64(sid[:], uint64(first+i)+1)
		s.SetTraceID(tid)
		s.SetSpanID(sid)
		s.SetName("chat m")
		s.SetKind(ptrace.SpanKindClient)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		a := s.Attributes()
		a.PutStr("gen_ai.operation.name", "chat")
		a.PutStr("gen_ai.provider.name", "p")
		a.PutStr("gen_ai.request.model", "m")
		offs := a.PutEmptySlice("otelitl.chunk.offsets_us")
		off := int64(100_000)
		for k := range chunks {
			if k > 0 {
				off += int64(10_000 + k%7*1000)
			}
			offs.AppendEmpty().SetInt(off)
		}
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(off+1000) * time.Microsecond)))
	}
	return ptraceotlp.NewExportRequestFromTraces(td)
}

// TestGatewayCountsARetryOnce runs the shipped gateway.yaml with a queue of 32 MiB (the least
// otelcol-itl takes) and its backend down, and exports to it as a client does until its queue is
// full and it refuses a request with "sending queue is full". The client sends that request again
// three times while the queue is still full, then, the backend back, until it gets through. The
// backend must then hold every generation's TTFT and gaps once, however many attempts reached the
// gateway's connector, and the gateway counts the skipped attempts in
// otelcol_connector_itl_metrics_spans_deduplicated. Before gateway.yaml set
// deduplicate.max_spans, each attempt was counted (README, "sending queue is full").
func TestGatewayCountsARetryOnce(t *testing.T) {
	requireE2E(t)
	bin := buildCollector(t)
	ca := newPrivateCA(t)
	certFile, keyFile := ca.server(t, "gateway")
	hs, backend := startHTTPSink(t)
	hs.down.Store(true)
	gw := startGateway(t, bin, "gateway", certFile, keyFile, backend, t.TempDir(), "ITL_QUEUE_BYTES=33554432")

	conn, err := grpc.NewClient(gw.grpcAddr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: ca.pool, MinVersion: tls.VersionTLS12})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := ptraceotlp.NewGRPCClient(conn)
	export := func(req ptraceotlp.ExportRequest) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := client.Export(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+gatewayToken), req)
		return err
	}
	full := func(err error) bool {
		return status.Code(err) == codes.Unavailable && strings.Contains(err.Error(), "sending queue is full")
	}

	const spans, chunks, retries = 1000, 200, 3
	var refused ptraceotlp.ExportRequest
	sent := 0 // generations the client sent, each once
	for i := 0; ; i++ {
		if i == 100 {
			t.Fatalf("100 requests of %d generations and the gateway's queue is not full", spans)
		}
		req := retryRequest(sent, spans, chunks)
		sent += spans
		err := export(req)
		if err == nil {
			continue
		}
		if !full(err) {
			t.Fatalf("request %d: %v, want Unavailable: sending queue is full", i, err)
		}
		refused = req
		t.Logf("the gateway's queue refused request %d of %d generations", i, spans)
		break
	}
	for i := range retries {
		if err := export(refused); !full(err) {
			t.Fatalf("retry %d while the backend is down: %v, want the queue still full", i, err)
		}
	}
	hs.down.Store(false)
	attempts := 1 + retries
	for ok := false; !ok; {
		if attempts > 1+retries+300 {
			t.Fatal("the gateway did not take the refused request again within 300 attempts after the backend came back")
		}
		err := export(refused)
		attempts++
		if ok = err == nil; !ok {
			if !full(err) {
				t.Fatalf("retry after the backend came back: %v", err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	t.Logf("%d generations sent, the last %d in %d attempts", sent, spans, attempts)

	const ttft, gaps = "gen_ai.client.operation.time_to_first_chunk", "gen_ai.client.operation.time_per_output_chunk"
	arrived := waitFor(2*time.Minute, func() bool {
		hs.mu.Lock()
		defer hs.mu.Unlock()
		return hs.spans >= int64(sent) && hs.counts[ttft] >= uint64(sent) && hs.counts[gaps] >= uint64(sent*(chunks-1))
	})
	time.Sleep(3 * time.Second) // an attempt counted again would arrive now: the gateway flushes every second
	hs.mu.Lock()
	gotSpans, gotTTFT, gotGaps := hs.spans, hs.counts[ttft], hs.counts[gaps]
	hs.mu.Unlock()
	if !arrived || gotSpans != int64(sent) || gotTTFT != uint64(sent) || gotGaps != uint64(sent*(chunks-1)) {
		t.Errorf("the backend holds %d spans, %d TTFTs and %d gaps; want %d, %d and %d, each generation once (arrived within 2m: %v)",
			gotSpans, gotTTFT, gotGaps, sent, sent, sent*(chunks-1), arrived)
	}
	if dups := telemetry(t, gw.telemetryAddr(t), "otelcol_connector_itl_metrics_spans_deduplicated", "")[""]; dups != float64((attempts-1)*spans) {
		t.Errorf("the gateway's otelcol_connector_itl_metrics_spans_deduplicated is %v, want %d: every attempt after the first", dups, (attempts-1)*spans)
	}
}
