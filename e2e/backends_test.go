package e2e

import (
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
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
	"google.golang.org/grpc/peer"
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

	// clients counts the messages accepted, by signal ("traces", "metrics") and by the common name
	// of the client certificate they came over ("" for none: plain text, or TLS without one).
	clients map[string]map[string]int
	// handshakes counts the TLS handshakes the servers failed; handshakeErrs holds the first
	// few reasons, as the servers saw them.
	handshakes    int64
	handshakeErrs []string

	keepTraces bool
	limit      int // the gRPC receive limit; 0 is backendLimit
	// certFile and keyFile, when set before a server starts, make it speak TLS with that
	// certificate; clientCAs, when set too, makes it require a client certificate that one of
	// those CAs signed (tls.RequireAndVerifyClientCert), as a backend with mTLS does.
	certFile, keyFile string
	clientCAs         *x509.CertPool
}

type histPoint struct {
	ts    int64
	count uint64
}

func newLimitedBackend() *limitedBackend {
	return &limitedBackend{latest: map[string]map[string]histPoint{}, flushes: map[int64]int{}, clients: map[string]map[string]int{}}
}

// from records that a message of signal was accepted over a connection in state (nil: plain text).
func (b *limitedBackend) from(signal string, state *tls.ConnectionState) {
	name := ""
	if state != nil && len(state.PeerCertificates) > 0 {
		name = state.PeerCertificates[0].Subject.CommonName
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.clients[signal] == nil {
		b.clients[signal] = map[string]int{}
	}
	b.clients[signal][name]++
}

// clientsOf returns a copy of clients.
func (b *limitedBackend) clientsOf() map[string]map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]map[string]int{}
	for signal, names := range b.clients {
		out[signal] = maps.Clone(names)
	}
	return out
}

func (b *limitedBackend) handshakeFailed(reason string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.handshakes++
	if len(b.handshakeErrs) < 5 {
		b.handshakeErrs = append(b.handshakeErrs, reason)
	}
}

// handshakeFailures returns the number of TLS handshakes the servers failed and the first reasons.
func (b *limitedBackend) handshakeFailures() (int64, []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.handshakes, slices.Clone(b.handshakeErrs)
}

// tlsConfig is the servers' TLS configuration: nil without a certificate.
func (b *limitedBackend) tlsConfig(t *testing.T) *tls.Config {
	t.Helper()
	if b.certFile == "" {
		return nil
	}
	cert, err := tls.LoadX509KeyPair(b.certFile, b.keyFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if b.clientCAs != nil {
		cfg.ClientCAs, cfg.ClientAuth = b.clientCAs, tls.RequireAndVerifyClientCert
	}
	return cfg
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

func (s limitedTraces) Export(ctx context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	s.b.from("traces", grpcTLS(ctx))
	s.b.traces(req.Traces())
	return ptraceotlp.NewExportResponse(), nil
}

type limitedMetrics struct {
	pmetricotlp.UnimplementedGRPCServer
	b *limitedBackend
}

func (s limitedMetrics) Export(ctx context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	s.b.from("metrics", grpcTLS(ctx))
	s.b.metrics(req.Metrics())
	return pmetricotlp.NewExportResponse(), nil
}

// grpcTLS returns the TLS state of the connection an RPC came over: nil in plain text.
func grpcTLS(ctx context.Context) *tls.ConnectionState {
	if p, ok := peer.FromContext(ctx); ok {
		if info, ok := p.AuthInfo.(credentials.TLSInfo); ok {
			return &info.State
		}
	}
	return nil
}

// countingCreds are a gRPC server's TLS credentials that tell the backend of every failed handshake.
type countingCreds struct {
	credentials.TransportCredentials
	b *limitedBackend
}

func (c countingCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	out, info, err := c.TransportCredentials.ServerHandshake(conn)
	if err != nil {
		c.b.handshakeFailed(err.Error())
	}
	return out, info, err
}

// handshakeLog is an HTTP server's error log: it tells the backend of every failed TLS handshake
// and passes anything else on to the standard error.
type handshakeLog struct{ b *limitedBackend }

func (h handshakeLog) Write(p []byte) (int, error) {
	if _, reason, ok := strings.Cut(string(p), "TLS handshake error from "); ok {
		h.b.handshakeFailed(strings.TrimSpace(reason))
		return len(p), nil
	}
	return os.Stderr.Write(p)
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
// free loopback port until the test ends; with TLS when b has a certificate (tlsConfig).
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
	if cfg := b.tlsConfig(t); cfg != nil {
		opts = append(opts, grpc.Creds(countingCreds{credentials.NewTLS(cfg), b}))
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
// backendLimit once decompressed with 413, on a free loopback port until the test ends; with TLS
// (https://) when b has a certificate (tlsConfig).
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
			b.from("traces", r.TLS)
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
			b.from("metrics", r.TLS)
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
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, TLSConfig: b.tlsConfig(t),
		ErrorLog: log.New(handshakeLog{b}, "", 0)}
	if srv.TLSConfig != nil {
		go func() { _ = srv.ServeTLS(l, "", "") }()
	} else {
		go func() { _ = srv.Serve(l) }()
	}
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}
