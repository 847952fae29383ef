package httpitl

import (
	"encoding/base64"
)

// Amazon Bedrock InvokeModelWithResponseStream (.../model/{m}/invoke-with-response-stream). The
// reply is the AWS event stream, as for ConverseStream; each event of type "chunk" carries
// {"bytes": "<base64>"}, and the bytes are the model family's own JSON, one event of its stream.
// Exceptions come as ConverseStream's do (observer.message). The family is told from each
// decoded chunk's top-level members, never from the model id (an inference profile's ARN does not
// name it), so that each chunk is read on its own (familyOf); a chunk with members of two families
// is read as the first in familyOf's order.
//
// The OpenAI-shaped families (gpt-oss, DeepSeek, AI21 Jamba) are read by the /chat/completions
// reader (chatEvent), the same shape; see invokeOpenAI for where they differ.
//
// Bedrock adds "amazon-bedrock-invocationMetrics" (inputTokenCount, outputTokenCount,
// invocationLatency, firstByteLatency) to the last chunk of every family: it ends the stream, and
// gives the token counts the family's own events did not (see invokeMetrics).

// Model families of an InvokeModelWithResponseStream chunk, in the order a chunk with members of
// several is read.
const (
	famNone      = iota
	famAnthropic // Anthropic Claude: the Messages API's stream events
	famNova      // Amazon Nova: ConverseStream's events, each under its name
	famCohere    // Cohere Command R: event_type, text, finish_reason
	famTitan     // Amazon Titan Text: outputText, completionReason, token counts
	famMistral   // Mistral: outputs[].text, outputs[].stop_reason
	famLlama     // Meta Llama: generation, stop_reason, token counts
	famOpenAI    // OpenAI gpt-oss, DeepSeek, AI21 Jamba: Chat Completions' chunks (choices, or an error)
)

// familyOf returns the family a decoded chunk's top-level member name (in lower case) marks, or
// famNone.
func familyOf(name []byte) uint8 {
	switch string(name) {
	case "type":
		return famAnthropic
	case "messagestart", "contentblockstart", "contentblockdelta", "contentblockstop", "messagestop", "metadata":
		return famNova
	case "event_type":
		return famCohere
	case "outputtext", "completionreason", "inputtexttokencount", "totaloutputtexttokencount":
		return famTitan
	case "outputs":
		return famMistral
	case "generation", "prompt_token_count", "generation_token_count":
		return famLlama
	case "choices", "error":
		return famOpenAI
	}
	return famNone
}

// firstFamily returns the first family whose bit is set in marks.
func firstFamily(marks uint32) uint8 {
	for f := uint8(famAnthropic); f <= famOpenAI; f++ {
		if marks&(1<<f) != 0 {
			return f
		}
	}
	return famNone
}

// ownUsage records token counts a model family's events gave, and notes which, so that Bedrock's
// invocation metrics do not replace them (invokeMetrics).
func (o *observer) ownUsage(in, out int) {
	if in >= 0 {
		o.ownIn = true
	}
	if out >= 0 {
		o.ownOut = true
	}
	o.g.SetUsage(in, out)
}

// invokeMetrics records amazon-bedrock-invocationMetrics, which Bedrock adds to the last chunk:
// the stream's end, and the counts the family's own events did not give. The family's own win:
// they are what the model reports on every other path to it (the Anthropic API, Converse's
// metadata), where Bedrock's metrics are its billing view, and they come before the last chunk, so
// that a stream cut before it still has them.
func (o *observer) invokeMetrics(in, out count) {
	i, n := in.or(), out.or()
	if o.ownIn {
		i = -1
	}
	if o.ownOut {
		n = -1
	}
	o.g.SetUsage(i, n)
	o.ended = true
}

