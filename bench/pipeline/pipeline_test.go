package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/featuregate"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.yaml.in/yaml/v3"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
)

// The harness runs only under make bench-pipeline; these tests check its parsing and arithmetic.

func TestParseStatCPU(t *testing.T) {
	// A command name with a space and a parenthesis: fields are counted from the last ')'.
	stat := "4242 (otel col) x) S 1 4242 4242 0 -1 4194560 12345 0 0 0 1234 567 0 0 20 0 14 0 98765 2000000000 20000 18446744073709551615\n"
	got, err := parseStatCPU([]byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	if want := (1234 + 567) * 10 * time.Millisecond; got != want {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := parseStatCPU([]byte("4242 (x) S 1 2")); err == nil {
		t.Error("a short line was read")
	}
}

func TestParseStatusKB(t *testing.T) {
	status := "Name:\totelcol-itl\nVmPeak:\t 2000000 kB\nVmHWM:\t   58432 kB\nVmRSS:\t   51200 kB\n"
	got, err := parseStatusKB([]byte(status), "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	if got != 58432<<10 {
		t.Errorf("got %d", got)
	}
	if _, err := parseStatusKB([]byte(status), "VmSwap"); err == nil {
		t.Error("a missing key was read")
	}
}

func TestGenerateAndCountSpans(t *testing.T) {
	ld, err := generate(50, 10, 2, 30, otelitl.EncodingCompact, false)
	if err != nil {
		t.Fatal(err)
	}
	if ld.spans != 100 || ld.gaps != 100*9 || len(ld.reqs) != 4 {
		t.Fatalf("spans %d, gaps %d, requests %d", ld.spans, ld.gaps, len(ld.reqs))
	}
	var total int
	for i, b := range ld.reqs {
		n, err := countSpans(b)
		if err != nil {
			t.Fatal(err)
		}
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		if n != req.Traces().SpanCount() || n != ld.reqSpans[i] {
			t.Errorf("request %d: counted %d spans, pdata %d, generated %d", i, n, req.Traces().SpanCount(), ld.reqSpans[i])
		}
		total += n
		sp := req.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
		if sh := shapeOf(sp); sh != (shape{timeline: "compact"}) {
			t.Errorf("request %d: a span is %s", i, sh)
		}
		if v, _ := sp.Attributes().Get(string(itlconv.ChunkOffsetsKey)); v.Slice().Len() != 10 {
			t.Errorf("request %d: %d offsets", i, v.Slice().Len())
		}
	}
	if total != 100 {
		t.Errorf("%d spans in all", total)
	}

	ev, err := generate(10, 150, 1, 100, otelitl.EncodingEvents, false)
	if err != nil {
		t.Fatal(err)
	}
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(ev.reqs[0]); err != nil {
		t.Fatal(err)
	}
	if sp := req.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0); sp.Events().Len() != 150 {
		t.Errorf("an event span kept %d of 150 chunks", sp.Events().Len())
	}
	if _, err := countSpans([]byte{0x0a, 0x05, 0x12}); err == nil {
		t.Error("a truncated request was counted")
	}
}

// TestGenerateWithFigures: a figures load is the bare load with the client's figures on every span,
// and nothing else: removing them from the spans of the figures load gives the bare load's
// spans, attribute for attribute.
func TestGenerateWithFigures(t *testing.T) {
	for _, enc := range []otelitl.Encoding{otelitl.EncodingCompact, otelitl.EncodingEvents} {
		bare, err := generate(50, 20, 1, 50, enc, false)
		if err != nil {
			t.Fatal(err)
		}
		fig, err := generate(50, 20, 1, 50, enc, true)
		if err != nil {
			t.Fatal(err)
		}
		if !fig.figures || bare.figures || len(fig.reqs) != 1 || len(bare.reqs) != 1 {
			t.Fatalf("%v: figures %v and %v, %d and %d requests", enc, fig.figures, bare.figures, len(fig.reqs), len(bare.reqs))
		}
		decode := func(b []byte) ptrace.SpanSlice {
			req := ptraceotlp.NewExportRequest()
			if err := req.UnmarshalProto(b); err != nil {
				t.Fatal(err)
			}
			return req.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		}
		fs, bs := decode(fig.reqs[0]), decode(bare.reqs[0])
		for i := range fs.Len() {
			f, b := fs.At(i), bs.At(i)
			if sh := shapeOf(f); !sh.figures {
				t.Fatalf("%v: span %d of the figures load is %s", enc, i, sh)
			}
			if sh := shapeOf(b); sh.figures {
				t.Fatalf("%v: span %d of the bare load is %s", enc, i, sh)
			}
			for _, k := range itlconv.FigureKeys {
				f.Attributes().Remove(string(k))
			}
			// The spans were written at different moments: compare what the client wrote, not when.
			f.SetStartTimestamp(b.StartTimestamp())
			f.SetEndTimestamp(b.EndTimestamp())
			f.SetTraceID(b.TraceID())
			f.SetSpanID(b.SpanID())
			if !reflect.DeepEqual(f.Attributes().AsRaw(), b.Attributes().AsRaw()) || f.Events().Len() != b.Events().Len() {
				t.Fatalf("%v: span %d differs beyond the figures:\n%v\n%v", enc, i, f.Attributes().AsRaw(), b.Attributes().AsRaw())
			}
		}
	}
}

// The annotated load is the load as sent plus the processor's annotations, and nothing else: its
// spans carry the figures, every attribute sent is kept, the only ones added are the figures the
// client does not write itself (it writes the time to first chunk and the chunk count), and pdata's
// own encoding of a request as sent is within 2 bytes a span of the SDK's (it writes the empty
// status), so that the two loads differ by what the processor adds.
func TestAnnotate(t *testing.T) {
	added := map[string]bool{string(itlconv.TPOTKey): true, string(itlconv.GapP50Key): true, string(itlconv.GapP90Key): true,
		string(itlconv.GapP99Key): true, string(itlconv.GapMaxKey): true, string(itlconv.StallsKey): true}
	for _, enc := range []otelitl.Encoding{otelitl.EncodingCompact, otelitl.EncodingEvents} {
		ld, err := generate(50, 20, 2, 30, enc, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := makeVariants(ld); err != nil {
			t.Fatal(err)
		}
		want := shape{timeline: "compact", figures: true}
		if enc == otelitl.EncodingEvents {
			want.timeline = "events"
		}
		annotated, reencoded := ld.variants["annotated"], ld.variants["reencoded"]
		if len(annotated) != len(ld.reqs) || len(reencoded) != len(ld.reqs) {
			t.Fatalf("%v: %d annotated and %d reencoded requests of %d", enc, len(annotated), len(reencoded), len(ld.reqs))
		}
		var sum, sumRe int64
		for i, b := range annotated {
			sum += int64(len(b))
			sumRe += int64(len(reencoded[i]))
			orig := ptraceotlp.NewExportRequest()
			if err := orig.UnmarshalProto(ld.reqs[i]); err != nil {
				t.Fatal(err)
			}
			again, err := orig.MarshalProto()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, reencoded[i]) {
				t.Errorf("%v, request %d: the reencoded request is not pdata's encoding of the one sent", enc, i)
			}
			if d := len(again) - len(ld.reqs[i]); d < 0 || d > 2*ld.reqSpans[i] {
				t.Errorf("%v, request %d: pdata encodes it in %d B, sent as %d", enc, i, len(again), len(ld.reqs[i]))
			}
			req := ptraceotlp.NewExportRequest()
			if err := req.UnmarshalProto(b); err != nil {
				t.Fatal(err)
			}
			if n := req.Traces().SpanCount(); n != ld.reqSpans[i] {
				t.Fatalf("%v, request %d: %d spans of %d", enc, i, n, ld.reqSpans[i])
			}
			spans := req.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans()
			origSpans := orig.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans()
			for k := range spans.Len() {
				sp, o := spans.At(k), origSpans.At(k)
				if sh := shapeOf(sp); sh != want {
					t.Errorf("%v, request %d: a span is %s", enc, i, sh)
				}
				if sp.Events().Len() != o.Events().Len() {
					t.Errorf("%v, request %d, span %d: %d events of %d", enc, i, k, sp.Events().Len(), o.Events().Len())
				}
				for key, v := range o.Attributes().All() {
					if got, ok := sp.Attributes().Get(key); !ok || !got.Equal(v) {
						t.Errorf("%v, request %d, span %d: %s is %v, sent %v", enc, i, k, key, got.AsRaw(), v.AsRaw())
					}
				}
				n := 0
				for key := range sp.Attributes().All() {
					if _, sent := o.Attributes().Get(key); !sent {
						n++
						if !added[key] {
							t.Errorf("%v, request %d, span %d: %s added", enc, i, k, key)
						}
					}
				}
				if n != len(added) {
					t.Errorf("%v, request %d, span %d: %d attributes added, not %d", enc, i, k, n, len(added))
				}
			}
		}
		if sum != ld.variantBytes["annotated"] || sumRe != ld.variantBytes["reencoded"] || sum <= sumRe {
			t.Errorf("%v: annotated %d B (counted %d), reencoded %d B (counted %d)", enc, sum, ld.variantBytes["annotated"], sumRe, ld.variantBytes["reencoded"])
		}
	}
	ev := &load{encoding: otelitl.EncodingEvents}
	a, _ := configByName("annotated")
	if a.input != "annotated" || a.metrics || a.expect(ev) != (shape{timeline: "events", figures: true}) {
		t.Errorf("the annotated configuration: %+v", a)
	}
	r, _ := configByName("reencoded")
	if r.input != "reencoded" || r.metrics || r.expect(ev) != (shape{timeline: "events"}) {
		t.Errorf("the reencoded configuration: %+v", r)
	}
}

func TestSchedule(t *testing.T) {
	due := schedule([]int{100, 100, 50, 100}, 1000)
	want := []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond}
	for i := range want {
		if due[i] != want[i] {
			t.Errorf("request %d due at %v, want %v", i, due[i], want[i])
		}
	}
}

