package genaispan

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/itlconv/timeline"
)

// Call is what a span says about one model call, normalised to the GenAI semantic conventions
// whichever instrumentation wrote it. It aliases the Decoder's buffers: it is valid until the next
// call to Read or Decode.
type Call struct {
	// Result is the span's timeline.
	Result
	// ModelCall says the span stands for one request to a model (see Read). Only model calls have
	// figures; the other fields are empty for any other span.
	ModelCall bool
	// Server says the span is a model server's (SERVER kind): its figures are the server's view.
	Server bool
	// Operation, Provider and Model are gen_ai.operation.name, gen_ai.provider.name and
	// gen_ai.request.model, from the span's own attributes or another instrumentation's names for
	// them; "" when the span says nothing.
	Operation, Provider, Model string
	// Figures are the call's figures: the time to first chunk and the output tokens from whichever
	// source holds them, the chunk figures from a valid timeline.
	Figures timeline.Figures
	// Gaps are the smallest and largest gap of a valid timeline and its stalls, counted as the
	// decoder read the arrivals (timeline.NoGaps() with fewer than two chunks, or no valid
	// timeline): a histogram of the gaps takes its minimum and maximum from them.
	Gaps timeline.GapStats
	// TTFTSource names where Figures.TTFT came from: the timeline's attribute or event name, or the
	// other instrumentation's attribute or event.
	TTFTSource string
	// InputTokens is the provider-reported input token count, when HasInputTokens.
	InputTokens    int64
	HasInputTokens bool
	// Duration is the span's duration in seconds, when HasDuration.
	Duration    float64
	HasDuration bool
	// Timing is itlconv.TimingTimeline, TimingTTFT or TimingNone: what the span holds about the
	// rhythm of the reply.
	Timing string

	malformed [4]Reason
	nbad      int
}

// Malformed lists the reasons values of the span were rejected: its timeline, its time to first
// chunk, its usage, its start and end. A model call with none is sound.
func (c *Call) Malformed() []Reason { return c.malformed[:c.nbad] }

// JoinReasons lists reasons for a log line: "ttft_negative,usage_invalid".
func JoinReasons(rs []Reason) string {
	var b strings.Builder
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(string(r))
	}
	return b.String()
}

func (c *Call) reject(why Reason) {
	if why == ReasonNone || slices.Contains(c.malformed[:c.nbad], why) {
		return
	}
	if c.nbad < len(c.malformed) {
		c.malformed[c.nbad] = why
		c.nbad++
	}
}

