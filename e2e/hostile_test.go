package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/otelitl/itl/collector/pwalk"
	"github.com/otelitl/itl/itlconv"
)

// hostileConfig runs the itl processor and the itl_metrics connector (delta, flushed every second)
// as the shipped configs do, in front of a backend that takes messages up to 64 MiB, so that a
// 15 MB span reaches it. Placeholders: the receiver's endpoint, the backend's.
const hostileConfig = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
        max_recv_msg_size_mib: 64
processors:
  itl:
connectors:
  itl_metrics:
    aggregation_temporality: delta
    metrics_flush_interval: 1s
exporters:
  otlp_grpc/backend:
    endpoint: %s
    tls:
      insecure: true
    timeout: 30s
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces/metrics:
      receivers: [otlp]
      exporters: [itl_metrics]
    traces:
      receivers: [otlp]
      processors: [itl]
      exporters: [otlp_grpc/backend]
    metrics:
      receivers: [itl_metrics]
      exporters: [otlp_grpc/backend]
`

// hostileCase is one span of the corpus: a valid generation span (compact timeline of 4 chunks)
// that shape then breaks. The case's name is its gen_ai.request.model, so that its metric series
// can be told apart.
type hostileCase struct {
	name  string
	shape func(s ptrace.Span)
}

// processorKeys are the attributes the itl processor owns: it may add them, or overwrite them.
var processorKeys = map[string]bool{
	string(itlconv.TPOTKey): true, string(itlconv.GapP50Key): true, string(itlconv.GapP90Key): true,
	string(itlconv.GapP99Key): true, string(itlconv.GapMaxKey): true, string(itlconv.StallsKey): true,
	string(itlconv.TimelineSkippedKey): true,
	string(itlconv.TTFTSourceKey):      true, // written with the TTFT, whose source it names
}

// addOnlyKeys are attributes the processor writes only when the span lacks them.
var addOnlyKeys = map[string]bool{
	string(semconv.GenAIResponseTimeToFirstChunkKey): true, string(itlconv.ChunkCountKey): true,
}

func intSlice(s ptrace.Span, key string, vs ...int64) {
	sl := s.Attributes().PutEmptySlice(key)
	for _, v := range vs {
		sl.AppendEmpty().SetInt(v)
	}
}

// hostileCorpus is the first corpus: values a buggy or malicious client can put on a span.
func hostileCorpus() []hostileCase {
	const fifteenMB = 15 << 20
	return []hostileCase{
		{name: "baseline", shape: func(ptrace.Span) {}},
		{name: "ttft-nan", shape: func(s ptrace.Span) { s.Attributes().PutDouble("gen_ai.response.time_to_first_chunk", math.NaN()) }},
		{name: "ttft-inf", shape: func(s ptrace.Span) { s.Attributes().PutDouble("gen_ai.response.time_to_first_chunk", math.Inf(1)) }},
		{name: "ttft-neg-inf", shape: func(s ptrace.Span) { s.Attributes().PutDouble("gen_ai.response.time_to_first_chunk", math.Inf(-1)) }},
		{name: "ttft-negative", shape: func(s ptrace.Span) { s.Attributes().PutDouble("gen_ai.response.time_to_first_chunk", -5) }},
		{name: "ttft-nan-no-timeline", shape: func(s ptrace.Span) {
			s.Attributes().Remove(string(itlconv.ChunkOffsetsKey))
			s.Attributes().Remove(string(itlconv.ChunkCountKey))
			s.Attributes().PutDouble("gen_ai.response.time_to_first_chunk", math.NaN())
		}},
		{name: "output-tokens-1e300", shape: func(s ptrace.Span) { s.Attributes().PutDouble("gen_ai.usage.output_tokens", 1e300) }},
		{name: "output-tokens-inf", shape: func(s ptrace.Span) { s.Attributes().PutDouble("gen_ai.usage.output_tokens", math.Inf(1)) }},
		{name: "output-tokens-nan", shape: func(s ptrace.Span) { s.Attributes().PutDouble("gen_ai.usage.output_tokens", math.NaN()) }},
		{name: "output-tokens-maxint", shape: func(s ptrace.Span) { s.Attributes().PutInt("gen_ai.usage.output_tokens", math.MaxInt64) }},
		{name: "input-tokens-maxint", shape: func(s ptrace.Span) { s.Attributes().PutInt("gen_ai.usage.input_tokens", math.MaxInt64) }},
		{name: "chunk-tokens-maxint", shape: func(s ptrace.Span) {
			intSlice(s, string(itlconv.ChunkOffsetsKey), 200_000, 250_000)
			intSlice(s, string(itlconv.ChunkTokensKey), math.MaxInt64, math.MaxInt64)
			s.Attributes().PutInt(string(itlconv.ChunkCountKey), 2)
		}},
		{name: "chunk-tokens-negative", shape: func(s ptrace.Span) {
			intSlice(s, string(itlconv.ChunkTokensKey), -1, math.MinInt64, 3, 4)
		}},
		{name: "start-time-zero", shape: func(s ptrace.Span) { s.SetStartTimestamp(0) }},
		{name: "end-before-start", shape: func(s ptrace.Span) { s.SetEndTimestamp(s.StartTimestamp() - pcommon.Timestamp(time.Second)) }},
		{name: "end-time-max", shape: func(s ptrace.Span) { s.SetEndTimestamp(pcommon.Timestamp(math.MaxUint64)) }},
		{name: "error-type-15mb", shape: func(s ptrace.Span) {
			s.Status().SetCode(ptrace.StatusCodeError)
			s.Attributes().PutStr("error.type", strings.Repeat("E", fifteenMB))
		}},
		{name: "offsets-past-end", shape: func(s ptrace.Span) {
			intSlice(s, string(itlconv.ChunkOffsetsKey), 200_000, 10_000_000, 20_000_000, 30_000_000) // the span lasts 1 s
		}},
		{name: "offsets-past-int-range", shape: func(s ptrace.Span) {
			intSlice(s, string(itlconv.ChunkOffsetsKey), 200_000, math.MaxInt64/2, math.MaxInt64-1, math.MaxInt64)
		}},
		{name: "offsets-decreasing", shape: func(s ptrace.Span) {
			intSlice(s, string(itlconv.ChunkOffsetsKey), 400_000, 300_000, 200_000, 100_000)
		}},
		{name: "offsets-negative", shape: func(s ptrace.Span) {
			intSlice(s, string(itlconv.ChunkOffsetsKey), math.MinInt64, -1, 0, 1)
		}},
		{name: "offsets-doubles", shape: func(s ptrace.Span) {
			sl := s.Attributes().PutEmptySlice(string(itlconv.ChunkOffsetsKey))
			for _, v := range []float64{200000.5, math.NaN(), math.Inf(1), 400000} {
				sl.AppendEmpty().SetDouble(v)
			}
		}},
		{name: "offsets-strings", shape: func(s ptrace.Span) {
			sl := s.Attributes().PutEmptySlice(string(itlconv.ChunkOffsetsKey))
			for _, v := range []string{"200000", "x", "", "400000"} {
				sl.AppendEmpty().SetStr(v)
			}
		}},
		{name: "offsets-mixed", shape: func(s ptrace.Span) {
			sl := s.Attributes().PutEmptySlice(string(itlconv.ChunkOffsetsKey))
			sl.AppendEmpty().SetInt(200000)
			sl.AppendEmpty().SetDouble(250000)
			sl.AppendEmpty().SetStr("300000")
			sl.AppendEmpty().SetBool(true)
		}},
		{name: "offsets-not-an-array", shape: func(s ptrace.Span) { s.Attributes().PutStr(string(itlconv.ChunkOffsetsKey), "200000,250000") }},
		{name: "tokens-doubles", shape: func(s ptrace.Span) {
			sl := s.Attributes().PutEmptySlice(string(itlconv.ChunkTokensKey))
			for _, v := range []float64{1.5, math.NaN(), math.Inf(1), 1e300} {
				sl.AppendEmpty().SetDouble(v)
			}
		}},
		{name: "tokens-length-mismatch", shape: func(s ptrace.Span) { intSlice(s, string(itlconv.ChunkTokensKey), 1, 2) }},
		{name: "chunk-count-huge", shape: func(s ptrace.Span) { s.Attributes().PutInt(string(itlconv.ChunkCountKey), math.MaxInt64) }},
		{name: "chunk-count-negative", shape: func(s ptrace.Span) { s.Attributes().PutInt(string(itlconv.ChunkCountKey), -4) }},
		{name: "processor-keys-forged", shape: func(s ptrace.Span) {
			s.Attributes().PutDouble(string(itlconv.TPOTKey), math.NaN())
			s.Attributes().PutStr(string(itlconv.StallsKey), "many")
		}},
	}
}

// TestHostileCorpus replays the corpus through the built collector: every span must come out
// byte-identical except for the attributes the itl processor adds (and those it owns), every value
// the processor adds must be finite, and every metric value the connector derives must be finite.
func TestHostileCorpus(t *testing.T) {
	requireE2E(t)
	replayHostile(t, hostileCorpus())
}

// baseSpan writes a valid generation span of the case: 4 chunks in the compact encoding.
func baseSpan(s ptrace.Span, c hostileCase, i int) {
	sum := sha256.Sum256([]byte(c.name))
	var tid pcommon.TraceID
	copy(tid[:], sum[:16])
	s.SetTraceID(tid)
	s.SetSpanID(pcommon.SpanID{0xee, byte(i >> 8), byte(i), 1, 2, 3, 4, 5})
	s.SetName("chat " + c.name)
	s.SetKind(ptrace.SpanKindClient)
	start := time.Now().Add(-time.Minute)
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Second)))
	a := s.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.provider.name", "hostile")
	a.PutStr("gen_ai.request.model", c.name)
	a.PutInt("gen_ai.usage.output_tokens", 4)
	a.PutInt(string(itlconv.ChunkCountKey), 4)
	intSlice(s, string(itlconv.ChunkOffsetsKey), 200_000, 230_000, 270_000, 300_000)
	c.shape(s)
}

func replayHostile(t *testing.T, cases []hostileCase) {
	t.Helper()
	b := newLimitedBackend()
	b.keepTraces = true
	b.limit = 64 << 20
	backend := startLimitedGRPC(t, b)
	otlp := freePort(t)
	cfg := filepath.Join(t.TempDir(), "hostile.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, hostileConfig, otlp, backend), 0o644); err != nil {
		t.Fatal(err)
	}
	col := start(t, "otelcol-itl", nil, buildCollector(t), "--config", cfg)
	waitTCP(t, otlp, 30*time.Second)
	conn, err := grpc.NewClient(otlp, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := ptraceotlp.NewGRPCClient(conn)

	sent := map[pcommon.SpanID]ptrace.Span{}
	names := map[pcommon.SpanID]string{}
	for i, c := range cases {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "hostile-corpus")
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("hostile")
		s := ss.Spans().AppendEmpty()
		baseSpan(s, c, i)
		keep := ptrace.NewSpan()
		s.CopyTo(keep)
		sent[s.SpanID()], names[s.SpanID()] = keep, c.name
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
		cancel()
		if err != nil {
			t.Errorf("%s: the receiver refused the span: %v", c.name, err)
		}
	}
	received := map[pcommon.SpanID]ptrace.Span{}
	waitFor(30*time.Second, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, td := range b.hostile {
			pwalk.Spans(td, func(_ pcommon.Map, s ptrace.Span) { received[s.SpanID()] = s })
		}
		return len(received) >= len(cases)
	})
	// The connector's flushes of the last spans: until every case has metric points, or 30 s.
	waitFor(30*time.Second, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		models := map[string]bool{}
		for _, md := range b.hostileMetrics {
			pwalk.Metrics(md, func(m pmetric.Metric) {
				if m.Type() == pmetric.MetricTypeHistogram {
					for i := range m.Histogram().DataPoints().Len() {
						if v, ok := m.Histogram().DataPoints().At(i).Attributes().Get("gen_ai.request.model"); ok {
							models[v.Str()] = true
						}
					}
				}
			})
		}
		return len(models) >= len(cases)
	})
	time.Sleep(2 * time.Second) // and one more flush: nothing non-finite may follow
	for id, want := range sent {
		name := names[id]
		got, ok := received[id]
		if !ok {
			failCase(t, name, "the span did not come out of the collector")
			continue
		}
		if msg := compareHostile(want, got); msg != "" {
			failCase(t, name, msg)
		}
	}
	// Every metric value the connector derived, by the case (model) it came from.
	bad := map[string][]string{}
	b.mu.Lock()
	metrics := b.hostileMetrics
	b.mu.Unlock()
	for _, md := range metrics {
		pwalk.Metrics(md, func(m pmetric.Metric) {
			for _, p := range nonFinite(m) {
				bad[p.model] = append(bad[p.model], p.what)
			}
		})
	}
	for model, whats := range bad {
		failCase(t, model, fmt.Sprintf("non-finite metric values: %s", strings.Join(firstN(whats, 6), "; ")))
	}
	// The harness itself: the processor annotated the valid spans, and the connector's metrics of
	// every case were read.
	points := map[string]int{}
	for _, md := range metrics {
		pwalk.Metrics(md, func(m pmetric.Metric) {
			if m.Type() == pmetric.MetricTypeHistogram {
				for i := range m.Histogram().DataPoints().Len() {
					if v, ok := m.Histogram().DataPoints().At(i).Attributes().Get("gen_ai.request.model"); ok {
						points[v.Str()]++
					}
				}
			}
		})
	}
	for id, name := range names {
		if s, ok := received[id]; ok && name == "baseline" {
			if _, annotated := s.Attributes().Get(string(itlconv.TPOTKey)); !annotated {
				t.Errorf("the baseline span was not annotated: the processor did not run")
			}
		}
	}
	if points["baseline"] == 0 {
		t.Errorf("no metric point of the baseline case: the connector's metrics were not read (%d messages)", len(metrics))
	}
	if !t.Failed() {
		t.Logf("%d hostile spans passed through unchanged but for the processor's attributes; every metric value finite (%d metrics messages, histogram points from %d cases)",
			len(cases), len(metrics), len(points))
	}
	_ = col
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
	}
	return s
}

// failCase fails the test for a case.
func failCase(t *testing.T, name, msg string) {
	t.Helper()
	t.Errorf("%s: %s", name, msg)
}

// compareHostile returns "" when got is want plus the processor's attributes, with finite values.
func compareHostile(want, got ptrace.Span) string {
	clean := ptrace.NewSpan()
	got.CopyTo(clean)
	var problems []string
	got.Attributes().Range(func(k string, v pcommon.Value) bool {
		orig, had := want.Attributes().Get(k)
		switch {
		case processorKeys[k] || (addOnlyKeys[k] && !had):
			if v.Type() == pcommon.ValueTypeDouble && (math.IsNaN(v.Double()) || math.IsInf(v.Double(), 0)) {
				problems = append(problems, fmt.Sprintf("the processor wrote %s = %v", k, v.Double()))
			}
			if had {
				orig.CopyTo(clean.Attributes().PutEmpty(k)) // the processor may overwrite its own keys
			} else {
				clean.Attributes().Remove(k)
			}
		case !had:
			problems = append(problems, fmt.Sprintf("attribute %s appeared", k))
		}
		return true
	})
	if !sameSpan(want, clean) {
		problems = append(problems, "the span changed beyond the processor's attributes: "+spanDiff(want, clean))
	}
	return strings.Join(problems, "; ")
}

func marshalSpan(s ptrace.Span) []byte {
	td := ptrace.NewTraces()
	s.CopyTo(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty())
	b, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	return b
}

// sameSpan compares two spans field by field, attributes as a set (their order may differ when
// the processor removes and re-adds one), the rest byte for byte.
func sameSpan(a, b ptrace.Span) bool {
	if a.Attributes().Len() != b.Attributes().Len() {
		return false
	}
	same := true
	a.Attributes().Range(func(k string, v pcommon.Value) bool {
		w, ok := b.Attributes().Get(k)
		if !ok || !valuesIdentical(v, w) {
			same = false
		}
		return same
	})
	if !same {
		return false
	}
	a2, b2 := ptrace.NewSpan(), ptrace.NewSpan()
	a.CopyTo(a2)
	b.CopyTo(b2)
	a2.Attributes().Clear()
	b2.Attributes().Clear()
	return bytes.Equal(marshalSpan(a2), marshalSpan(b2))
}

// valuesIdentical compares two values through their protobuf bytes, so that NaN equals NaN.
func valuesIdentical(a, b pcommon.Value) bool {
	s1, s2 := ptrace.NewSpan(), ptrace.NewSpan()
	a.CopyTo(s1.Attributes().PutEmpty("v"))
	b.CopyTo(s2.Attributes().PutEmpty("v"))
	return bytes.Equal(marshalSpan(s1), marshalSpan(s2))
}

func spanDiff(a, b ptrace.Span) string {
	var d []string
	if a.StartTimestamp() != b.StartTimestamp() || a.EndTimestamp() != b.EndTimestamp() {
		d = append(d, fmt.Sprintf("times %d..%d became %d..%d", a.StartTimestamp(), a.EndTimestamp(), b.StartTimestamp(), b.EndTimestamp()))
	}
	if a.Events().Len() != b.Events().Len() {
		d = append(d, fmt.Sprintf("%d events became %d", a.Events().Len(), b.Events().Len()))
	}
	a.Attributes().Range(func(k string, v pcommon.Value) bool {
		w, ok := b.Attributes().Get(k)
		switch {
		case !ok:
			d = append(d, k+" removed")
		case !valuesIdentical(v, w):
			d = append(d, fmt.Sprintf("%s: %.80s became %.80s", k, v.AsString(), w.AsString()))
		}
		return true
	})
	if len(d) == 0 {
		return "another field"
	}
	return strings.Join(d, ", ")
}

type badPoint struct{ model, what string }

func bad(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) }

// nonFinite returns the non-finite values of a metric's points: sums, minima, maxima, exemplar
// values, and number points.
func nonFinite(m pmetric.Metric) []badPoint {
	var out []badPoint
	model := func(a pcommon.Map) string {
		if v, ok := a.Get("gen_ai.request.model"); ok {
			return v.Str()
		}
		return "(no model)"
	}
	exemplars := func(a pcommon.Map, ex pmetric.ExemplarSlice) {
		for i := range ex.Len() {
			if e := ex.At(i); e.ValueType() == pmetric.ExemplarValueTypeDouble && bad(e.DoubleValue()) {
				out = append(out, badPoint{model(a), fmt.Sprintf("%s exemplar %v", m.Name(), e.DoubleValue())})
			}
		}
	}
	switch m.Type() {
	case pmetric.MetricTypeHistogram:
		dps := m.Histogram().DataPoints()
		for i := range dps.Len() {
			p := dps.At(i)
			if bad(p.Sum()) || (p.HasMin() && bad(p.Min())) || (p.HasMax() && bad(p.Max())) {
				out = append(out, badPoint{model(p.Attributes()), fmt.Sprintf("%s sum %v min %v max %v", m.Name(), p.Sum(), p.Min(), p.Max())})
			}
			exemplars(p.Attributes(), p.Exemplars())
		}
	case pmetric.MetricTypeExponentialHistogram:
		dps := m.ExponentialHistogram().DataPoints()
		for i := range dps.Len() {
			p := dps.At(i)
			if bad(p.Sum()) || (p.HasMin() && bad(p.Min())) || (p.HasMax() && bad(p.Max())) {
				out = append(out, badPoint{model(p.Attributes()), fmt.Sprintf("%s sum %v", m.Name(), p.Sum())})
			}
			exemplars(p.Attributes(), p.Exemplars())
		}
	case pmetric.MetricTypeSum:
		dps := m.Sum().DataPoints()
		for i := range dps.Len() {
			p := dps.At(i)
			if p.ValueType() == pmetric.NumberDataPointValueTypeDouble && bad(p.DoubleValue()) {
				out = append(out, badPoint{model(p.Attributes()), fmt.Sprintf("%s %v", m.Name(), p.DoubleValue())})
			}
		}
	case pmetric.MetricTypeGauge:
		dps := m.Gauge().DataPoints()
		for i := range dps.Len() {
			p := dps.At(i)
			if p.ValueType() == pmetric.NumberDataPointValueTypeDouble && bad(p.DoubleValue()) {
				out = append(out, badPoint{model(p.Attributes()), fmt.Sprintf("%s %v", m.Name(), p.DoubleValue())})
			}
		}
	}
	return out
}
