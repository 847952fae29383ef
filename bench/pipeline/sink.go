package main

import (
	"context"
	"fmt"
	"net"
	"sync"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip" // the OTLP exporter compresses with gzip by default
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/otelitl/itl/itlconv"
)

// rawCodec hands gRPC messages over as the bytes on the wire: the replay sends the pre-encoded
// requests without marshalling them again, and the sink counts spans without decoding them into
// pdata. Its name is "proto" so that the content type is the one OTLP peers expect.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) {
	p, ok := v.(*[]byte)
	if !ok {
		return nil, fmt.Errorf("rawCodec: cannot marshal %T", v)
	}
	return *p, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	p, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("rawCodec: cannot unmarshal into %T", v)
	}
	*p = append((*p)[:0], data...)
	return nil
}

const (
	traceExportMethod = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
)

// shape is what a span a sink received carries: its timeline ("compact" for the
// otelitl.chunk.offsets_us attribute, "events" for chunk events, "" for none) and whether it has
// the processor's figures.
type shape struct {
	timeline string
	figures  bool
}

func (s shape) String() string {
	t := s.timeline
	if t == "" {
		t = "no timeline"
	}
	if s.figures {
		return t + " + figures"
	}
	return t + ", no figures"
}

// sink is an OTLP/gRPC backend for one run: it counts the spans it receives (without decoding
// them), decodes the spans of every 50th trace request to check their shape, and sums the delta
// metrics of the itl_metrics connector.
type sink struct {
	mu          sync.Mutex
	traceReqs   int64
	spans       int64
	traceBytes  int64
	shapes      map[shape]int64 // sampled spans by shape
	points      int64           // metric data points of every kind
	gapObs      uint64          // gen_ai.client.operation.time_per_output_chunk counts
	ttfts       uint64          // gen_ai.client.operation.time_to_first_chunk counts
	stalls      int64           // otelitl.stalls sum
	err         error           // the first request it could not read
	srv         *grpc.Server
	addr        string
	metricBytes int64
}

func startSink() (*sink, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &sink{shapes: map[shape]int64{}, addr: l.Addr().String()}
	s.srv = grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.MaxRecvMsgSize(256<<20))
	s.srv.RegisterService(serviceDesc("opentelemetry.proto.collector.trace.v1.TraceService", s.traces), s)
	s.srv.RegisterService(serviceDesc("opentelemetry.proto.collector.metrics.v1.MetricsService", s.metrics), s)
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

func (s *sink) stop() { s.srv.Stop() }

// serviceDesc describes an OTLP export service whose Export hands the request's bytes to export
// and answers with an empty response (which encodes to zero bytes).
func serviceDesc(name string, export func([]byte)) *grpc.ServiceDesc {
	return &grpc.ServiceDesc{
		ServiceName: name,
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: "Export",
			Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				var b []byte
				if err := dec(&b); err != nil {
					return nil, err
				}
				export(b)
				return &[]byte{}, nil
			},
		}},
	}
}

func (s *sink) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

func (s *sink) traces(b []byte) {
	n, err := countSpans(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.fail(fmt.Errorf("reading a trace export: %w", err))
		return
	}
	s.spans += int64(n)
	s.traceBytes += int64(len(b))
	s.traceReqs++
	if s.traceReqs%50 != 1 {
		return
	}
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		s.fail(fmt.Errorf("decoding a trace export: %w", err))
		return
	}
	rss := req.Traces().ResourceSpans()
	for i := range rss.Len() {
		sss := rss.At(i).ScopeSpans()
		for j := range sss.Len() {
			spans := sss.At(j).Spans()
			for k := range spans.Len() {
				s.shapes[shapeOf(spans.At(k))]++
			}
		}
	}
}

func shapeOf(sp ptrace.Span) shape {
	var sh shape
	a := sp.Attributes()
	if _, ok := a.Get(string(itlconv.ChunkOffsetsKey)); ok {
		sh.timeline = "compact"
	} else if sp.Events().Len() > 0 {
		sh.timeline = "events"
	}
	if _, ok := a.Get(string(itlconv.GapP50Key)); ok {
		sh.figures = true
	}
	return sh
}

func (s *sink) metrics(b []byte) {
	req := pmetricotlp.NewExportRequest()
	err := req.UnmarshalProto(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.fail(fmt.Errorf("decoding a metrics export: %w", err))
		return
	}
	s.metricBytes += int64(len(b))
	rms := req.Metrics().ResourceMetrics()
	for i := range rms.Len() {
		sms := rms.At(i).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for k := range ms.Len() {
				s.metric(ms.At(k))
			}
		}
	}
}

func (s *sink) metric(m pmetric.Metric) {
	switch m.Type() {
	case pmetric.MetricTypeHistogram:
		dps := m.Histogram().DataPoints()
		s.points += int64(dps.Len())
		for d := range dps.Len() {
			switch m.Name() {
			case itlconv.TimePerOutputChunk.Name:
				s.gapObs += dps.At(d).Count()
			case itlconv.TimeToFirstChunk.Name:
				s.ttfts += dps.At(d).Count()
			}
		}
	case pmetric.MetricTypeSum:
		dps := m.Sum().DataPoints()
		s.points += int64(dps.Len())
		if m.Name() == itlconv.Stalls.Name {
			for d := range dps.Len() {
				s.stalls += dps.At(d).IntValue()
			}
		}
	case pmetric.MetricTypeGauge:
		s.points += int64(m.Gauge().DataPoints().Len())
	case pmetric.MetricTypeExponentialHistogram:
		s.points += int64(m.ExponentialHistogram().DataPoints().Len())
	case pmetric.MetricTypeSummary:
		s.points += int64(m.Summary().DataPoints().Len())
	}
}

// sinkCounts is a copy of what a sink has counted.
type sinkCounts struct {
	spans, traceBytes, points, stalls int64
	gapObs, ttfts                     uint64
	shapes                            map[shape]int64
	err                               error
}

func (s *sink) snapshot() sinkCounts {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := make(map[shape]int64, len(s.shapes))
	for k, v := range s.shapes {
		sh[k] = v
	}
	return sinkCounts{spans: s.spans, traceBytes: s.traceBytes, points: s.points, stalls: s.stalls,
		gapObs: s.gapObs, ttfts: s.ttfts, shapes: sh, err: s.err}
}

// countSpans counts the spans of an encoded ExportTraceServiceRequest without decoding them:
// resource_spans (field 1) > scope_spans (field 2) > spans (field 2).
func countSpans(b []byte) (int, error) {
	n := 0
	err := eachField(b, 1, func(rs []byte) error {
		return eachField(rs, 2, func(ss []byte) error {
			return eachField(ss, 2, func([]byte) error { n++; return nil })
		})
	})
	return n, err
}

// eachField calls f with the payload of every length-delimited field numbered want in the
// protobuf message b, skipping the other fields.
func eachField(b []byte, want protowire.Number, f func([]byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if num == want && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			if err := f(v); err != nil {
				return err
			}
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
	}
	return nil
}