// Read reads span as a model call, following the rules of testdata/golden/README.md ("Other
// instrumentations' timing"):
//
//   - A model call is a span with gen_ai.operation.name other than the configured
//     excluded_operations (agents, agent steps, tools, plans, retrievals, memory calls); a Vercel
//     AI SDK span whose ai.operationId ends in .doStream or .doGenerate; an OpenInference span of
//     kind LLM; a Langfuse generation; a span of the legacy conventions (gen_ai.system,
//     OpenLLMetry's llm.request.type) or of vLLM's request tracing; or a span with a timeline. A
//     LangSmith span (langsmith.span.kind) counts only for the run types of
//     itlconv.LangSmithModelCallKinds: LangSmith writes chat for a prompt template, embeddings for
//     a retriever and the run type for a chain. A Mastra span (mastra.span.type) counts only under
//     the operations of itlconv.MastraModelCallOperations: Mastra writes its span type as the
//     operation of every other span (model_generation, model_chunk, ...). A Strands span
//     (gen_ai.event.start_time) counts only under itlconv.StrandsModelCallOperations (chat), not
//     its graph, node or memory spans; its gen_ai.system is Strands' service name, so it has no
//     provider. Google ADK's model call (call_llm) has no operation and counts as a span of the
//     legacy conventions; its gen_ai.system, itlconv.ADKSystem, names ADK, so it has no provider;
//     its workflow's node spans (execute_node) are excluded by default. A span whose operation is
//     "unknown" and that names no model is none: opentelemetry-instrumentation-openai-agents-v2
//     writes it on the OpenAI Agents SDK's task, turn and custom spans (itlconv.UnknownOperation);
//     its handoffs and guardrail checks are excluded by default. A span of OpenLLMetry's
//     traceloop.span.kind of itlconv.OpenLLMetryNoModelCallKinds (its workflow, task, agent and
//     tool spans) is none, whatever its operation: its LangChain instrumentation writes
//     gen_ai.operation.name workflow on every chain run's span. A span without a timeline
//     that answered with a redirect (http.response.status_code 3xx) is a hop of a request sent
//     again elsewhere, and no model call. A span whose gen_ai.operation.name is its
//     llm.request.type, or that carries LiteLLM's metadata.user_api_key_hash beside
//     llm.request.type, is LiteLLM's, which writes its call type there ("acompletion"): its
//     operation is the conventions' one LiteLLM maps it to (ownOperation).
//   - Its time to first chunk comes from the first source present, and only from it: a complete
//     timeline; gen_ai.response.time_to_first_chunk (s); gen_ai.client.operation.time_to_first_chunk
//     (s); ai.response.msToFirstChunk or ai.stream.msToFirstChunk (ms);
//     gen_ai.server.time_to_first_token (s; ms on a Strands span); Langfuse's completion start
//     time minus the span start; Mastra's completion start time minus the span start (none, and
//     nothing malformed, when it is before the start: an earlier step's); on a LangSmith span,
//     langsmith.metadata.time_to_first_token (s; LangSmith Python's Google ADK integration);
//     OpenInference's first-token event minus the span start; on SERVER spans, vLLM's
//     gen_ai.latency.time_to_first_token (s). A value that is not finite, is negative or exceeds
//     the span's duration is malformed: no time to first chunk, and no later source is tried.
//     A span whose request says it was not streamed (gen_ai.request.stream, else the other flags
//     of itlconv, false) has none but from a timeline or gen_ai.response.time_to_first_chunk: the
//     golden rules hold no such span, and OpenLIT writes a non-streamed call's duration as its time
//     to first token.
//   - A mean gap is never read as a gap: only a valid timeline has gaps and stalls.
//
// percentiles turns on the gap percentiles, which need a sort of the gaps.
func (d *Decoder) Read(span ptrace.Span, percentiles bool) *Call {
	fs := &d.fields
	fs.scan(span.Attributes())
	c := &d.call
	if fs.has&readerFields == 0 && span.Events().Len() == 0 {
		// The common case of an ordinary span: no attribute any convention marks a model call with
		// and no event that could be a chunk, so nothing to decode.
		*c = Call{Result: emptyResult(span), Gaps: timeline.NoGaps()}
		return c
	}
	*c = Call{Gaps: timeline.NoGaps()}
	d.decode(span, &c.Result)
	if !d.modelCall(c) || (!c.HasTimeline() && redirected(span)) {
		return c
	}
	c.ModelCall = true
	c.Server = span.Kind() == ptrace.SpanKindServer
	c.Operation = d.operation(c)
	c.Provider = d.normalizedProvider()
	c.Model = d.model()

	durationBad := c.durationReason()
	c.reject(durationBad)
	if durationBad == ReasonNone {
		c.Duration, c.HasDuration = timeline.Seconds(c.End-c.Start), true
	}
	if !c.Valid {
		c.reject(c.Reason)
	}

	if c.Valid {
		if !d.hasGaps { // no arrivals read, or not in time order: count the gaps of the timeline
			d.gaps = c.Timeline.Stats(d.stall)
		}
		c.Gaps = d.gaps
	}
	in := timeline.Input{Complete: c.Complete, StallThreshold: d.stall, Percentiles: percentiles,
		GapStats: c.Gaps, HasGapStats: true}
	if !c.Complete && durationBad == ReasonNone && c.Valid {
		ttft, src, why := d.ttft(c, span)
		c.reject(why)
		if src != "" && why == ReasonNone {
			in.AttrTTFT, in.HasAttrTTFT, c.TTFTSource = ttft, true, src
		}
	}
	out, ok, why := d.usage(outputSources, "output", "completion_tokens")
	c.reject(why)
	in.UsageOutputTokens, in.HasUsage = out, ok
	c.InputTokens, c.HasInputTokens, why = d.usage(inputSources, "input", "prompt_tokens")
	c.reject(why)

	if c.Valid {
		d.scratch = timeline.ComputeInto(&c.Figures, c.Timeline, &in, d.scratch)
		if c.Complete && c.Figures.HasTTFT {
			c.TTFTSource = d.timelineSource(c)
		}
	} else if in.HasUsage {
		// A provider-reported count is not a chunk figure: it stands when the timeline is malformed.
		c.Figures.OutputTokens, c.Figures.HasOutputTokens = in.UsageOutputTokens, true
	}
	switch {
	case c.Valid && c.Timeline.Len() > 0:
		c.Timing = itlconv.TimingTimeline
	case c.Figures.HasTTFT:
		c.Timing = itlconv.TimingTTFT
	default:
		c.Timing = itlconv.TimingNone
	}
	return c
}

