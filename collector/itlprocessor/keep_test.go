package itlprocessor

import (
	"bytes"
	"math"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelitl/itl/itlconv"
)

// clientSpan is a golden case as otelitl's client writes it: under its scope, with the figures the
// processor computes from its timeline (at the default stall threshold) already on it.
func clientSpan(t *testing.T, name string) ptrace.Traces {
	t.Helper()
	td := goldenCase(t, name)
	h := newHarness(t, func(c *Config) { c.KeepClientFigures = false }, nil)
	h.run(t, td)
	out := h.sink.AllTraces()[0]
	out.ResourceSpans().At(0).ScopeSpans().At(0).Scope().SetName(itlconv.ClientScope)
	return out
}

func spanCount(t *testing.T, h *harness, metric string) int64 {
	t.Helper()
	m, err := h.tel.GetMetric(metric)
	if err != nil {
		return 0
	}
	var n int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		n += dp.Value
	}
	return n
}

// TestKeepsClientFigures: a span of otelitl's client that carries its figures passes through
// byte-identical and is counted as kept, not annotated; the same span under another scope, or with
// the setting off, is annotated as before, with the same figures.
func TestKeepsClientFigures(t *testing.T) {
	for _, name := range []string{"stalls", "events-basic", "multi-token-compact", "single-chunk", "error-midstream"} {
		t.Run(name, func(t *testing.T) {
			in := clientSpan(t, name)
			want := protoBytes(t, in)

			h := newHarness(t, nil, nil)
			h.run(t, in)
			if got := protoBytes(t, h.sink.AllTraces()[0]); !bytes.Equal(got, want) {
				t.Error("a client span with its figures changed in the processor")
			}
			if k, a := spanCount(t, h, "otelcol_processor_itl_spans_kept"), spanCount(t, h, "otelcol_processor_itl_spans_annotated"); k != 1 || a != 0 {
				t.Errorf("kept %d, annotated %d; want 1 and 0", k, a)
			}

			for _, c := range []struct {
				name   string
				mutate func(*Config)
				scope  string
			}{
				{"setting off", func(c *Config) { c.KeepClientFigures = false }, itlconv.ClientScope},
				{"another scope", nil, "my.instrumentation"},
				{"drop_timeline", func(c *Config) { c.DropTimeline = true }, itlconv.ClientScope},
			} {
				td := ptrace.NewTraces()
				in.CopyTo(td)
				td.ResourceSpans().At(0).ScopeSpans().At(0).Scope().SetName(c.scope)
				h := newHarness(t, c.mutate, nil)
				out := h.run(t, td)
				if k, a := spanCount(t, h, "otelcol_processor_itl_spans_kept"), spanCount(t, h, "otelcol_processor_itl_spans_annotated"); k != 0 || a != 1 {
					t.Errorf("%s: kept %d, annotated %d; want 0 and 1", c.name, k, a)
				}
				sameFigures(t, c.name, out.Attributes(), in.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes())
			}

			// With compact_events, a span of chunk events is compacted, its figures computed again;
			// one without events is kept.
			td := ptrace.NewTraces()
			in.CopyTo(td)
			events := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Events().Len() > 0
			h = newHarness(t, func(c *Config) { c.CompactEvents = true }, nil)
			out := h.run(t, td)
			if k, a := spanCount(t, h, "otelcol_processor_itl_spans_kept"), spanCount(t, h, "otelcol_processor_itl_spans_annotated"); (k == 1) == events || k+a != 1 {
				t.Errorf("compact_events, events %v: kept %d, annotated %d", events, k, a)
			}
			sameFigures(t, "compact_events", out.Attributes(), in.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes())
		})
	}
}

// sameFigures checks that got holds want's figures, value for value.
func sameFigures(t *testing.T, what string, got, want pcommon.Map) {
	t.Helper()
	for _, k := range itlconv.FigureKeys {
		w, wok := want.Get(string(k))
		g, gok := got.Get(string(k))
		if wok != gok || (wok && !g.Equal(w)) {
			t.Errorf("%s: %s = %s, want %s", what, k, describe(g, gok), describe(w, wok))
		}
	}
}