// invokeBytes decodes a chunk's base64 into o.inv, whose capacity a chunk's bound bounds (3 bytes
// for every 4 of the payload, itself at most WithMaxEventBytes). It reports false for bytes that are
// not base64, as encoding/base64's StdEncoding reads it: the SDKs' decoder.
func (o *observer) invokeBytes(b []byte) ([]byte, bool) {
	n := base64.StdEncoding.DecodedLen(len(b))
	if cap(o.inv) < n {
		o.inv = make([]byte, n) // exactly: no more than the bound allows
	}
	k, err := base64.StdEncoding.Decode(o.inv[:n], b)
	if err != nil {
		return nil, false
	}
	return o.inv[:k], true
}

// invokeDone drops a large decoding buffer, as the event-stream parser drops a large message's.
func (o *observer) invokeDone() {
	if cap(o.inv) > 64<<10 {
		o.inv = nil
	}
}

// invoke reads one event of an InvokeModelWithResponseStream reply: a chunk's {"bytes": ...}, its
// base64, then the decoded JSON, twice: once for the family and the invocation metrics, once with
// the family's reader. (The reference: refInvoke.)
func (o *observer) invoke(name []byte) uint8 {
	if string(name) != "chunk" {
		return scanOK // another event: the SDK passes it on as an unknown member
	}
	s := &o.sc
	var b jstr
	st := s.lead(func(s *jsonScan) bool { // as the SDK reads it: an object, and nothing after it
		var seen uint32
		obj, ok := s.object(func(name []byte) bool {
			if string(name) == "bytes" {
				return s.seen(&seen, 1) && s.strValue(&b)
			}
			_, ok := s.skip()
			return ok
		})
		if ok && !obj {
			return s.bad() // null: the SDK fails on it too
		}
		return ok
	})
	switch st {
	case scanOK:
	case scanBad:
		o.badEvent()
		return scanOK
	default:
		return st
	}
	if b.empty() {
		return scanOK // no bytes: nothing to read
	}
	raw, plain := b.plain()
	if !plain {
		raw = []byte(b.String())
	}
	d, ok := o.invokeBytes(raw)
	defer o.invokeDone()
	if !ok {
		o.badEvent()
		return scanOK
	}
	// The family and the metrics.
	var (
		marks   uint32
		metrics bool
		in, out count
	)
	s.reset(d)
	st = s.top(func(s *jsonScan) bool {
		var seen uint32
		_, ok := s.object(func(name []byte) bool {
			if string(name) == "amazon-bedrock-invocationmetrics" {
				if !s.seen(&seen, 1) {
					return false
				}
				var mseen uint32
				var ok bool
				metrics, ok = s.object(func(name []byte) bool {
					switch string(name) {
					case "inputtokencount":
						return s.seen(&mseen, 1) && s.countValue(&in)
					case "outputtokencount":
						return s.seen(&mseen, 2) && s.countValue(&out)
					}
					_, ok := s.skip()
					return ok
				})
				return ok
			}
			marks |= 1 << familyOf(name)
			_, ok := s.skip()
			return ok
		})
		return ok
	})
	if st != scanOK {
		return st // not JSON (the application gets it as it is): nothing to record
	}
	// The family's reading.
	s.reset(d)
	switch firstFamily(marks) {
	case famAnthropic:
		st = o.anthropic()
	case famNova:
		st = o.invokeNova()
	case famCohere:
		st = o.invokeCohere()
	case famTitan:
		st = o.invokeTitan()
	case famMistral:
		st = o.invokeMistral()
	case famLlama:
		st = o.invokeLlama()
	case famOpenAI:
		st = o.invokeOpenAI()
	}
	if st != scanOK {
		return st
	}
	if metrics {
		o.invokeMetrics(in, out)
	}
	return scanOK
}