// redirected reports whether span answered with a redirect (http.response.status_code 3xx), as
// httpitl records the hop of a request an HTTP client then sends again elsewhere: the generation
// is the next hop's span, and this one, without a chunk, is no model call. Asked only of the spans
// that would otherwise be model calls without a timeline, so that the common spans pay nothing.
func redirected(span ptrace.Span) bool {
	v, ok := span.Attributes().Get(string(semconv.HTTPResponseStatusCodeKey))
	return ok && v.Type() == pcommon.ValueTypeInt && v.Int() >= 300 && v.Int() < 400
}

// frameworkOperations are the frameworks that write gen_ai.operation.name on spans of their own
// that ask no model, told by a key they write on every span: a span with the marker is a model call
// only under the operations listed. Mastra writes its span type where no convention's fits
// (model_generation, model_chunk, ...); Strands writes invoke_graph, execute_node, memory.search,
// ... on its graph, node and memory spans.
var frameworkOperations = [...]struct {
	marker field
	ops    []string
}{
	{fMastraType, itlconv.MastraModelCallOperations},
	{fStrandsStart, itlconv.StrandsModelCallOperations},
}

// modelCall applies the first rule of Read to the span whose attributes d.fields holds.
func (d *Decoder) modelCall(c *Call) bool {
	fs := &d.fields
	if c.HasTimeline() {
		return true
	}
	// LangSmith writes an operation for every run type, chat for a prompt template and
	// embeddings for a retriever too: only its llm and embedding runs ask a model.
	if fs.present(fLangSmithKind) && !slices.Contains(itlconv.LangSmithModelCallKinds, fs.str(fLangSmithKind)) {
		return false
	}
	// OpenLLMetry's workflow, task, agent and tool spans wrap model calls: its LangChain
	// instrumentation writes gen_ai.operation.name workflow, its own name, on every chain run's.
	if fs.present(fOpenLLMetryKind) && slices.Contains(itlconv.OpenLLMetryNoModelCallKinds, fs.str(fOpenLLMetryKind)) {
		return false
	}
	if op := d.ownOperation(); op != "" {
		for _, fw := range frameworkOperations {
			if fs.present(fw.marker) && !slices.Contains(fw.ops, op) {
				return false
			}
		}
		if op == itlconv.UnknownOperation && d.model() == "" {
			// The OpenAI Agents SDK's task, turn, custom and MCP spans, as
			// opentelemetry-instrumentation-openai-agents-v2 writes them (itlconv.UnknownOperation).
			return false
		}
		return !slices.Contains(d.excluded, op)
	}
	if op := fs.str(fVercelOperation); strings.HasSuffix(op, itlconv.VercelStreamSuffix) || strings.HasSuffix(op, itlconv.VercelGenerateSuffix) {
		return true
	}
	return fs.str(fOIKind) == itlconv.OpenInferenceLLMKind ||
		fs.str(fLangfuseType) == itlconv.LangfuseGenerationType ||
		fs.present(fSystem) || fs.present(fOpenLLMetryType) ||
		fs.present(fVLLMTTFT) || fs.present(fVLLMEndToEnd)
}