// TestClientFiguresChecked: figures under the client's scope that are not the client's (a type,
// a sign, an order, a count that no client writes) are computed again from the timeline, and the
// span holds the timeline's figures, written once each.
func TestClientFiguresChecked(t *testing.T) {
	orig := clientSpan(t, "stalls")
	wantAttrs := orig.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
	for _, c := range []struct {
		name  string
		spoil func(pcommon.Map)
	}{
		{"stalls a string", func(m pcommon.Map) { m.PutStr(string(itlconv.StallsKey), "3") }},
		{"stalls a double", func(m pcommon.Map) { m.PutDouble(string(itlconv.StallsKey), 3) }},
		{"stalls negative", func(m pcommon.Map) { m.PutInt(string(itlconv.StallsKey), -1) }},
		{"no stalls", func(m pcommon.Map) { m.Remove(string(itlconv.StallsKey)) }},
		{"p50 above p90", func(m pcommon.Map) { m.PutDouble(string(itlconv.GapP50Key), 99) }},
		{"p99 NaN", func(m pcommon.Map) { m.PutDouble(string(itlconv.GapP99Key), math.NaN()) }},
		{"max infinite", func(m pcommon.Map) { m.PutDouble(string(itlconv.GapMaxKey), math.Inf(1)) }},
		{"max an int", func(m pcommon.Map) { m.PutInt(string(itlconv.GapMaxKey), 1) }},
		{"p90 missing", func(m pcommon.Map) { m.Remove(string(itlconv.GapP90Key)) }},
		{"p50 negative", func(m pcommon.Map) { m.PutDouble(string(itlconv.GapP50Key), -0.5) }},
		{"tpot negative", func(m pcommon.Map) { m.PutDouble(string(itlconv.TPOTKey), -1) }},
		{"tpot a string", func(m pcommon.Map) { m.PutStr(string(itlconv.TPOTKey), "0.01") }},
		// pdata keeps a key twice as the wire gave it (Put cannot): renamed after encoding.
		{"stalls twice", func(m pcommon.Map) { m.PutInt("otelitl.stallz", 0) }},
		{"p50 twice", func(m pcommon.Map) { m.PutDouble("otelitl.chunk.gap.p5x", 0) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			td := ptrace.NewTraces()
			orig.CopyTo(td)
			attrs := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
			c.spoil(attrs)
			td = renameKeys(t, td, map[string]string{"otelitl.stallz": string(itlconv.StallsKey), "otelitl.chunk.gap.p5x": string(itlconv.GapP50Key)})
			h := newHarness(t, nil, nil)
			out := h.run(t, td)
			if k, a := spanCount(t, h, "otelcol_processor_itl_spans_kept"), spanCount(t, h, "otelcol_processor_itl_spans_annotated"); k != 0 || a != 1 {
				t.Errorf("kept %d, annotated %d; want 0 and 1", k, a)
			}
			sameFigures(t, c.name, out.Attributes(), wantAttrs)
		})
	}
}

// TestKeepClientFiguresOffAtAnotherThreshold: at another stall_threshold the processor counts the
// stalls itself, and says at start that the setting applies to no span.
func TestKeepClientFiguresOffAtAnotherThreshold(t *testing.T) {
	in := clientSpan(t, "stalls")
	before, _ := in.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().Get(string(itlconv.StallsKey))
	stalls := before.Int()
	h := newHarness(t, func(c *Config) { c.StallThreshold = 10 * time.Second }, nil)
	out := h.run(t, in)
	if k, a := spanCount(t, h, "otelcol_processor_itl_spans_kept"), spanCount(t, h, "otelcol_processor_itl_spans_annotated"); k != 0 || a != 1 {
		t.Errorf("kept %d, annotated %d; want 0 and 1", k, a)
	}
	after, _ := out.Attributes().Get(string(itlconv.StallsKey))
	if after.Int() >= stalls {
		t.Errorf("stalls %d at 10s, %d at 250ms: want fewer at the higher threshold", after.Int(), stalls)
	}
	logged := h.logs.FilterMessageSnippet("keep_client_figures applies to no span").All()
	if len(logged) != 1 || logged[0].ContextMap()["why"] != "stall_threshold is 10s, and the client counts stalls at 250ms" {
		t.Errorf("start log %v", logged)
	}
}