// Amazon Nova: {"contentBlockDelta": {...}}, {"messageStop": {...}}, {"metadata": {...}}, each
// object read as ConverseStream's event of that name. The end marker is messageStop.
func (o *observer) invokeNova() uint8 {
	s := &o.sc
	var (
		content, stop, usage bool
		reason               jstr
		in, out              count
	)
	st := s.top(func(s *jsonScan) bool {
		var seen uint32
		_, ok := s.object(func(name []byte) bool {
			switch string(name) {
			case "contentblockdelta":
				if !s.seen(&seen, 1) {
					return false
				}
				_, ok := s.converseDelta(&content)
				return ok
			case "messagestop":
				if !s.seen(&seen, 2) {
					return false
				}
				var ok bool
				stop, ok = s.converseStop(&reason)
				return ok
			case "metadata":
				if !s.seen(&seen, 4) {
					return false
				}
				_, ok := s.converseMetadata(&usage, &in, &out)
				return ok
			}
			_, ok := s.skip()
			return ok
		})
		return ok
	})
	if st != scanOK {
		return st
	}
	if content {
		o.chunk()
	}
	if stop {
		if !reason.empty() {
			o.addReason(reason, false)
		}
		o.ended = true
	}
	if usage {
		o.ownUsage(in.or(), out.or())
	}
	return scanOK
}

// Cohere Command R: a chunk is a "text-generation" event with a non-empty text, or a
// "tool-calls-chunk" event with a non-empty text (the tool plan) or tool_call_delta whose
// parameters (a tool call's arguments) or text is non-empty; "stream-end" ends the stream, with its
// finish_reason. "tool-calls-generation" carries the calls whole (and the plan, as its text): after
// tool-calls-chunk events that were chunks it repeats what they carried, and is none; without them
// it is the one event in which the calls arrive, and is a chunk when its tool_calls or text is
// non-empty (o.cohereTools tells the two apart).
func (o *observer) invokeCohere() uint8 {
	s := &o.sc
	var (
		typ, reason        jstr
		text, delta, calls bool
	)
	st := s.top(func(s *jsonScan) bool {
		var seen uint32
		_, ok := s.object(func(name []byte) bool {
			switch string(name) {
			case "event_type":
				return s.seen(&seen, 1) && s.strValue(&typ)
			case "text":
				return s.seen(&seen, 2) && s.present(&text)
			case "finish_reason":
				return s.seen(&seen, 4) && s.strValue(&reason)
			case "tool_calls":
				return s.seen(&seen, 16) && s.present(&calls)
			case "tool_call_delta":
				if !s.seen(&seen, 8) {
					return false
				}
				var dseen uint32
				_, ok := s.object(func(name []byte) bool {
					var p bool
					switch string(name) {
					case "parameters":
						if !s.seen(&dseen, 1) {
							return false
						}
					case "text":
						if !s.seen(&dseen, 2) {
							return false
						}
					default:
						_, ok := s.skip()
						return ok
					}
					ok := s.present(&p)
					delta = delta || p
					return ok
				})
				return ok
			}
			_, ok := s.skip()
			return ok
		})
		return ok
	})
	if st != scanOK {
		return st
	}
	switch {
	case typ.is("text-generation"):
		if text {
			o.chunk()
		}
	case typ.is("tool-calls-chunk"):
		if text || delta {
			o.cohereTools = true
			o.chunk()
		}
	case typ.is("tool-calls-generation"):
		if (text || calls) && !o.cohereTools {
			o.chunk()
		}
	case typ.is("stream-end"):
		if !reason.empty() {
			o.addReason(reason, false)
		}
		o.ended = true
	}
	return scanOK
}

// Amazon Titan Text: a chunk is a non-empty outputText; a completionReason ends the stream. The
// counts: inputTextTokenCount, totalOutputTextTokenCount (the output so far).
func (o *observer) invokeTitan() uint8 {
	s := &o.sc
	var (
		text    bool
		reason  jstr
		in, out count
	)
	st := s.top(func(s *jsonScan) bool {
		var seen uint32
		_, ok := s.object(func(name []byte) bool {
			switch string(name) {
			case "outputtext":
				return s.seen(&seen, 1) && s.present(&text)
			case "completionreason":
				return s.seen(&seen, 2) && s.strValue(&reason)
			case "inputtexttokencount":
				return s.seen(&seen, 4) && s.countValue(&in)
			case "totaloutputtexttokencount":
				return s.seen(&seen, 8) && s.countValue(&out)
			}
			_, ok := s.skip()
			return ok
		})
		return ok
	})
	if st != scanOK {
		return st
	}
	if text {
		o.chunk()
	}
	if in.ok || out.ok {
		o.ownUsage(in.or(), out.or())
	}
	if !reason.empty() {
		o.addReason(reason, false)
		o.ended = true
	}
	return scanOK
}