// operation is gen_ai.operation.name, else what the other conventions say it is: the model calls
// of the Vercel AI SDK, OpenInference and Langfuse are chat completions (their text, object and
// generation calls all go through a chat model), OpenLLMetry's request type names it. vLLM's
// spans do not say whether they served a chat or a completion: "".
func (d *Decoder) operation(c *Call) string {
	fs := &d.fields
	if op := d.ownOperation(); op != "" {
		return op
	}
	switch fs.str(fOpenLLMetryType) {
	case itlconv.OpenLLMetryChatType:
		return "chat"
	case "completion":
		return "text_completion"
	}
	if fs.present(fVercelOperation) || fs.present(fOIKind) || fs.present(fLangfuseType) {
		return "chat"
	}
	return ""
}

// ownOperation is the span's gen_ai.operation.name, "" when it has none, or for LiteLLM's spans
// the operation of their call type. LiteLLM's otel callback writes the call type as
// llm.request.type and, for any call type but "completion" (written "chat"), as
// gen_ai.operation.name too ("acompletion" for every request through its proxy, "aembedding", ...;
// litellm/integrations/opentelemetry.py, set_attributes), though only with message logging on. A
// span is LiteLLM's when its two are the same (other than "completion", which LiteLLM never writes
// as an operation), or when it carries LiteLLM's metadata.user_api_key_hash beside
// llm.request.type, whose "completion" is then LiteLLM's chat call, not OpenLLMetry's text
// completion. Its operation is what LiteLLM's own mapping to the conventions gives
// (liteLLMOperation), so that its model calls count, and are excluded, under the conventions'
// names.
func (d *Decoder) ownOperation() string {
	fs := &d.fields
	op := fs.str(fOperation)
	if t := fs.str(fOpenLLMetryType); t != "" && (fs.present(fLiteLLMMarker) || op != "completion" && op == t) {
		return liteLLMOperation(t)
	}
	return op
}

// liteLLMOperation maps a LiteLLM call type to the conventions' gen_ai.operation.name as LiteLLM
// does under OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental
// (litellm/integrations/opentelemetry_utils/gen_ai_semconv.py,
// OTELGenAISemconvMixin._gen_ai_operation_name): "embedding" in it is embeddings,
// "text_completion" is text_completion, anything else chat. "chat", OpenLLMetry's request type
// written as both, stays chat.
func liteLLMOperation(callType string) string {
	switch {
	case strings.Contains(callType, "embedding"):
		return "embeddings"
	case strings.Contains(callType, "text_completion"):
		return "text_completion"
	}
	return "chat"
}

func (d *Decoder) provider() string {
	fs := &d.fields
	if fs.present(fStrandsStart) {
		// Strands writes its service name as gen_ai.system (or gen_ai.provider.name), not the
		// provider's: it names none.
		return ""
	}
	for _, f := range [...]field{fProvider, fLangSmithProv, fSystem, fVercelProvider, fOIProvider, fOISystem} {
		if s := fs.str(f); s != "" && (f != fSystem || s != itlconv.ADKSystem) {
			return s
		}
	}
	return ""
}

func (d *Decoder) model() string {
	fs := &d.fields
	for _, f := range [...]field{fRequestModel, fVercelModel, fOIModel, fLangfuseModel, fResponseModel} {
		if s := fs.str(f); s != "" {
			return s
		}
	}
	return ""
}

// timelineSource names the timeline a time to first chunk was read from.
func (d *Decoder) timelineSource(c *Call) string {
	if c.Source == SourceCompact {
		return string(itlconv.ChunkOffsetsKey)
	}
	return c.EventName
}

