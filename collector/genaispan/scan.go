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
	fStream
	fIsStream
	fIsStreaming
	fLLMIsStreaming
	fLangSmithKind
	fLangSmithProv
	fLangSmithUsage
	fLangSmithMetaUsage
	fLangSmithTTFT
	fMastraType
	fMastraStart
	fStrandsStart
	fLiteLLMMarker
	fOpenLLMetryKind
	// Not read by the reader itself: the itl_metrics connector's default dimensions that a span
	// carries (service.name only when an instrumentation puts it on the span), which it then
	// takes from Decoder.Attr instead of searching the attributes for them again.
	fServerAddress
	fServiceName
	numFields
)

// readerFields are the fields the reader reads, all but those it keeps for Decoder.Attr: a span with
// none of them and no events is no model call, whatever else it carries.
const readerFields = 1<<fServerAddress - 1

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

// Attr is an attribute the reader finds on its way through a span's attributes (AttrOf): after
// Read, Decoder.Attr returns it without a search of the attributes.
type Attr struct{ f field }

// AttrOf returns the Attr of key, and false when the reader does not look for key.
func AttrOf(key string) (Attr, bool) {
	f := fieldOf(key)
	return Attr{f}, f < numFields
}

// Attr returns the attribute a of the span last read (Read or Decode), as its attributes' Get
// would: the first attribute of the key.
func (d *Decoder) Attr(a Attr) (pcommon.Value, bool) { return d.fields.get(a.f) }

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

// keyOf names the attribute of each field.
var keyOf = [numFields]string{
	fOperation:          string(semconv.GenAIOperationNameKey),
	fProvider:           string(semconv.GenAIProviderNameKey),
	fSystem:             itlconv.SystemKey,
	fRequestModel:       string(semconv.GenAIRequestModelKey),
	fResponseModel:      string(semconv.GenAIResponseModelKey),
	fOutputTokens:       string(semconv.GenAIUsageOutputTokensKey),
	fInputTokens:        string(semconv.GenAIUsageInputTokensKey),
	fTTFT:               string(semconv.GenAIResponseTimeToFirstChunkKey),
	fOffsets:            string(itlconv.ChunkOffsetsKey),
	fChunkTokens:        string(itlconv.ChunkTokensKey),
	fChunkCount:         string(itlconv.ChunkCountKey),
	fClientTTFT:         itlconv.ClientTimeToFirstChunkKey,
	fServerTTFT:         itlconv.ServerTimeToFirstTokenKey,
	fVLLMTTFT:           itlconv.VLLMTimeToFirstTokenKey,
	fVLLMEndToEnd:       itlconv.VLLMEndToEndKey,
	fVercelOperation:    itlconv.VercelOperationIDKey,
	fVercelMs:           itlconv.VercelMsToFirstChunkKey,
	fVercelStreamMs:     itlconv.VercelStreamMsToFirstChunkKey,
	fVercelModel:        itlconv.VercelModelIDKey,
	fVercelProvider:     itlconv.VercelModelProviderKey,
	fVercelOutput:       itlconv.VercelOutputTokensKey,
	fVercelInput:        itlconv.VercelInputTokensKey,
	fVercelCompletion:   itlconv.VercelCompletionTokensKey,
	fVercelPrompt:       itlconv.VercelPromptTokensKey,
	fOIKind:             itlconv.OpenInferenceSpanKindKey,
	fOIModel:            itlconv.OpenInferenceModelKey,
	fOIProvider:         itlconv.OpenInferenceProviderKey,
	fOISystem:           itlconv.OpenInferenceSystemKey,
	fOIOutput:           itlconv.OpenInferenceOutputTokensKey,
	fOIInput:            itlconv.OpenInferenceInputTokensKey,
	fLangfuseType:       itlconv.LangfuseTypeKey,
	fLangfuseModel:      itlconv.LangfuseModelKey,
	fLangfuseStart:      itlconv.LangfuseCompletionStartTimeKey,
	fLangfuseUsage:      itlconv.LangfuseUsageDetailsKey,
	fOpenLLMetryType:    itlconv.OpenLLMetryTypeKey,
	fUsageCompletion:    itlconv.UsageCompletionKey,
	fUsagePrompt:        itlconv.UsagePromptKey,
	fStream:             itlconv.RequestStreamKey,
	fIsStream:           itlconv.RequestIsStreamKey,
	fIsStreaming:        itlconv.IsStreamingKey,
	fLLMIsStreaming:     itlconv.LLMIsStreamingKey,
	fLangSmithKind:      itlconv.LangSmithSpanKindKey,
	fLangSmithProv:      itlconv.LangSmithProviderKey,
	fLangSmithUsage:     itlconv.LangSmithUsageKey,
	fLangSmithMetaUsage: itlconv.LangSmithMetadataUsageKey,
	fLangSmithTTFT:      itlconv.LangSmithTimeToFirstTokenKey,
	fMastraType:         itlconv.MastraSpanTypeKey,
	fMastraStart:        itlconv.MastraCompletionStartTimeKey,
	fStrandsStart:       itlconv.StrandsStartTimeKey,
	fLiteLLMMarker:      itlconv.LiteLLMMarkerKey,
	fOpenLLMetryKind:    itlconv.OpenLLMetrySpanKindKey,
	fServerAddress:      string(semconv.ServerAddressKey),
	fServiceName:        string(semconv.ServiceNameKey),
}