// renameKeys renames attribute keys in td's JSON encoding, which can then hold a key twice.
func renameKeys(t *testing.T, td ptrace.Traces, names map[string]string) ptrace.Traces {
	t.Helper()
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	for from, to := range names {
		b = bytes.ReplaceAll(b, []byte(`"`+from+`"`), []byte(`"`+to+`"`))
	}
	out, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fuzzedKeys are the figures FuzzClientFigures sets to doubles, in the order of its arguments; bit i
// of its mask leaves out fuzzedKeys[i].
var fuzzedKeys = []attribute.Key{itlconv.GapP50Key, itlconv.GapP90Key, itlconv.GapP99Key, itlconv.GapMaxKey, itlconv.TPOTKey}

// FuzzClientFigures sets the figures of a client span to any values, or leaves any of them out:
// the processor either passes the span through byte-identical, counted as kept, or writes the
// timeline's own figures, counted as annotated; never anything between.
func FuzzClientFigures(f *testing.F) {
	f.Add(int64(2), 0.02, 0.03, 0.04, 0.4, 0.02, uint8(0))
	f.Add(int64(-1), 0.02, 0.03, 0.04, 0.4, 0.02, uint8(0))
	f.Add(int64(2), 0.05, 0.03, 0.04, 0.4, math.Copysign(0, -1), uint8(1<<4))
	f.Add(int64(0), math.NaN(), 0.03, 0.04, math.Inf(1), 0.02, uint8(1<<1|1<<6))
	var once sync.Once
	var base ptrace.Traces
	f.Fuzz(func(t *testing.T, stalls int64, p50, p90, p99, max, tpot float64, mask uint8) {
		once.Do(func() { base = clientSpan(t, "stalls") })
		td := ptrace.NewTraces()
		base.CopyTo(td)
		attrs := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
		for i, v := range []float64{p50, p90, p99, max, tpot} {
			k := fuzzedKeys[i]
			if mask&(1<<i) != 0 {
				attrs.Remove(string(k))
			} else {
				attrs.PutDouble(string(k), v)
			}
		}
		switch {
		case mask&(1<<5) != 0:
			attrs.Remove(string(itlconv.StallsKey))
		case mask&(1<<6) != 0:
			attrs.PutDouble(string(itlconv.StallsKey), float64(stalls))
		default:
			attrs.PutInt(string(itlconv.StallsKey), stalls)
		}
		in := protoBytes(t, td)
		h := newHarness(t, nil, nil)
		out := h.run(t, td)
		switch k, a := spanCount(t, h, "otelcol_processor_itl_spans_kept"), spanCount(t, h, "otelcol_processor_itl_spans_annotated"); {
		case k == 1 && a == 0:
			if !bytes.Equal(protoBytes(t, h.sink.AllTraces()[0]), in) {
				t.Fatal("a kept span changed")
			}
			fine := func(v float64) bool { return v >= 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }
			gaps := mask & 0xf
			if mask&(1<<5|1<<6) != 0 || stalls < 0 || (mask&(1<<4) == 0 && !fine(tpot)) || (gaps != 0 && gaps != 0xf) ||
				(gaps == 0 && !(fine(p50) && fine(p90) && fine(p99) && fine(max) && p50 <= p90 && p90 <= p99 && p99 <= max)) {
				t.Fatalf("kept implausible figures: stalls %d, gaps %v %v %v %v, tpot %v, mask %08b", stalls, p50, p90, p99, max, tpot, mask)
			}
		case k == 0 && a == 1:
			sameFigures(t, "recomputed", out.Attributes(), base.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes())
		default:
			t.Fatalf("kept %d, annotated %d", k, a)
		}
	})
}