// secondsSources are the attributes that hold a time to first chunk as a number, in the order
// Read tries them, with the factor to seconds.
var secondsSources = [...]struct {
	f     field
	scale float64
}{
	{fTTFT, 1},
	{fClientTTFT, 1},
	{fVercelMs, 1e-3},
	{fVercelStreamMs, 1e-3},
	{fServerTTFT, 1},
}

// completionStart reads v, an instrumentation's completion start time (an ISO 8601 time), under
// key as a time to first chunk from the span's start. With earlierIsNone a time before the start
// gives none, and is not malformed.
func completionStart(v pcommon.Value, key string, c *Call, earlierIsNone bool) (float64, string, Reason) {
	if v.Type() != pcommon.ValueTypeStr {
		return 0, key, ReasonTTFTNotNumber
	}
	t, ok := parseTime(v.Str())
	if !ok {
		return 0, key, ReasonTTFTBadTime
	}
	if earlierIsNone && uint64(t) < uint64(c.Start) {
		return 0, "", ReasonNone
	}
	secs, why := sinceStart(t, c.Start, c.End)
	return secs, key, why
}

// ttft finds the time to first chunk of a span without a complete timeline: its value in seconds,
// the source's name ("" when none is present), and why the source's value was rejected.
func (d *Decoder) ttft(c *Call, span ptrace.Span) (float64, string, Reason) {
	fs := &d.fields
	limit := timeline.Seconds(c.End - c.Start)
	// On a call not streamed only gen_ai.response.time_to_first_chunk stands: otelitl's own (the
	// client's measure, or an earlier collector's from a timeline it then dropped).
	notStreamed := d.notStreamed()
	for _, s := range secondsSources {
		if notStreamed && s.f != fTTFT {
			continue
		}
		if v, ok := fs.get(s.f); ok {
			scale := s.scale
			if s.f == fServerTTFT && fs.present(fStrandsStart) {
				scale = 1e-3 // Strands' Python SDK writes its timeToFirstByteMs there (StrandsStartTimeKey)
			}
			secs, why := seconds(v, scale, limit)
			return secs, sourceName(s.f), why
		}
	}
	if notStreamed {
		return 0, "", ReasonNone
	}
	if v, ok := fs.get(fLangfuseStart); ok {
		return completionStart(v, itlconv.LangfuseCompletionStartTimeKey, c, false)
	}
	if v, ok := fs.get(fMastraStart); ok {
		// A time before the start is an earlier step's first chunk: Mastra takes the time once per
		// generation and writes it on every step's model call. No time to first chunk for this
		// one, and nothing malformed about it.
		return completionStart(v, itlconv.MastraCompletionStartTimeKey, c, true)
	}
	if v, ok := fs.get(fLangSmithTTFT); ok && fs.present(fLangSmithKind) {
		// LangSmith Python's Google ADK integration: the seconds from its llm run's start, which is
		// the span's, to the first partial event.
		secs, why := seconds(v, 1, limit)
		return secs, itlconv.LangSmithTimeToFirstTokenKey, why
	}
	if c.firstToken >= 0 {
		secs, why := sinceStart(int64(span.Events().At(c.firstToken).Timestamp()), c.Start, c.End)
		return secs, itlconv.OpenInferenceFirstTokenEvent, why
	}
	if v, ok := fs.get(fVLLMTTFT); ok && c.Server {
		secs, why := seconds(v, 1, limit)
		return secs, itlconv.VLLMTimeToFirstTokenKey, why
	}
	return 0, "", ReasonNone
}

// notStreamed reports whether the span says its request was not streamed: a flag of itlconv's,
// false. Its call returned whole, and what an instrumentation writes as its time to first chunk is
// then its duration (OpenLIT). The semantic conventions' gen_ai.request.stream, when a boolean,
// decides alone; the older flags only without it.
func (d *Decoder) notStreamed() bool {
	fs := &d.fields
	if v, ok := fs.get(fStream); ok && v.Type() == pcommon.ValueTypeBool {
		return !v.Bool()
	}
	for _, f := range [...]field{fIsStream, fIsStreaming, fLLMIsStreaming} {
		if v, ok := fs.get(f); ok && v.Type() == pcommon.ValueTypeBool && !v.Bool() {
			return true
		}
	}
	return false
}

