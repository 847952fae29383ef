package genaispan

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/otelitl/itl/itlconv"
)

// field is one span attribute the reader looks at.
type field int

const (
	fOperation field = iota
	fProvider
	fSystem
	fRequestModel
	fResponseModel
	fOutputTokens
	fInputTokens
	fTTFT
	fOffsets
	fChunkTokens
	fChunkCount
	fClientTTFT
	fServerTTFT
	fVLLMTTFT
	fVLLMEndToEnd
	fVercelOperation
	fVercelMs
	fVercelStreamMs
	fVercelModel
	fVercelProvider
	fVercelOutput
	fVercelInput
	fVercelCompletion
	fVercelPrompt
	fOIKind
	fOIModel
	fOIProvider
	fOISystem
	fOIOutput
	fOIInput
	fLangfuseType
	fLangfuseModel
	fLangfuseStart
	fLangfuseUsage
	fOpenLLMetryType
	fUsageCompletion
	fUsagePrompt
	numFields
)

// fields holds the attributes of one span the reader looks at, found in one pass over them.
type fields struct {
	v   [numFields]pcommon.Value
	has uint64 // bit f set: v[f] holds the attribute
}

func (fs *fields) get(f field) (pcommon.Value, bool) {
	if fs.has&(1<<f) == 0 {
		return pcommon.Value{}, false
	}
	return fs.v[f], true
}

func (fs *fields) present(f field) bool { return fs.has&(1<<f) != 0 }

// str returns the attribute's string value, and "" when it is absent or not a string.
func (fs *fields) str(f field) string {
	if v, ok := fs.get(f); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

// scan finds the attributes of interest in one pass: a span carries tens of attributes, and a Get
// per key would walk them once per key.
func (fs *fields) scan(attrs pcommon.Map) {
	fs.has = 0
	for k, v := range attrs.All() {
		f := fieldOf(k)
		if f < numFields && fs.has&(1<<f) == 0 { // the first occurrence wins, as Map.Get's
			fs.v[f] = v
			fs.has |= 1 << f
		}
	}
}

// fieldOf maps an attribute key to its field, or numFields when the reader ignores it.
func fieldOf(k string) field {
	switch k {
	case string(semconv.GenAIOperationNameKey):
		return fOperation
	case string(semconv.GenAIProviderNameKey):
		return fProvider
	case itlconv.SystemKey:
		return fSystem
	case string(semconv.GenAIRequestModelKey):
		return fRequestModel
	case string(semconv.GenAIResponseModelKey):
		return fResponseModel
	case string(semconv.GenAIUsageOutputTokensKey):
		return fOutputTokens
	case string(semconv.GenAIUsageInputTokensKey):
		return fInputTokens
	case string(semconv.GenAIResponseTimeToFirstChunkKey):
		return fTTFT
	case string(itlconv.ChunkOffsetsKey):
		return fOffsets
	case string(itlconv.ChunkTokensKey):
		return fChunkTokens
	case string(itlconv.ChunkCountKey):
		return fChunkCount
	case itlconv.ClientTimeToFirstChunkKey:
		return fClientTTFT
	case itlconv.ServerTimeToFirstTokenKey:
		return fServerTTFT
	case itlconv.VLLMTimeToFirstTokenKey:
		return fVLLMTTFT
	case itlconv.VLLMEndToEndKey:
		return fVLLMEndToEnd
	case itlconv.VercelOperationIDKey:
		return fVercelOperation
	case itlconv.VercelMsToFirstChunkKey:
		return fVercelMs
	case itlconv.VercelStreamMsToFirstChunkKey:
		return fVercelStreamMs
	case itlconv.VercelModelIDKey:
		return fVercelModel
	case itlconv.VercelModelProviderKey:
		return fVercelProvider
	case itlconv.VercelOutputTokensKey:
		return fVercelOutput
	case itlconv.VercelInputTokensKey:
		return fVercelInput
	case itlconv.VercelCompletionTokensKey:
		return fVercelCompletion
	case itlconv.VercelPromptTokensKey:
		return fVercelPrompt
	case itlconv.OpenInferenceSpanKindKey:
		return fOIKind
	case itlconv.OpenInferenceModelKey:
		return fOIModel
	case itlconv.OpenInferenceProviderKey:
		return fOIProvider
	case itlconv.OpenInferenceSystemKey:
		return fOISystem
	case itlconv.OpenInferenceOutputTokensKey:
		return fOIOutput
	case itlconv.OpenInferenceInputTokensKey:
		return fOIInput
	case itlconv.LangfuseTypeKey:
		return fLangfuseType
	case itlconv.LangfuseModelKey:
		return fLangfuseModel
	case itlconv.LangfuseCompletionStartTimeKey:
		return fLangfuseStart
	case itlconv.LangfuseUsageDetailsKey:
		return fLangfuseUsage
	case itlconv.OpenLLMetryTypeKey:
		return fOpenLLMetryType
	case itlconv.UsageCompletionKey:
		return fUsageCompletion
	case itlconv.UsagePromptKey:
		return fUsagePrompt
	}
	return numFields
}