// mayBeField[b] tells whether a key starting with byte b can be a field's: most of a span's
// attributes (http.*, url.*, db.*, ...) are ruled out by their first byte, before the switch.
var mayBeField = func() (t [256]bool) {
	for _, k := range keyOf {
		t[k[0]] = true
	}
	return t
}()

// maxKeyLen bounds the length of every key in keyOf (the longest has 43 bytes): a longer key would
// make the slot table's construction panic at start, and TestKeyOf with it.
const maxKeyLen = 64

// The slot table finds a key's field with one string comparison. keyPos[n] is a byte position at
// which the keys of length n all differ; a key of length n goes to slot slotOf(n, k[keyPos[n]]),
// and keyAt holds the field whose key has that slot. A key is then compared only with the one key
// its slot holds: comparing it with every key of its length, as fieldOf did before, took up to
// four comparisons (gen_ai.request.stream, of a length that four keys share), and a map hashes
// the whole key.
const keySlots = 512

var keyPos, keyMul, keyAt = slotTable()

func slotOf(n, mul int, b byte) int { return (n*mul + int(b)) & (keySlots - 1) }

// slotTable builds the slot table: a position for each length, then the first multiplier that puts
// every key in a slot of its own.
func slotTable() (pos [maxKeyLen + 1]uint8, mul int, at [keySlots]uint8) {
	byLen := [maxKeyLen + 1][]string{}
	for _, k := range keyOf {
		byLen[len(k)] = append(byLen[len(k)], k)
	}
	for n, ks := range byLen {
		p := 0
		for ; p < n && !distinctAt(ks, p); p++ {
		}
		if p == n && len(ks) > 1 {
			panic("genaispan: two keys of the same length differ at no single byte")
		}
		pos[n] = uint8(p)
	}
	for mul = 1; mul < keySlots; mul++ {
		for i := range at {
			at[i] = uint8(numFields)
		}
		ok := true
		for f, k := range keyOf {
			i := slotOf(len(k), mul, k[pos[len(k)]])
			if at[i] != uint8(numFields) {
				ok = false
				break
			}
			at[i] = uint8(f)
		}
		if ok {
			return pos, mul, at
		}
	}
	panic("genaispan: no multiplier puts every key in a slot of its own; make keySlots larger")
}

// distinctAt reports whether the keys ks all have different bytes at position p.
func distinctAt(ks []string, p int) bool {
	var seen [256]bool
	for _, k := range ks {
		if seen[k[p]] {
			return false
		}
		seen[k[p]] = true
	}
	return true
}

// fieldOf maps an attribute key to its field, or numFields when the reader ignores it.
func fieldOf(k string) field {
	n := len(k)
	if n == 0 || n > maxKeyLen || !mayBeField[k[0]] {
		return numFields
	}
	f := field(keyAt[slotOf(n, keyMul, k[keyPos[n]])])
	if f < numFields && keyOf[f] == k {
		return f
	}
	return numFields
}