func sourceName(f field) string {
	switch f {
	case fTTFT:
		return string(semconv.GenAIResponseTimeToFirstChunkKey)
	case fClientTTFT:
		return itlconv.ClientTimeToFirstChunkKey
	case fVercelMs:
		return itlconv.VercelMsToFirstChunkKey
	case fVercelStreamMs:
		return itlconv.VercelStreamMsToFirstChunkKey
	case fServerTTFT:
		return itlconv.ServerTimeToFirstTokenKey
	}
	return ""
}

// seconds checks a time to first chunk given as a number in units of scale seconds: an int and a
// double count alike.
func seconds(v pcommon.Value, scale, limit float64) (float64, Reason) {
	var x float64
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		x = v.Double()
	case pcommon.ValueTypeInt:
		x = float64(v.Int())
	default:
		return 0, ReasonTTFTNotNumber
	}
	x *= scale
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return 0, ReasonTTFTNotFinite
	case x < 0:
		return 0, ReasonTTFTNegative
	case x > limit:
		return 0, ReasonTTFTTooLong
	}
	return x, ReasonNone
}

// sinceStart is a first-chunk time (Unix nanoseconds) less the span's start, in seconds. The times
// compare as unsigned, as OTLP's timestamps are (see durationReason).
func sinceStart(t, start, end int64) (float64, Reason) {
	switch {
	case uint64(t) < uint64(start):
		return 0, ReasonTTFTNegative
	case uint64(t) > uint64(end):
		return 0, ReasonTTFTTooLong
	}
	return timeline.Seconds(t - start), ReasonNone
}

// parseTime reads Langfuse's completion start time, an ISO 8601 time that its SDKs JSON-quote:
// "\"2026-11-30T04:12:28.609Z\"".
func parseTime(s string) (int64, bool) {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		var u string
		if json.Unmarshal([]byte(s), &u) != nil {
			return 0, false
		}
		s = u
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() < 1970 || t.Year() > 2200 {
		return 0, false
	}
	return t.UnixNano(), true
}

// Token count sources, in the order Read tries them; the first present decides.
var (
	outputSources = [...]field{fOutputTokens, fVercelOutput, fOIOutput, fLangfuseUsage, fLangSmithUsage, fLangSmithMetaUsage, fUsageCompletion, fVercelCompletion}
	inputSources  = [...]field{fInputTokens, fVercelInput, fOIInput, fLangfuseUsage, fLangSmithUsage, fLangSmithMetaUsage, fUsagePrompt, fVercelPrompt}
)

// usage reads a token count from the first source present; for Langfuse's usage details (a JSON
// object in a string) from its key, else its OpenAI-style key; for LangSmith's usage metadata
// (likewise; JS's or Python's key) from key_tokens. A count that is not a whole number from 0 to
// itlconv.MaxTokens is malformed.
func (d *Decoder) usage(sources [8]field, key, openaiKey string) (int64, bool, Reason) {
	fs := &d.fields
	for _, f := range sources {
		v, ok := fs.get(f)
		if !ok || f == fLangSmithMetaUsage && fs.present(fLangSmithUsage) {
			// LangSmith JS writes the metadata's usage_metadata as langsmith.usage_metadata too
			// (and the outputs' over it): where that is present it decides alone.
			continue
		}
		if f == fLangfuseUsage || f == fLangSmithUsage || f == fLangSmithMetaUsage {
			k, alt := key, openaiKey
			if f != fLangfuseUsage {
				// LangChain's UsageMetadata: {"input_tokens":..,"output_tokens":..}.
				k, alt = key+"_tokens", key+"_tokens"
			}
			n, found, why := usageDetail(v, k, alt)
			if !found {
				continue // the details hold no count of this kind: try the next source
			}
			return n, why == ReasonNone, why
		}
		n, why := count(v)
		return n, why == ReasonNone, why
	}
	return 0, false, ReasonNone
}

