package e2e

import (
	"context"
	"net"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"

	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/itlconv"
)

// sink is an OTLP/gRPC backend in the test process: it counts the spans it receives and sums the
// delta metrics, so that a test can compare what left the collector with what was sent.
type sink struct {
	mu     sync.Mutex
	spans  int64
	counts map[string]uint64 // histogram name -> summed delta count
	sums   map[string]float64
	stalls int64
	series map[string]map[string]bool // metric -> distinct attribute sets
	// maxPoints is the most points one export carried per metric, and overflow the points
	// marked otel.metric.overflow: the cardinality limit bounds the first.
	maxPoints map[string]int
	overflow  int
}

type metricsServer struct {
	pmetricotlp.UnimplementedGRPCServer
	*sink
}

type traceServer struct {
	ptraceotlp.UnimplementedGRPCServer
	*sink
}

func (ts traceServer) Export(ctx context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	return ts.exportTraces(ctx, req)
}

func (m metricsServer) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pwalk.Metrics(req.Metrics(), func(mt pmetric.Metric) {
		if m.series[mt.Name()] == nil {
			m.series[mt.Name()] = map[string]bool{}
		}
		switch mt.Type() {
		case pmetric.MetricTypeHistogram:
			dps := mt.Histogram().DataPoints()
			m.maxPoints[mt.Name()] = max(m.maxPoints[mt.Name()], dps.Len())
			for d := range dps.Len() {
				if _, ok := dps.At(d).Attributes().Get("otel.metric.overflow"); ok && mt.Name() == "gen_ai.client.operation.time_to_first_chunk" {
					m.overflow++
				}
				m.counts[mt.Name()] += dps.At(d).Count()
				m.sums[mt.Name()] += dps.At(d).Sum()
				m.series[mt.Name()][attrKey(dps.At(d).Attributes().AsRaw())] = true
			}
		case pmetric.MetricTypeSum:
			if mt.Name() != itlconv.Stalls.Name { // otelitl.generations is a sum too
				break
			}
			dps := mt.Sum().DataPoints()
			for d := range dps.Len() {
				m.stalls += dps.At(d).IntValue()
			}
		}
	})
	return pmetricotlp.NewExportResponse(), nil
}

func (s *sink) exportTraces(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	s.mu.Lock()
	s.spans += int64(req.Traces().SpanCount())
	s.mu.Unlock()
	return ptraceotlp.NewExportResponse(), nil
}

func attrKey(m map[string]any) string {
	b := make([]byte, 0, 64)
	for _, k := range sortedKeys(m) {
		b = append(b, k...)
		b = append(b, '=')
		b = append(b, []byte(toString(m[k]))...)
		b = append(b, ';')
	}
	return string(b)
}

// startSink serves OTLP/gRPC on a free loopback port until the test ends.
func startSink(t *testing.T) (*sink, string) {
	t.Helper()
	s := &sink{counts: map[string]uint64{}, sums: map[string]float64{}, series: map[string]map[string]bool{}, maxPoints: map[string]int{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	ptraceotlp.RegisterGRPCServer(srv, &traceServer{sink: s})
	pmetricotlp.RegisterGRPCServer(srv, &metricsServer{sink: s})
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return s, l.Addr().String()
}

func (s *sink) snapshot() (spans int64, gaps uint64, stalls int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spans, s.counts["gen_ai.client.operation.time_per_output_chunk"], s.stalls
}