func TestMedianAndRatios(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median %v", m)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median %v", m)
	}
	if m := median(nil); m != 0 {
		t.Errorf("median of none %v", m)
	}
	r := pairedRatios(map[int]float64{0: 1.1, 1: 2.4, 2: 0.9, 3: 5}, map[int]float64{0: 1, 1: 2, 2: 1})
	want := []float64{0.9, 1.1, 1.2}
	if len(r) != len(want) {
		t.Fatalf("ratios %v", r)
	}
	for i := range want {
		if math.Abs(r[i]-want[i]) > 1e-12 {
			t.Errorf("ratios %v, want %v", r, want)
		}
	}
	// Mean 1.0667; standard error 0.08819; t at 2 degrees of freedom 4.303.
	if s := ratioText(r); s != "1.100 (0.900-1.200), mean 1.067 ± 0.379" {
		t.Errorf("ratio text %q", s)
	}
	if s := ratioText(r[1:]); s != "1.150 (1.100-1.200)" {
		t.Errorf("ratio text of two %q", s)
	}
	if m, h := meanCI([]float64{1, 3}); m != 2 || math.Abs(h-12.706) > 1e-9 {
		t.Errorf("mean %v ± %v of 1 and 3, want 2 ± 12.706", m, h)
	}
	many := make([]float64, 50) // past the table: t at 30 degrees of freedom
	for i := range many {
		many[i] = float64(i % 2)
	}
	if m, h := meanCI(many); m != 0.5 || math.Abs(h-2.042*math.Sqrt(0.25*50/49/50)) > 1e-12 {
		t.Errorf("mean %v ± %v of 50 alternating 0 and 1", m, h)
	}
	if v := perMillion(2*time.Second, 4_000_000); v != 0.5 {
		t.Errorf("per million %v", v)
	}
}