// count checks a token count: an int, or a double holding a whole number, from 0 to MaxTokens.
func count(v pcommon.Value) (int64, Reason) {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		if n := v.Int(); n >= 0 && n <= itlconv.MaxTokens {
			return n, ReasonNone
		}
	case pcommon.ValueTypeDouble:
		if x := v.Double(); x >= 0 && x <= itlconv.MaxTokens && x == math.Trunc(x) {
			return int64(x), ReasonNone
		}
	}
	return 0, ReasonBadUsage
}

// usageDetail reads key, else openaiKey, from Langfuse's usage details; found is false when the
// object has neither.
func usageDetail(v pcommon.Value, key, openaiKey string) (n int64, found bool, why Reason) {
	if v.Type() != pcommon.ValueTypeStr {
		return 0, true, ReasonBadUsage
	}
	var details map[string]json.RawMessage
	if json.Unmarshal([]byte(v.Str()), &details) != nil {
		return 0, true, ReasonBadUsage
	}
	raw, ok := details[key]
	if !ok {
		if raw, ok = details[openaiKey]; !ok {
			return 0, false, ReasonNone
		}
	}
	var x float64
	if json.Unmarshal(raw, &x) != nil || x < 0 || x > itlconv.MaxTokens || x != math.Trunc(x) {
		return 0, true, ReasonBadUsage
	}
	return int64(x), true, ReasonNone
}

// normalizedProvider is the span's provider under the conventions' name (normalizeProvider); on
// LiteLLM's spans (itlconv.LiteLLMMarkerKey) LiteLLM's own provider names first (liteLLMProviders);
// on LangSmith's (itlconv.LangSmithSpanKindKey), when the provider is its ls_provider, LangChain's
// names first (langChainProviders).
func (d *Decoder) normalizedProvider() string {
	p := d.provider()
	fs := &d.fields
	if fs.present(fLiteLLMMarker) {
		if q, ok := liteLLMProviders[p]; ok {
			return q
		}
	}
	if fs.present(fLangSmithKind) {
		if p == fs.str(fLangSmithProv) {
			if q, ok := langChainProviders[p]; ok {
				return q
			}
		} else if p == fs.str(fSystem) {
			if q, ok := langSmithGuesses[p]; ok {
				return q
			}
		}
	}
	return normalizeProvider(p)
}

// langSmithGuesses maps the gen_ai.system LangSmith JS writes when the run has no ls_provider, a
// guess from the model's name (setGenAiSystem, lib/experimental/otel/translator.js of langsmith
// 0.12), in the conventions' names of 1.34 and earlier, which normalizeProvider maps. Its default,
// "langchain", names no provider: the span gets none, as Strands' do.
var langSmithGuesses = map[string]string{"langchain": ""}

// langChainProviders maps the ls_provider ids of LangChain's chat models (getLsParams, which
// LangSmith writes as langsmith.metadata.ls_provider; itlconv.LangSmithProviderKey lists where
// each was read) and of LangSmith Python's own integrations to the conventions' names where they
// differ and normalizeProvider does not already map them ("azure", "mistral", "xai", and
// LangSmith's "google", gcp.gen_ai). ollama, fireworks, together, cerebras, novita, ... have no
// convention's name and stay as written.
var langChainProviders = map[string]string{
	"google_vertexai": "gcp.vertex_ai", "google_genai": "gcp.gemini", "google_ai": "gcp.gemini",
	"amazon_bedrock": "aws.bedrock", "bedrock": "aws.bedrock", "watsonx": "ibm.watsonx.ai",
	"Perplexity": "perplexity",
}

