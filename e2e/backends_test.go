package e2e

import (
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/otelitl/itl/collector/pwalk"
)

// backendLimit is the largest message the test backends accept: gRPC's default receive limit,
// which most OTLP backends keep (and a common request-body limit of HTTP intakes).
const backendLimit = 4 << 20

// limitedBackend is an OTLP backend, over gRPC or HTTP, that refuses messages above backendLimit
// as real backends do, and records what it accepted: spans, the latest cumulative count of every
// histogram series, and the size of each message.
type limitedBackend struct {
	mu      sync.Mutex
	spans   int64
	latest  map[string]map[string]histPoint // metric -> series attributes -> latest point
	sizes   []int                           // accepted metrics messages, protobuf bytes
	flushes map[int64]int                   // metrics bytes by the flush (the points' timestamp)
	maxMsg  int                             // the largest message accepted, traces or metrics
	refused atomic.Int64                    // messages refused for their size
	hostile []ptrace.Traces                 // every traces message, when keepTraces is set
	// hostileMetrics is every metrics message, when keepTraces is set.
	hostileMetrics []pmetric.Metrics

	keepTraces bool
	limit      int // the gRPC receive limit; 0 is backendLimit
	// certFile and keyFile, when set, make the gRPC server speak TLS with that certificate.
	certFile, keyFile string
}

type histPoint struct {
	ts    int64
	count uint64
}

func newLimitedBackend() *limitedBackend {
	return &limitedBackend{latest: map[string]map[string]histPoint{}, flushes: map[int64]int{}}
}

func (b *limitedBackend) traces(td ptrace.Traces) {
	size := (&ptrace.ProtoMarshaler{}).TracesSize(td)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.spans += int64(td.SpanCount())
	b.maxMsg = max(b.maxMsg, size)
	if b.keepTraces {
		c := ptrace.NewTraces()
		td.CopyTo(c)
		b.hostile = append(b.hostile, c)
	}
}

func (b *limitedBackend) metrics(md pmetric.Metrics) {
	size := (&pmetric.ProtoMarshaler{}).MetricsSize(md)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.maxMsg = max(b.maxMsg, size)
	b.sizes = append(b.sizes, size)
	if b.keepTraces {
		c := pmetric.NewMetrics()
		md.CopyTo(c)
		b.hostileMetrics = append(b.hostileMetrics, c)
	}
	var flush int64
	pwalk.Metrics(md, func(m pmetric.Metric) {
		if m.Type() != pmetric.MetricTypeHistogram {
			return
		}
		dps := m.Histogram().DataPoints()
		for i := range dps.Len() {
			dp := dps.At(i)
			flush = int64(dp.Timestamp())
			if b.latest[m.Name()] == nil {
				b.latest[m.Name()] = map[string]histPoint{}
			}
			k := attrKey(dp.Attributes().AsRaw())
			if prev, ok := b.latest[m.Name()][k]; !ok || int64(dp.Timestamp()) >= prev.ts {
				b.latest[m.Name()][k] = histPoint{ts: int64(dp.Timestamp()), count: dp.Count()}
			}
		}
	})
	b.flushes[flush] += size
}

// observations returns the number of series of a histogram and the sum of their latest counts.
func (b *limitedBackend) observations(metric string) (series int, count uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.latest[metric] {
		count += p.count
	}
	return len(b.latest[metric]), count
}

func (b *limitedBackend) hasMetrics() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.sizes) > 0
}

func (b *limitedBackend) spanCount() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spans
}

// largestFlush returns the bytes of the largest connector flush and the number of messages it took.
func (b *limitedBackend) largestFlush() (bytes int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, v := range b.flushes {
		bytes = max(bytes, v)
	}
	return bytes
}

type limitedTraces struct {
	ptraceotlp.UnimplementedGRPCServer
	b *limitedBackend
}

func (s limitedTraces) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	s.b.traces(req.Traces())
	return ptraceotlp.NewExportResponse(), nil
}

type limitedMetrics struct {
	pmetricotlp.UnimplementedGRPCServer
	b *limitedBackend
}

func (s limitedMetrics) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	s.b.metrics(req.Metrics())
	return pmetricotlp.NewExportResponse(), nil
}

// refusals counts the RPCs the gRPC server ended with ResourceExhausted: messages over its limit.
type refusals struct{ n *atomic.Int64 }

func (refusals) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (refusals) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (refusals) HandleConn(context.Context, stats.ConnStats)                       {}
func (r refusals) HandleRPC(_ context.Context, s stats.RPCStats) {
	if end, ok := s.(*stats.End); ok && end.Error != nil && status.Code(end.Error) == codes.ResourceExhausted {
		r.n.Add(1)
	}
}

// startLimitedGRPC serves the backend over OTLP/gRPC with gRPC's default 4 MiB receive limit, on a
// free loopback port until the test ends; with TLS when b has a certificate.
func startLimitedGRPC(t *testing.T, b *limitedBackend) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	limit := b.limit
	if limit == 0 {
		limit = backendLimit
	}
	opts := []grpc.ServerOption{grpc.MaxRecvMsgSize(limit), grpc.StatsHandler(refusals{&b.refused})}
	if b.certFile != "" {
		creds, err := credentials.NewServerTLSFromFile(b.certFile, b.keyFile)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, grpc.Creds(creds))
	}
	srv := grpc.NewServer(opts...)
	ptraceotlp.RegisterGRPCServer(srv, &limitedTraces{b: b})
	pmetricotlp.RegisterGRPCServer(srv, &limitedMetrics{b: b})
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return l.Addr().String()
}

// startLimitedHTTP serves the backend over OTLP/HTTP (any path ending in /v1/traces or /v1/metrics;
// anything else, such as a remote write, is answered 204 and ignored), refusing bodies above
// backendLimit once decompressed with 413, on a free loopback port until the test ends.
func startLimitedHTTP(t *testing.T, b *limitedBackend) string {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		raw, err := io.ReadAll(io.LimitReader(body, backendLimit+1))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if len(raw) > backendLimit {
			b.refused.Add(1)
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/v1/traces"):
			req := ptraceotlp.NewExportRequest()
			if err := req.UnmarshalProto(raw); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			b.traces(req.Traces())
			out, _ := ptraceotlp.NewExportResponse().MarshalProto()
			w.Header().Set("Content-Type", "application/x-protobuf")
			_, _ = w.Write(out)
		case strings.HasSuffix(r.URL.Path, "/v1/metrics"):
			req := pmetricotlp.NewExportRequest()
			if err := req.UnmarshalProto(raw); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			b.metrics(req.Metrics())
			out, _ := pmetricotlp.NewExportResponse().MarshalProto()
			w.Header().Set("Content-Type", "application/x-protobuf")
			_, _ = w.Write(out)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}
