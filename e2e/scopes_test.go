package e2e

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
)

// The application of TestTwoInstrumentationsOneRequest: its own LLM instrumentation's scope, the
// service it runs as, and the model it streams from.
const (
	appScope   = "app.llm.instrumentation"
	appService = "e2e-stacked-app"
	appModel   = "e2e-stacked"
)

// TestTwoInstrumentationsOneRequest is the README's "Two instrumentations on one request" as a
// user has it: an application whose own LLM instrumentation (scope app.llm.instrumentation) writes
// a CLIENT "chat e2e-stacked" span per request, with the time to first chunk it measured (under
// gen_ai.client.operation.time_to_first_chunk, as Pydantic AI and the Vercel AI SDK write it), and
// sends the request, its trace context in traceparent, through the built otelitl-proxy, which
// writes its own span with the whole timeline into the same trace. Both export over OTLP to the
// built otelcol-itl running the shipped otlp.yaml, into a backend in the test process.
//
// Without excluded_scopes, each request counts twice: 2N generations (N with a timeline, the
// proxy's; N with a time to first chunk only, the application's), 2N durations and 2N times to
// first chunk. With excluded_scopes: [app.llm.instrumentation] on the processor and the connector,
// as the README says, it counts once, with the proxy's figures: N generations, all with a
// timeline, N durations and times to first chunk, and every gap of the proxy's timelines. The
// backend gets every span both times, and the application's spans, which the processor annotates
// without the setting, as the application wrote them with it.
func TestTwoInstrumentationsOneRequest(t *testing.T) {
	requireE2E(t)
	collector, proxyBin := buildCollector(t), buildProxy(t)
	const requests, chunks = 3, 5
	var events []wraptest.Event
	for i := range chunks {
		events = append(events, wraptest.Event{Data: fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","model":%q,"choices":[{"index":0,"delta":{"content":"token%d "}}]}`, appModel, i), Content: true})
	}
	upstream := wraptest.NewServer(t, append(events, wraptest.Event{Data: "[DONE]"}), 10*time.Millisecond)

	run := func(t *testing.T, excluded bool) (*stackBackend, map[pcommon.SpanID]map[string]any) {
		backend, backendAddr := startStackBackend(t)
		var args []string
		if excluded {
			args = []string{
				"--config", "yaml:processors::itl::excluded_scopes: [" + appScope + "]",
				"--config", "yaml:connectors::itl_metrics::excluded_scopes: [" + appScope + "]",
			}
		}
		_, ports := startAgent(t, collector, "otlp.yaml", []string{
			"OTLP_ENDPOINT=" + backendAddr, "OTLP_TOKEN=e2e", "OTLP_INSECURE=true", "ITL_FLUSH_INTERVAL=1s",
		}, args...)
		proxyAddr := freePort(t)
		start(t, "otelitl-proxy", []string{
			"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + ports.http, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
			"OTEL_SERVICE_NAME=otelitl-proxy", "OTEL_BSP_SCHEDULE_DELAY=100",
		}, proxyBin, "-addr", proxyAddr, "-openai", upstream.URL)
		waitHTTP(t, "http://"+proxyAddr+"/healthz", 30*time.Second)

		written := streamThroughProxy(t, ports.grpc, proxyAddr, requests, chunks)
		backend.settle(t, 2*requests)
		return backend, written
	}

	t.Run("without excluded_scopes", func(t *testing.T) {
		b, written := run(t, false)
		b.checkMetrics(t, map[string]map[string]float64{
			itlconv.Generations.Name:        {"timeline": requests, "ttft": requests},
			itlconv.Duration.Name:           {"otelitl-proxy": requests, appService: requests},
			itlconv.TimeToFirstChunk.Name:   {"otelitl-proxy": requests, appService: requests},
			itlconv.TimePerOutputChunk.Name: {"otelitl-proxy": requests * (chunks - 1)},
		})
		// The processor annotates the application's spans too: the check of the next run, that it
		// leaves them as they were written, is one this run would fail.
		for id, got := range b.checkSpans(t, written, requests) {
			if got[string(itlconv.TTFTSourceKey)] != itlconv.ClientTimeToFirstChunkKey {
				t.Errorf("the application's span %v holds %s=%v, want %q: the processor reads it as a model call without excluded_scopes", id, itlconv.TTFTSourceKey, got[string(itlconv.TTFTSourceKey)], itlconv.ClientTimeToFirstChunkKey)
			}
		}
	})
	t.Run("excluded_scopes", func(t *testing.T) {
		b, written := run(t, true)
		b.checkMetrics(t, map[string]map[string]float64{
			itlconv.Generations.Name:        {"timeline": requests},
			itlconv.Duration.Name:           {"otelitl-proxy": requests},
			itlconv.TimeToFirstChunk.Name:   {"otelitl-proxy": requests},
			itlconv.TimePerOutputChunk.Name: {"otelitl-proxy": requests * (chunks - 1)},
		})
		for id, got := range b.checkSpans(t, written, requests) {
			if want := written[id]; !maps.Equal(got, want) {
				t.Errorf("the application's span %v reached the backend with %v, want it untouched: %v", id, got, want)
			}
		}
	})
}

// streamThroughProxy is the application: an SDK tracer provider exporting over OTLP/gRPC to the
// collector at otlp, whose tracer (its LLM instrumentation's scope) writes a CLIENT span around
// each of n streamed Chat Completions requests it sends through the proxy at proxyAddr, the span's
// trace context in traceparent, as an instrumented HTTP client sends it. It checks that each reply
// brought the chunks the upstream sent, and returns the attributes each span was written with.
func streamThroughProxy(t *testing.T, otlp, proxyAddr string, n, chunks int) map[pcommon.SpanID]map[string]any {
	t.Helper()
	ctx := context.Background()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(otlp), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(appService))))
	tracer := tp.Tracer(appScope)
	written := map[pcommon.SpanID]map[string]any{}
	body := fmt.Sprintf(`{"model":%q,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, appModel)
	for i := range n {
		attrs := []attribute.KeyValue{
			attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.provider.name", "openai"),
			attribute.String("gen_ai.request.model", appModel),
		}
		sctx, span := tracer.Start(ctx, "chat "+appModel, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
		began := time.Now()
		req, err := http.NewRequestWithContext(sctx, http.MethodPost, "http://"+proxyAddr+"/v1/chat/completions", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		propagation.TraceContext{}.Inject(sctx, propagation.HeaderCarrier(req.Header))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("request %d through the proxy: %v", i, err)
		}
		var ttft time.Duration
		got := 0
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "data: {") {
				if got == 0 {
					ttft = time.Since(began)
				}
				got++
			}
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || got != chunks || sc.Err() != nil {
			t.Fatalf("request %d through the proxy: status %d, %d chunks (%v), want 200 and %d", i, resp.StatusCode, got, sc.Err(), chunks)
		}
		ttftAttr := attribute.Float64(itlconv.ClientTimeToFirstChunkKey, ttft.Seconds())
		span.SetAttributes(ttftAttr)
		span.End()
		want := map[string]any{string(ttftAttr.Key): ttftAttr.Value.AsFloat64()}
		for _, a := range attrs {
			want[string(a.Key)] = a.Value.AsString()
		}
		written[pcommon.SpanID(span.SpanContext().SpanID())] = want
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("exporting the application's spans: %v", err)
	}
	return written
}

// stackBackend is an OTLP/gRPC backend in the test process that keeps every span it receives and
// the latest point of each series of the connector's cumulative metrics.
type stackBackend struct {
	mu         sync.Mutex
	traces     []ptrace.Traces
	spans      int
	lastSpanAt time.Time
	points     map[string]stackPoint // series (metric, resource and point attributes) -> latest point
	lastFlush  time.Time             // the latest timestamp of a point received
}

// stackPoint is a series' point: its metric, its attributes (the resource's, then the point's),
// its time and its value (a histogram's count, a sum's value).
type stackPoint struct {
	metric string
	attrs  map[string]any
	at     time.Time
	value  float64
}

type stackTraces struct {
	ptraceotlp.UnimplementedGRPCServer
	*stackBackend
}

type stackMetrics struct {
	pmetricotlp.UnimplementedGRPCServer
	*stackBackend
}

func (s stackTraces) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	td := ptrace.NewTraces()
	req.Traces().CopyTo(td)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.traces = append(s.traces, td)
	s.spans += td.SpanCount()
	s.lastSpanAt = time.Now()
	return ptraceotlp.NewExportResponse(), nil
}

func (s stackMetrics) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rms := req.Metrics().ResourceMetrics()
	for i := range rms.Len() {
		res := rms.At(i).Resource().Attributes().AsRaw()
		sms := rms.At(i).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for k := range ms.Len() {
				m := ms.At(k)
				switch m.Type() {
				case pmetric.MetricTypeHistogram:
					dps := m.Histogram().DataPoints()
					for d := range dps.Len() {
						s.observe(m.Name(), res, dps.At(d).Attributes(), dps.At(d).Timestamp(), float64(dps.At(d).Count()))
					}
				case pmetric.MetricTypeSum:
					dps := m.Sum().DataPoints()
					for d := range dps.Len() {
						v := dps.At(d).DoubleValue()
						if dps.At(d).ValueType() == pmetric.NumberDataPointValueTypeInt {
							v = float64(dps.At(d).IntValue())
						}
						s.observe(m.Name(), res, dps.At(d).Attributes(), dps.At(d).Timestamp(), v)
					}
				}
			}
		}
	}
	return pmetricotlp.NewExportResponse(), nil
}

// observe keeps a point if it is its series' latest. Called with s.mu held.
func (s *stackBackend) observe(metric string, res map[string]any, attrs pcommon.Map, ts pcommon.Timestamp, v float64) {
	all := maps.Clone(res)
	maps.Copy(all, attrs.AsRaw())
	key := metric + "|" + attrKey(all)
	at := ts.AsTime()
	if p, ok := s.points[key]; ok && p.at.After(at) {
		return // an older flush, arrived late
	}
	s.points[key] = stackPoint{metric: metric, attrs: all, at: at, value: v}
	if at.After(s.lastFlush) {
		s.lastFlush = at
	}
}

// startStackBackend serves OTLP/gRPC on a free loopback port until the test ends.
func startStackBackend(t *testing.T) (*stackBackend, string) {
	t.Helper()
	b := &stackBackend{points: map[string]stackPoint{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	ptraceotlp.RegisterGRPCServer(srv, &stackTraces{stackBackend: b})
	pmetricotlp.RegisterGRPCServer(srv, &stackMetrics{stackBackend: b})
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return b, l.Addr().String()
}

// settle waits until the backend holds spans spans and then a flush of the connector's metrics
// stamped a second after the last of them arrived: the connector read each span before the
// collector's exporter sent it on, so that flush holds every span's figures, and the cumulative
// points it holds are final.
func (s *stackBackend) settle(t *testing.T, spans int) {
	t.Helper()
	var got int
	var last, flushed time.Time
	if !waitFor(30*time.Second, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		got, last, flushed = s.spans, s.lastSpanAt, s.lastFlush
		return got >= spans && flushed.After(last.Add(time.Second))
	}) {
		t.Fatalf("after 30s the backend holds %d spans, want %d, and its latest flush of metrics is of %v, the last span arrived at %v",
			got, spans, flushed.Format(time.StampMilli), last.Format(time.StampMilli))
	}
}

// checkMetrics compares the latest cumulative points with want: for each metric, the sum of its
// series' values by otelitl.timing for otelitl.generations and by service.name for the others.
// Every series counts: a series want does not name fails the test.
func (s *stackBackend) checkMetrics(t *testing.T, want map[string]map[string]float64) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	got := map[string]map[string]float64{}
	for _, p := range s.points {
		if _, ok := want[p.metric]; !ok {
			continue
		}
		by := "service.name"
		if p.metric == itlconv.Generations.Name {
			by = itlconv.TimingKey
		}
		if got[p.metric] == nil {
			got[p.metric] = map[string]float64{}
		}
		got[p.metric][fmt.Sprint(p.attrs[by])] += p.value
	}
	for metric, w := range want {
		if !maps.Equal(got[metric], w) {
			t.Errorf("%s: %v, want %v", metric, got[metric], w)
		}
	}
}

// checkSpans checks the spans the backend got: the application's n, each of which it wrote (in
// written), and the proxy's n, each a child of one of them, in its trace, annotated by the
// processor. It returns the attributes of the application's spans as they arrived.
func (s *stackBackend) checkSpans(t *testing.T, written map[pcommon.SpanID]map[string]any, n int) map[pcommon.SpanID]map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	app := map[pcommon.SpanID]map[string]any{}
	appTrace := map[pcommon.SpanID]pcommon.TraceID{}
	var proxy []ptrace.Span
	others := 0
	for _, td := range s.traces {
		rss := td.ResourceSpans()
		for i := range rss.Len() {
			sss := rss.At(i).ScopeSpans()
			for j := range sss.Len() {
				scope := sss.At(j).Scope().Name()
				spans := sss.At(j).Spans()
				for k := range spans.Len() {
					span := spans.At(k)
					switch scope {
					case appScope:
						app[span.SpanID()] = span.Attributes().AsRaw()
						appTrace[span.SpanID()] = span.TraceID()
					case otelitl.ScopeName:
						proxy = append(proxy, span)
					default:
						others++
					}
				}
			}
		}
	}
	if len(app) != n || len(proxy) != n || others != 0 || s.spans != 2*n {
		t.Fatalf("the backend holds %d spans: %d of %s, %d of %s (the proxy's) and %d of other scopes; want %d of each and no other",
			s.spans, len(app), appScope, len(proxy), otelitl.ScopeName, others, n)
	}
	for id := range written {
		if _, ok := app[id]; !ok {
			t.Errorf("the application's span %v did not reach the backend", id)
		}
	}
	for _, p := range proxy {
		tid, ok := appTrace[p.ParentSpanID()]
		if !ok || tid != p.TraceID() {
			t.Errorf("the proxy's span %v has parent %v in trace %v: not a child of an application span (traceparent not followed)", p.SpanID(), p.ParentSpanID(), p.TraceID())
		}
		if _, ok := p.Attributes().Get(string(itlconv.GapMaxKey)); !ok {
			t.Errorf("the proxy's span %v has no %s: the processor did not annotate it", p.SpanID(), itlconv.GapMaxKey)
		}
	}
	return app
}