// liteLLMProviders maps LiteLLM's provider names (custom_llm_provider, litellm/types/utils.py
// LlmProviders), which its otel callback writes as gen_ai.system (gen_ai.provider.name in its
// gen_ai_latest_experimental mode), to the conventions' where they differ and normalizeProvider
// does not already map them ("azure", "mistral", "xai").
var liteLLMProviders = map[string]string{
	"bedrock": "aws.bedrock", "vertex_ai": "gcp.vertex_ai", "vertex_ai_beta": "gcp.vertex_ai", "gemini": "gcp.gemini",
	"azure_text": "azure.ai.openai", "azure_ai": "azure.ai.inference", "watsonx": "ibm.watsonx.ai",
	"text-completion-openai": "openai", "cohere_chat": "cohere", "anthropic_text": "anthropic",
}

// vercelProviders maps the Vercel AI SDK's provider ids (ai.model.provider, and gen_ai.system or
// gen_ai.provider.name on its spans) to the semantic conventions' gen_ai.provider.name.
var vercelProviders = map[string]string{
	"openai": "openai", "anthropic": "anthropic", "google.generative-ai": "gcp.gemini", "google.vertex": "gcp.vertex_ai",
	"amazon-bedrock": "aws.bedrock", "azure-openai": "azure.ai.openai", "azure": "azure.ai.openai", "mistral": "mistral_ai",
	"groq": "groq", "xai": "x_ai", "deepseek": "deepseek", "cohere": "cohere", "perplexity": "perplexity",
}

// openInferenceProviders maps OpenInference's llm.provider and llm.system values that differ from
// the conventions'.
var openInferenceProviders = map[string]string{
	"azure": "azure.ai.openai", "google": "gcp.gen_ai", "aws": "aws.bedrock", "vertexai": "gcp.vertex_ai",
	"mistralai": "mistral_ai", "xai": "x_ai",
}

// normalizeProvider maps another instrumentation's provider name to the conventions': the Vercel AI
// SDK's ids carry the API after a dot ("openai.chat", "google.vertex.chat"), OpenInference has its
// own names, and the conventions' own gen_ai.system values of 1.34 and earlier name some otherwise
// (conventionsSystem). A name the conventions know, or one nobody maps, stays as it is. It runs once
// per model call: a name the conventions know, the usual case, is told by a switch on its bytes,
// before any map look-up; then a map look-up per dot, no more.
func normalizeProvider(p string) string {
	if knownProvider(p) {
		return p // also a conventions' name that starts like a Vercel id ("azure.ai.openai")
	}
	if q := conventionsSystem(p); q != "" {
		return q
	}
	if q, ok := openInferenceProviders[p]; ok {
		return q
	}
	for prefix := p; ; {
		if q, ok := vercelProviders[prefix]; ok {
			return q
		}
		i := strings.LastIndexByte(prefix, '.')
		if i < 0 {
			return p
		}
		prefix = prefix[:i]
	}
}

// conventionsSystem maps a gen_ai.system value of the conventions before gen_ai.provider.name
// (semantic conventions 1.34 and earlier) to the provider name that replaced it, "" for any other.
// opentelemetry-python-contrib's google-genai and vertexai instrumentations write "vertex_ai" and
// "gemini" (GenAiSystemValues.VERTEX_AI, GEMINI; itlconv/foreign.go, at its end), which 1.34
// deprecated for gcp.vertex_ai and gcp.gemini; 1.36 renamed az.ai.inference and az.ai.openai.
func conventionsSystem(p string) string {
	switch p {
	case "vertex_ai":
		return "gcp.vertex_ai"
	case "gemini":
		return "gcp.gemini"
	case "az.ai.inference":
		return "azure.ai.inference"
	case "az.ai.openai":
		return "azure.ai.openai"
	}
	return ""
}

// knownProvider reports whether p is one of the conventions' gen_ai.provider.name values.
func knownProvider(p string) bool {
	switch p {
	case "anthropic", "aws.bedrock", "azure.ai.inference", "azure.ai.openai", "cohere", "deepseek", "gcp.gemini",
		"gcp.gen_ai", "gcp.vertex_ai", "groq", "ibm.watsonx.ai", "mistral_ai", "openai", "perplexity", "x_ai":
		return true
	}
	return false
}
