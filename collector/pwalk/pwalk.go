// Package pwalk walks pdata's nested resource / scope / item slices, so that code that only wants
// the spans or the metrics does not repeat the three loops.
package pwalk

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Spans calls f for every span of td, with its resource's attributes.
func Spans(td ptrace.Traces, f func(resource pcommon.Map, span ptrace.Span)) {
	SpansOutside(td, nil, func(res pcommon.Map, _ pcommon.InstrumentationScope, span ptrace.Span) { f(res, span) })
}

// SpansOutside calls f for every span of td, with its resource's attributes and its
// instrumentation scope, except the spans of the scopes named in scopes.
func SpansOutside(td ptrace.Traces, scopes []string, f func(resource pcommon.Map, scope pcommon.InstrumentationScope, span ptrace.Span)) {
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		rs := rss.At(i)
		res := rs.Resource().Attributes()
		sss := rs.ScopeSpans()
		for j := range sss.Len() {
			ss := sss.At(j)
			if len(scopes) > 0 && slices.Contains(scopes, ss.Scope().Name()) {
				continue
			}
			scope := ss.Scope()
			spans := ss.Spans()
			for k := range spans.Len() {
				f(res, scope, spans.At(k))
			}
		}
	}
}

// Metrics calls f for every metric of md.
func Metrics(md pmetric.Metrics, f func(m pmetric.Metric)) {
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		sms := rms.At(i).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for k := range ms.Len() {
				f(ms.At(k))
			}
		}
	}
}