// Mistral: a chunk is an outputs element with a non-empty text; a stop_reason ends the stream.
func (o *observer) invokeMistral() uint8 {
	s := &o.sc
	var text bool
	st := s.top(func(s *jsonScan) bool {
		var seen uint32
		_, ok := s.object(func(name []byte) bool {
			if string(name) != "outputs" {
				_, ok := s.skip()
				return ok
			}
			return s.seen(&seen, 1) && s.array(func() bool {
				var eseen uint32
				var reason jstr
				_, ok := s.object(func(name []byte) bool {
					switch string(name) {
					case "text":
						var p bool
						ok := s.seen(&eseen, 1) && s.present(&p)
						text = text || p
						return ok
					case "stop_reason":
						return s.seen(&eseen, 2) && s.strValue(&reason)
					}
					_, ok := s.skip()
					return ok
				})
				if ok && !reason.empty() {
					o.reasons = append(o.reasons, reason)
				}
				return ok
			})
		})
		return ok
	})
	if st != scanOK {
		return st
	}
	if text {
		o.chunk()
	}
	for _, r := range o.reasons {
		o.addReason(r, false)
		o.ended = true
	}
	return scanOK
}

// Meta Llama: a chunk is a non-empty generation; a stop_reason ends the stream. The counts:
// prompt_token_count (in the first chunk), generation_token_count (the output so far).
func (o *observer) invokeLlama() uint8 {
	s := &o.sc
	var (
		text    bool
		reason  jstr
		in, out count
	)
	st := s.top(func(s *jsonScan) bool {
		var seen uint32
		_, ok := s.object(func(name []byte) bool {
			switch string(name) {
			case "generation":
				return s.seen(&seen, 1) && s.present(&text)
			case "stop_reason":
				return s.seen(&seen, 2) && s.strValue(&reason)
			case "prompt_token_count":
				return s.seen(&seen, 4) && s.countValue(&in)
			case "generation_token_count":
				return s.seen(&seen, 8) && s.countValue(&out)
			}
			_, ok := s.skip()
			return ok
		})
		return ok
	})
	if st != scanOK {
		return st
	}
	if text {
		o.chunk()
	}
	if in.ok || out.ok {
		o.ownUsage(in.or(), out.or())
	}
	if !reason.empty() {
		o.addReason(reason, false)
		o.ended = true
	}
	return scanOK
}

// OpenAI gpt-oss, DeepSeek and AI21 Jamba: each chunk is a Chat Completions chunk, read by the
// /chat/completions reader (a choice's delta with content, reasoning or tool-call arguments, or
// its text), with two differences: a choice's stop_reason, when a string, is its finish reason
// where it has no finish_reason (DeepSeek's), and a finish reason ends the stream, as the other
// families' do (there is no [DONE]). usage's prompt_tokens and completion_tokens are the family's
// own counts. A chunk with an error member and no other family's is read here too: an error
// object instead of choices ({"error": {...}}, the shape OpenAI and vLLM stream an error in on
// /chat/completions) fails the generation as it does there, by chatFailed.
func (o *observer) invokeOpenAI() uint8 {
	s := &o.sc
	f := chatFields{stopReason: true}
	if s.top(func(s *jsonScan) bool { _, ok := o.chatEvent(&f); return ok }) != scanOK {
		return s.state
	}
	if o.chatFailed(&f) {
		return scanOK
	}
	o.setIDValue(f.id)
	o.setModelValue(f.model)
	if f.usage {
		o.ownUsage(f.prompt.or(), f.output.or())
	}
	if f.content {
		o.chunk()
	}
	for _, r := range o.reasons {
		o.addReason(r, false)
		o.ended = true
	}
	return scanOK
}
