// Package sdkptrace converts spans finished by the OpenTelemetry Go SDK into the collector's pdata
// form, as the OTLP exporter would put them on the wire. Tests and benchmarks use it to feed spans
// that otelitl really wrote to the collector components, and to measure their wire size, without a
// network hop.
package sdkptrace

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Traces converts spans into one ptrace.Traces, one ResourceSpans and ScopeSpans per span.
func Traces(spans []sdktrace.ReadOnlySpan) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, s := range spans {
		rs := td.ResourceSpans().AppendEmpty()
		if res := s.Resource(); res != nil {
			putAttrs(rs.Resource().Attributes(), res.Attributes())
		}
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName(s.InstrumentationScope().Name)
		ss.Scope().SetVersion(s.InstrumentationScope().Version)
		Span(s, ss.Spans().AppendEmpty())
	}
	return td
}

// Span fills dst with s.
func Span(s sdktrace.ReadOnlySpan, dst ptrace.Span) {
	sc := s.SpanContext()
	dst.SetTraceID(pcommon.TraceID(sc.TraceID()))
	dst.SetSpanID(pcommon.SpanID(sc.SpanID()))
	if p := s.Parent(); p.IsValid() {
		dst.SetParentSpanID(pcommon.SpanID(p.SpanID()))
	}
	dst.SetName(s.Name())
	dst.SetKind(kind(s.SpanKind()))
	dst.SetStartTimestamp(pcommon.NewTimestampFromTime(s.StartTime()))
	dst.SetEndTimestamp(pcommon.NewTimestampFromTime(s.EndTime()))
	putAttrs(dst.Attributes(), s.Attributes())
	dst.SetDroppedAttributesCount(uint32(s.DroppedAttributes()))
	evs := dst.Events()
	evs.EnsureCapacity(len(s.Events()))
	for _, e := range s.Events() {
		pe := evs.AppendEmpty()
		pe.SetName(e.Name)
		pe.SetTimestamp(pcommon.NewTimestampFromTime(e.Time))
		putAttrs(pe.Attributes(), e.Attributes)
		pe.SetDroppedAttributesCount(uint32(e.DroppedAttributeCount))
	}
	dst.SetDroppedEventsCount(uint32(s.DroppedEvents()))
	switch s.Status().Code {
	case 1:
		dst.Status().SetCode(ptrace.StatusCodeError)
	case 2:
		dst.Status().SetCode(ptrace.StatusCodeOk)
	}
	dst.Status().SetMessage(s.Status().Description)
}

func kind(k trace.SpanKind) ptrace.SpanKind {
	switch k {
	case trace.SpanKindInternal:
		return ptrace.SpanKindInternal
	case trace.SpanKindServer:
		return ptrace.SpanKindServer
	case trace.SpanKindClient:
		return ptrace.SpanKindClient
	case trace.SpanKindProducer:
		return ptrace.SpanKindProducer
	case trace.SpanKindConsumer:
		return ptrace.SpanKindConsumer
	}
	return ptrace.SpanKindUnspecified
}

func putAttrs(m pcommon.Map, kvs []attribute.KeyValue) {
	m.EnsureCapacity(len(kvs))
	for _, kv := range kvs {
		k := string(kv.Key)
		switch kv.Value.Type() {
		case attribute.BOOL:
			m.PutBool(k, kv.Value.AsBool())
		case attribute.INT64:
			m.PutInt(k, kv.Value.AsInt64())
		case attribute.FLOAT64:
			m.PutDouble(k, kv.Value.AsFloat64())
		case attribute.STRING:
			m.PutStr(k, kv.Value.AsString())
		case attribute.BOOLSLICE:
			s := m.PutEmptySlice(k)
			for _, v := range kv.Value.AsBoolSlice() {
				s.AppendEmpty().SetBool(v)
			}
		case attribute.INT64SLICE:
			s := m.PutEmptySlice(k)
			vs := kv.Value.AsInt64Slice()
			s.EnsureCapacity(len(vs))
			for _, v := range vs {
				s.AppendEmpty().SetInt(v)
			}
		case attribute.FLOAT64SLICE:
			s := m.PutEmptySlice(k)
			for _, v := range kv.Value.AsFloat64Slice() {
				s.AppendEmpty().SetDouble(v)
			}
		case attribute.STRINGSLICE:
			s := m.PutEmptySlice(k)
			for _, v := range kv.Value.AsStringSlice() {
				s.AppendEmpty().SetStr(v)
			}
		default:
			m.PutStr(k, kv.Value.String())
		}
	}
}