func TestStageOf(t *testing.T) {
	for _, c := range []struct {
		stack []string // leaf first
		want  string
	}{
		{[]string{"runtime.mallocgc", "go.opentelemetry.io/collector/pdata/pcommon.Map.PutDouble", "github.com/otelitl/itl/collector/itlprocessor.(*processor).processSpan", "go.opentelemetry.io/collector/receiver/otlpreceiver.(*Receiver).Export"}, "ours: itl processor"},
		{[]string{"github.com/otelitl/itl/collector/genaispan.Decode", "github.com/otelitl/itl/collector/itlmetricsconnector.(*connector).ConsumeTraces", "go.opentelemetry.io/collector/processor/batchprocessor.(*shard).sendItems"}, "ours: itl_metrics connector"},
		{[]string{"go.opentelemetry.io/collector/pdata/internal.UnmarshalProtoOrigSpan", "google.golang.org/grpc.(*Server).processUnaryRPC"}, "OTLP decode (receiver, pdata unmarshal)"},
		{[]string{"runtime.memmove", "go.opentelemetry.io/collector/pdata/internal.MarshalProtoOrigSpan", "go.opentelemetry.io/collector/exporter/otlpexporter.(*baseExporter).pushTraces"}, "OTLP encode (exporter, pdata marshal/size)"},
		{[]string{"go.opentelemetry.io/collector/pdata/ptrace.Traces.CopyTo", "go.opentelemetry.io/collector/internal/fanoutconsumer.(*tracesConsumer).ConsumeTraces"}, "fanout copy between pipelines"},
		{[]string{"syscall.Syscall", "google.golang.org/grpc/internal/transport.(*loopyWriter).run", "google.golang.org/grpc/internal/transport.NewServerTransport.func2"}, "gRPC, HTTP/2 and network: receiver side"},
		{[]string{"internal/poll.(*FD).Write", "google.golang.org/grpc/internal/transport.(*http2Client).Write", "google.golang.org/grpc.invoke"}, "gRPC, HTTP/2 and network: exporter side"},
		{[]string{"compress/flate.(*compressor).deflate", "google.golang.org/grpc.compress", "google.golang.org/grpc.invoke"}, "gzip compression (exporter)"},
		{[]string{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"}, "GC (background) and scheduler"},
		{[]string{"runtime.futex"}, "other"},
	} {
		if got := stageOf(c.stack); got != c.want {
			t.Errorf("%s: got %q, want %q", c.stack[0], got, c.want)
		}
	}
}

func TestShortName(t *testing.T) {
	for in, want := range map[string]string{
		"github.com/otelitl/itl/collector/itlprocessor.(*itlProcessor).processSpan":                                                        "itlprocessor.(*itlProcessor).processSpan",
		"go.opentelemetry.io/collector/exporter/exporterhelper/internal/queuebatch.(*partitionBatcher[go.shape.interface { x/y.Z }]).Send": "queuebatch.(*partitionBatcher[go.shape.interface { x/y.Z }]).Send",
		"runtime.mallocgc": "runtime.mallocgc",
	} {
		if got := shortName(in); got != want {
			t.Errorf("%s: got %s", in, got)
		}
	}
}

func TestConfigs(t *testing.T) {
	for _, c := range configs {
		if _, ok := configByName(c.base); c.base != "" && (!ok || c.baseAbout == "") {
			t.Errorf("%s: base %q unknown or unexplained", c.name, c.base)
		}
		y := c.render("127.0.0.1:1", "127.0.0.1:2", "", "gzip", 15*time.Second)
		if strings.Contains(y, "{{") || strings.Contains(y, "pprof") {
			t.Errorf("%s:\n%s", c.name, y)
		}
		if !strings.Contains(y, "metrics_flush_interval: 15s\n") {
			t.Errorf("%s: no flush interval of 15s:\n%s", c.name, y)
		}
		if p := c.render("127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3", "none", 2*time.Second); !strings.Contains(p, "extensions: [pprof]") || !strings.HasPrefix(p, "extensions:\n  pprof:\n    endpoint: 127.0.0.1:3\n") {
			t.Errorf("%s with pprof:\n%s", c.name, p)
		}
	}
	// A gate the collector does not know stops it at start: every gate named must be registered
	// in this build of pdata, which registers pdata.useProtoPooling.
	known := map[string]bool{}
	featuregate.GlobalRegistry().VisitAll(func(g *featuregate.Gate) { known[g.ID()] = true })
	gated := 0
	for _, c := range configs {
		if c.gates == "" {
			continue
		}
		gated++
		for _, g := range strings.Split(c.gates, ",") {
			if !known[strings.TrimPrefix(g, "+")] {
				t.Errorf("%s: feature gate %q is not registered", c.name, g)
			}
		}
	}
	split, _ := configByName("split_pool")
	if strings.Contains(split.yaml, "processors") || !strings.Contains(split.yaml, "    traces/store:\n      receivers: [otlp]\n      exporters: [otlp/sink]\n") {
		t.Errorf("split_pool must have two pipelines that change nothing:\n%s", split.yaml)
	}
	if gated != 4 {
		t.Errorf("%d configurations with feature gates, want passthrough_eb_pool, full_eb_pool, fanout_pool and split_pool", gated)
	}
	// The _nobatch configurations are their batched counterparts without the batch processor,
	// and nothing else changed.
	for nb, batched := range map[string]string{"passthrough_nobatch": "passthrough", "connector_nobatch": "connector"} {
		y, b := mustConfig(t, nb).yaml, mustConfig(t, batched).yaml
		if strings.Contains(y, "batch") || strings.Replace(strings.Replace(b, "processors:"+batch, "", 1), "      processors: [batch]\n", "", 1) != y {
			t.Errorf("%s is not %s without its batch processor:\n%s", nb, batched, y)
		}
	}
	compact := &load{encoding: otelitl.EncodingCompact}
	events := &load{encoding: otelitl.EncodingEvents}
	if n := len(configsFor([]string{"passthrough", "full", "drop_timeline", "compact_events"}, compact)); n != 3 {
		t.Errorf("%d configurations on a compact load", n)
	}
	full, _ := configByName("full")
	ct, _ := configByName("compact_events")
	if full.expect(events) != (shape{timeline: "events", figures: true}) || ct.expect(events) != (shape{timeline: "compact", figures: true}) {
		t.Error("expected shapes")
	}
}

// The _eb configurations batch in the exporter, with the batch processor's size and timeout, and
// have no batch processor; everything else is as in the configuration they come from.
func TestExporterBatching(t *testing.T) {
	for _, n := range []string{"passthrough_eb", "full_eb", "shipped", "shipped_split", "drop_timeline_eb"} {
		c, ok := configByName(n)
		if !ok {
			t.Fatalf("no %s", n)
		}
		y := c.render("127.0.0.1:1", "127.0.0.1:2", "", "gzip", 15*time.Second)
		if strings.Contains(y, "batch]") || strings.Contains(y, "  batch:\n    send_batch_size") ||
			!strings.Contains(y, "      batch:\n        flush_timeout: 200ms\n        min_size: 2048\n        sizer: items\n") {
			t.Errorf("%s:\n%s", n, y)
		}
	}
	f, _ := configByName("full_eb")
	if !f.metrics || f.base != "passthrough_eb" || !strings.Contains(f.yaml, "processors: [itl]\n      exporters: [itl_metrics, otlp/sink]") {
		t.Errorf("full_eb: %+v", f)
	}
	p, _ := configByName("passthrough_eb")
	if strings.Contains(p.yaml, "processors") {
		t.Errorf("passthrough_eb has processors:\n%s", p.yaml)
	}
	if p.expect(&load{encoding: otelitl.EncodingCompact}) != (shape{timeline: "compact"}) || f.expect(&load{encoding: otelitl.EncodingEvents}) != (shape{timeline: "events", figures: true}) {
		t.Error("expected shapes")
	}
}

// The report compares a configuration with its base per round, besides pass-through.
func TestReportBase(t *testing.T) {
	ld := &load{name: "events-100", kind: "events", encoding: otelitl.EncodingEvents, chunks: 100, spans: 10, reqs: [][]byte{{}}}
	o := options{configs: []string{"passthrough", "reencoded", "annotated"}, rounds: 2, rate: 1, seconds: 1, batch: 10, compression: "gzip", flush: 15 * time.Second}
	var rs []result
	for round, cpu := range [][3]float64{{1.0, 1.0, 1.05}, {1.0, 1.1, 1.21}} {
		for i, c := range o.configs {
			rs = append(rs, result{load: ld.name, config: c, round: round, chunks: 1e6, cpu: time.Duration(cpu[i] * float64(time.Second))})
		}
	}
	out := formatReport(o, []*load{ld}, rs, nil)
	if !strings.Contains(out, "annotated against reencoded, per round: 1.075 (1.050-1.100)") || strings.Contains(out, "reencoded against") {
		t.Errorf("report:\n%s", out)
	}
}

func TestOptionsRuns(t *testing.T) {
	o := options{configs: []string{"passthrough", "full"}, profile: []string{"annotated:events"}}
	if !o.runs("full") || !o.runs("annotated") || o.runs("drop_timeline") {
		t.Error("runs")
	}
}

func TestParseOptions(t *testing.T) {
	t.Setenv("PIPELINE_SECONDS", "5")
	if o, err := parseOptions([]string{"-seconds", "20", "-profile", "full,compact_events:events"}); err != nil || len(o.profile) != 2 {
		t.Errorf("%v, %+v", err, o)
	}
	if o, err := parseOptions([]string{"-seconds", "8"}); err != nil || o.profileSeconds != 4 || len(o.profile) != 1 {
		t.Errorf("a short load: %v, %+v", err, o)
	}
	if o, err := parseOptions([]string{"-seconds", "4"}); err != nil || len(o.profile) != 0 {
		t.Errorf("a load too short to profile: %v, %+v", err, o)
	}
	if o, err := parseOptions([]string{"-profile", "none"}); err != nil || len(o.profile) != 0 {
		t.Errorf("-profile none: %v, %+v", err, o)
	}
	o, err := parseOptions([]string{"-rounds", "2", "-profile", "", "-loads", "compact"})
	if err != nil {
		t.Fatal(err)
	}
	if o.seconds != 5 || o.rounds != 2 || o.rate != 1000 || o.chunks != 200 || len(o.profile) != 0 || len(o.loads) != 1 {
		t.Errorf("%+v", o)
	}
	if o.flush != 15*time.Second { // the connector's default, as a user runs it
		t.Errorf("flush %v by default", o.flush)
	}
	if o.together {
		t.Error("together by default")
	}
	if o, err := parseOptions([]string{"-together"}); err != nil || !o.together {
		t.Errorf("-together: %v, %+v", err, o)
	}
	t.Setenv("PIPELINE_TOGETHER", "1")
	if o, err := parseOptions(nil); err != nil || !o.together {
		t.Errorf("PIPELINE_TOGETHER=1: %v, %+v", err, o)
	}
	if o, err := parseOptions([]string{"-flush", "2s"}); err != nil || o.flush != 2*time.Second {
		t.Errorf("-flush 2s: %v, %+v", err, o)
	}
	for _, args := range [][]string{{"-loads", "json"}, {"-configs", "nope"}, {"-loads", "compact", "-profile", "full:events"}, {"-profile", "nope:compact"}, {"-rate", "0"}, {"-compression", "lz4"},
		{"-flush", "10ms"}, {"-flush", "2h"}} {
		if _, err := parseOptions(args); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// BenchmarkExportGzip compresses one export request of 100 generation spans as the OTLP exporter
// does by default (gzip at its default level), per timeline encoding: the exporter's gzip is most
// of a pass-through collector's CPU, and its cost per byte depends on what the bytes are.
// compact-100 is what compact_events makes of events-100; none is the spans without a timeline,
// what drop_timeline exports.
func BenchmarkExportGzip(b *testing.B) {
	for _, c := range []struct {
		name   string
		chunks int
		enc    otelitl.Encoding
	}{{"compact-200", 200, otelitl.EncodingCompact}, {"compact-200-annotated", 200, otelitl.EncodingCompact},
		{"events-100", 100, otelitl.EncodingEvents}, {"events-100-annotated", 100, otelitl.EncodingEvents},
		{"compact-100", 100, otelitl.EncodingCompact}, {"none", 1, otelitl.EncodingCompact}} {
		ld, err := generate(100, c.chunks, 1, 100, c.enc, false)
		if err != nil {
			b.Fatal(err)
		}
		raw := ld.reqs[0]
		if strings.HasSuffix(c.name, "-annotated") { // as the full pipeline exports them
			if err := makeVariants(ld); err != nil {
				b.Fatal(err)
			}
			raw = ld.variants["annotated"][0]
		}
		if c.name == "none" { // one chunk: no gaps; drop its offsets as drop_timeline would
			req := ptraceotlp.NewExportRequest()
			if err := req.UnmarshalProto(raw); err != nil {
				b.Fatal(err)
			}
			rss := req.Traces().ResourceSpans()
			for i := range rss.Len() {
				for j := range rss.At(i).ScopeSpans().Len() {
					spans := rss.At(i).ScopeSpans().At(j).Spans()
					for k := range spans.Len() {
						spans.At(k).Attributes().Remove(string(itlconv.ChunkOffsetsKey))
					}
				}
			}
			if raw, err = req.MarshalProto(); err != nil {
				b.Fatal(err)
			}
		}
		b.Run("timeline="+c.name, func(b *testing.B) {
			gz, n := newGzipper(), 0
			for b.Loop() {
				n = gz.compress(raw)
			}
			spans := float64(ld.spans)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/spans, "ns/span")
			b.ReportMetric(float64(len(raw))/spans, "B/span")
			b.ReportMetric(float64(n)/spans, "gzB/span")
		})
	}
}

// BenchmarkCarry measures what carrying the itl processor's annotations costs the stages of a
// pass-through collector that handle every byte of a span: the receiver's decoding, the exporter's
// encoding and its gzip (60 to 80% of a pass-through's CPU in bench-pipeline). Each iteration takes
// one request of 100 spans through the three, with and without the annotations (the same request,
// encoded by pdata both times), in alternating order, so that both sides see the same machine.
// added-ns/span is what the annotations add to the three; added-export-ns/span what they add to
// the encoding and the gzip alone, which a pipeline that annotates pays however its processor
// builds them (in the full pipeline the receiver does not decode them: the processor writes them).
// bench-pipeline's annotated and reencoded configurations measure the same end to end, with more
// noise.
func BenchmarkCarry(b *testing.B) {
	for _, c := range []struct {
		name   string
		chunks int
		enc    otelitl.Encoding
	}{{"compact-200", 200, otelitl.EncodingCompact}, {"events-100", 100, otelitl.EncodingEvents}} {
		ld, err := generate(100, c.chunks, 1, 100, c.enc, false)
		if err != nil {
			b.Fatal(err)
		}
		if err := makeVariants(ld); err != nil {
			b.Fatal(err)
		}
		plain, annotated, spans := ld.variants["reencoded"][0], ld.variants["annotated"][0], float64(ld.reqSpans[0])
		b.Run("load="+c.name, func(b *testing.B) {
			gz := newGzipper()
			type times struct{ decode, export time.Duration }
			carry := func(raw []byte, t *times) {
				t0 := time.Now()
				req := ptraceotlp.NewExportRequest()
				if err := req.UnmarshalProto(raw); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				out, err := req.MarshalProto()
				if err != nil {
					b.Fatal(err)
				}
				gz.compress(out)
				t.decode += t1.Sub(t0)
				t.export += time.Since(t1)
			}
			var without, with times
			n := 0
			for b.Loop() {
				if n%2 == 0 {
					carry(plain, &without)
					carry(annotated, &with)
				} else {
					carry(annotated, &with)
					carry(plain, &without)
				}
				n++
			}
			per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(n) / spans }
			b.ReportMetric(per(without.decode+without.export), "plain-ns/span")
			b.ReportMetric(per(with.decode+with.export), "annotated-ns/span")
			b.ReportMetric(per(with.decode+with.export-without.decode-without.export), "added-ns/span")
			b.ReportMetric(per(with.export-without.export), "added-export-ns/span")
			b.ReportMetric(float64(len(annotated)-len(plain))/spans, "added-B/span")
		})
	}
}

// The shipped configuration is the layout the OTLP configurations in exporter-config/ ship: the same
// pipelines, with the same components in the same order (their memory_limiter aside), and the
// processor compacting. A change to those files that this configuration does not follow fails here.
func TestShippedIsTheShippedLayout(t *testing.T) {
	c, ok := configByName("shipped")
	if !ok {
		t.Fatal("no shipped configuration")
	}
	want := layout(t, []byte(c.render("127.0.0.1:1", "127.0.0.1:2", "", "gzip", 15*time.Second)))
	for _, f := range []string{"otlp.yaml", "otlphttp.yaml", "gateway.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "exporter-config", f))
		if err != nil {
			t.Fatal(err)
		}
		if got := layout(t, b); !slices.Equal(got, want) {
			t.Errorf("exporter-config/%s has the pipelines\n%s\nand the shipped configuration\n%s", f, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// layout lists a collector configuration's pipelines, sorted, as their signal, receivers,
// processors and exporters, with every connector by name, any other receiver or exporter as
// "receiver" or "exporter", and without memory_limiter; the itl processor is named with its
// compact_events and drop_timeline settings.
func layout(t *testing.T, y []byte) []string {
	t.Helper()
	var cfg struct {
		Processors map[string]map[string]any `yaml:"processors"`
		Connectors map[string]any            `yaml:"connectors"`
		Service    struct {
			Pipelines map[string]struct {
				Receivers, Processors, Exporters []string
			} `yaml:"pipelines"`
		} `yaml:"service"`
	}
	if err := yaml.Unmarshal(y, &cfg); err != nil {
		t.Fatal(err)
	}
	name := func(id, other string) string {
		if _, ok := cfg.Connectors[id]; ok {
			return id
		}
		return other
	}
	var out []string
	for id, p := range cfg.Service.Pipelines {
		var rs, ps, es []string
		for _, r := range p.Receivers {
			rs = append(rs, name(r, "receiver"))
		}
		for _, pr := range p.Processors {
			switch pr {
			case "memory_limiter":
			case "itl":
				ps = append(ps, fmt.Sprintf("itl(compact_events=%v, drop_timeline=%v)", cfg.Processors[pr]["compact_events"], cfg.Processors[pr]["drop_timeline"]))
			default:
				ps = append(ps, pr)
			}
		}
		for _, e := range p.Exporters {
			es = append(es, name(e, "exporter"))
		}
		signal, _, _ := strings.Cut(id, "/")
		out = append(out, fmt.Sprintf("%s: %v -> %v -> %v", signal, rs, ps, es))
	}
	slices.Sort(out)
	return out
}

// gzipper compresses as the OTLP exporter does by default: gzip at its default level, with one
// writer reused, as the exporter's gRPC compressor pools them.
type gzipper struct {
	buf bytes.Buffer
	zw  *gzip.Writer
}

func newGzipper() *gzipper {
	g := &gzipper{}
	g.zw = gzip.NewWriter(&g.buf)
	return g
}

// compress gzips b and returns the compressed size.
func (g *gzipper) compress(b []byte) int {
	g.buf.Reset()
	g.zw.Reset(&g.buf)
	_, _ = g.zw.Write(b)
	_ = g.zw.Close()
	return g.buf.Len()
}

// A run that includes the floor configuration, in the rounds or profiled, runs every configuration
// on bench/floorcol's binary: otelcol-itl has no floor processor.
func TestNeedsFloor(t *testing.T) {
	for _, c := range []struct {
		configs, profile []string
		want             bool
	}{
		{[]string{"passthrough", "full"}, []string{"full"}, false},
		{[]string{"passthrough", "floor"}, nil, true},
		{[]string{"passthrough", "floor_exact"}, nil, true},
		{[]string{"passthrough", "full"}, []string{"floor:events"}, true},
	} {
		if got := (options{configs: c.configs, profile: c.profile}).needsFloor(); got != c.want {
			t.Errorf("configs %v, profile %v: needsFloor %v, want %v", c.configs, c.profile, got, c.want)
		}
	}
	f, _ := configByName("floor")
	if !strings.Contains(f.yaml, "processors: [itl_floor, batch]") || strings.Contains(f.yaml, "[itl,") {
		t.Errorf("floor's pipeline:\n%s", f.yaml)
	}
	if f, _ := configByName("floor_exact"); !strings.Contains(f.yaml, "itl_floor:\n    exact: true\n") {
		t.Errorf("floor_exact's processor:\n%s", f.yaml)
	}
}

// A -bin without the floor processor is refused before any load is generated, with the fix.
func TestCheckFloorBinary(t *testing.T) {
	dir := t.TempDir()
	fake := func(name, components string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\ncat <<'EOF'\n"+components+"EOF\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	floor := fake("floorcol", "processors:\n    - name: batch\n      stability:\n    - name: itl_floor\n      stability:\n")
	itl := fake("otelcol-itl", "processors:\n    - name: batch\n    - name: itl\n")
	if err := checkFloorBinary(floor); err != nil {
		t.Errorf("floorcol refused: %v", err)
	}
	err := checkFloorBinary(itl)
	if err == nil || !strings.Contains(err.Error(), "no itl_floor processor") || !strings.Contains(err.Error(), "bench/floorcol") {
		t.Errorf("otelcol-itl: %v", err)
	}
	if err := checkFloorBinary(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing binary passed")
	}
}

// A run with problems keeps the collector's log beside the report, named so that each run's is
// found; a log that cannot be read is no path.
func TestKeepLog(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "collector.log")
	if err := os.WriteFile(log, []byte("panic: slice bounds out of range\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "reports", "bench-pipeline.txt")
	for _, c := range []struct {
		round int
		want  string
	}{
		{0, "bench-pipeline-round1-compact-200-full_pool.collector.log"},
		{-1, "bench-pipeline-profile-compact-200-full_pool.collector.log"},
	} {
		got := keepLog(log, out, c.round, "compact-200", "full_pool")
		if got != filepath.Join(dir, "reports", c.want) {
			t.Errorf("round %d: kept at %q, want %s beside the report", c.round, got, c.want)
			continue
		}
		if b, err := os.ReadFile(got); err != nil || string(b) != "panic: slice bounds out of range\n" {
			t.Errorf("round %d: kept %q (%v)", c.round, b, err)
		}
	}
	if got := keepLog(filepath.Join(dir, "missing.log"), out, 0, "events-100", "full"); got != "" {
		t.Errorf("a missing log was kept at %q", got)
	}
}

// TestConfigsForFigures: on a load that carries the client's figures, the configurations that
// measure what computing them in a collector costs (annotated and its control, the floors) do not
// run, and every span delivered must carry the figures, whatever the configuration.
func TestConfigsForFigures(t *testing.T) {
	names := []string{"passthrough", "reencoded", "annotated", "floor", "floor_exact", "floor_read", "full", "drop_timeline", "compact_events"}
	var got []string
	fig := &load{encoding: otelitl.EncodingEvents, figures: true}
	for _, c := range configsFor(names, fig) {
		got = append(got, c.name)
		if sh := c.expect(fig); !sh.figures {
			t.Errorf("%s on a figures load expects %s", c.name, sh)
		}
	}
	if want := []string{"passthrough", "floor_read", "full", "drop_timeline", "compact_events"}; !reflect.DeepEqual(got, want) {
		t.Errorf("configurations %v, want %v", got, want)
	}
	if n := len(configsFor(names, &load{encoding: otelitl.EncodingEvents})); n != len(names) {
		t.Errorf("%d configurations on a bare load, want %d", n, len(names))
	}
	if sh := mustConfig(t, "passthrough").expect(&load{encoding: otelitl.EncodingCompact}); sh.figures {
		t.Errorf("passthrough on a bare load expects %s", sh)
	}
}

func mustConfig(t *testing.T, name string) config {
	t.Helper()
	c, ok := configByName(name)
	if !ok {
		t.Fatalf("no configuration %q", name)
	}
	return c
}
