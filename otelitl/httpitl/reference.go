package httpitl

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/otelitl/itl/otelitl/internal/wrap"
)

// The reference reading of events: each event decoded by encoding/json into a struct, as httpitl
// first did. The scanner (events.go) reads the same fields in one pass without allocating, and
// leaves to this reading the events it does not decide (a repeated member, an escaped or non-ASCII
// member name: see jsonScan). Tests run both on real and fuzzed events and check they agree.

// present is true for a JSON value that carries output: a non-empty string, array or object.
// null, "", [], {}, numbers and booleans carry none.
type present bool

func (p *present) UnmarshalJSON(b []byte) error {
	*p = present(carries(b))
	return nil
}

func carries(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) < 3 {
		return false
	}
	switch b[0] {
	case '"':
		return true
	case '[', '{':
		return len(bytes.TrimSpace(b[1:len(b)-1])) > 0
	}
	return false
}

// code accepts a JSON string or number (error codes come as either).
type code = wrap.ErrorCode

// count accepts a JSON number; anything else leaves it unknown.
func (c *count) UnmarshalJSON(b []byte) error {
	n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	if err == nil && n >= 0 && n < 1<<40 {
		c.n, c.ok = int(n), true
	}
	return nil
}

type apiError struct {
	Type   code `json:"type"`
	Code   code `json:"code"`
	Status code `json:"status"`
}

func (e *apiError) typ() string {
	for _, s := range []code{e.Code, e.Type, e.Status} {
		if s != "" {
			return string(s)
		}
	}
	return streamErrorType
}

// refEvent reads one event's data the reference way; name is the event's type, which only
// Bedrock's events take from outside their data.
func (o *observer) refEvent(name, data []byte) {
	switch o.c.proto {
	case protoChat, protoCompletions:
		o.refChat(data)
	case protoResponses:
		o.refResponses(data)
	case protoAnthropic:
		o.refAnthropic(data)
	case protoGemini:
		o.refGemini(data)
	case protoOllamaChat, protoOllamaGen:
		o.refOllama(data)
	case protoBedrock:
		o.refBedrock(name, data)
	case protoBedrockInvoke:
		o.refInvoke(name, data)
	}
}

// OpenAI Chat Completions and Completions. A chunk is an event with a choice whose delta carries
// content, refusal, reasoning_content or reasoning (OpenAI-compatible servers), tool_calls[].
// function.arguments, function_call.arguments or audio.transcript; or, for Completions, text.
type chatEvent struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Text  present `json:"text"`
		Delta *struct {
			Content          present `json:"content"`
			Refusal          present `json:"refusal"`
			ReasoningContent present `json:"reasoning_content"`
			Reasoning        present `json:"reasoning"`
			ToolCalls        []struct {
				Function struct {
					Arguments present `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			FunctionCall struct {
				Arguments present `json:"arguments"`
			} `json:"function_call"`
			Audio struct {
				Transcript present `json:"transcript"`
			} `json:"audio"`
		} `json:"delta"`
		FinishReason string     `json:"finish_reason"`
		StopReason   stopReason `json:"stop_reason"` // read only on Bedrock (refInvokeOpenAI)
	} `json:"choices"`
	Usage *struct {
		PromptTokens     count `json:"prompt_tokens"`
		CompletionTokens count `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
	// vLLM's older error event: {"object":"error","type":...,"code":...}
	Type code `json:"type"`
	Code code `json:"code"`
}

// stopReason is a choice's stop_reason: a string; any other value (vLLM's token id) is none.
type stopReason string

func (r *stopReason) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, (*string)(r))
	}
	if string(b) != "null" {
		*r = ""
	}
	return nil
}

func (o *observer) refChat(data []byte) {
	var ev chatEvent
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	if o.refChatFailed(&ev) {
		return
	}
	if ev.ID != "" {
		o.setID(ev.ID)
	}
	if ev.Model != "" {
		o.setModel(ev.Model)
	}
	if ev.Usage != nil {
		o.g.SetUsage(ev.Usage.PromptTokens.or(), ev.Usage.CompletionTokens.or())
	}
	if refChatContent(&ev) {
		o.chunk()
	}
	for _, ch := range ev.Choices {
		if ch.FinishReason != "" {
			o.g.AddFinishReason(ch.FinishReason)
		}
	}
	if !o.streaming && len(ev.Choices) > 0 {
		o.ended = true // a complete non-streamed reply
	}
}

// refChatContent reports whether a Chat Completions event carries output.
func refChatContent(ev *chatEvent) bool {
	content := false
	for _, ch := range ev.Choices {
		if ch.Text {
			content = true
		}
		if d := ch.Delta; d != nil {
			if d.Content || d.Refusal || d.ReasoningContent || d.Reasoning || d.FunctionCall.Arguments || d.Audio.Transcript {
				content = true
			}
			for _, tc := range d.ToolCalls {
				if tc.Function.Arguments {
					content = true
				}
			}
		}
	}
	return content
}

// refChatFailed records the error a Chat Completions event names, if any, and reports whether it
// named one.
func (o *observer) refChatFailed(ev *chatEvent) bool {
	if len(ev.Error) > 0 && string(ev.Error) != "null" {
		var e apiError
		if json.Unmarshal(ev.Error, &e) != nil {
			o.fail(streamErrorType)
		} else {
			o.fail(e.typ())
		}
		return true
	}
	if ev.Object == "error" {
		e := apiError{Type: ev.Type, Code: ev.Code}
		o.fail(e.typ())
		return true
	}
	return false
}

// refInvokeOpenAI reads an OpenAI-shaped InvokeModelWithResponseStream chunk (gpt-oss, DeepSeek,
// Jamba; see invokeOpenAI), reporting whether it is one.
func (o *observer) refInvokeOpenAI(d []byte) bool {
	var ev chatEvent
	if json.Unmarshal(d, &ev) != nil {
		return false
	}
	if o.refChatFailed(&ev) {
		return true
	}
	if ev.ID != "" {
		o.setID(ev.ID)
	}
	if ev.Model != "" {
		o.setModel(ev.Model)
	}
	if ev.Usage != nil {
		o.ownUsage(ev.Usage.PromptTokens.or(), ev.Usage.CompletionTokens.or())
	}
	if refChatContent(&ev) {
		o.chunk()
	}
	for _, ch := range ev.Choices {
		r := ch.FinishReason
		if r == "" {
			r = string(ch.StopReason)
		}
		if r != "" {
			o.g.AddFinishReason(r)
			o.ended = true
		}
	}
	return true
}

// OpenAI Responses. A chunk is a response.output_text.delta, response.refusal.delta,
// response.reasoning_text.delta, response.reasoning_summary_text.delta,
// response.function_call_arguments.delta, response.custom_tool_call_input.delta,
// response.mcp_call_arguments.delta or response.audio.transcript.delta event with a non-empty
// delta. The end marker is response.completed (or response.incomplete, a reply cut by a limit).
type responsesEvent struct {
	Type     string   `json:"type"`
	Delta    present  `json:"delta"`
	Code     code     `json:"code"`
	Object   string   `json:"object"` // a non-streamed reply is the response itself
	Response response `json:"response"`
	response
	// An error event's error, or a non-streamed reply's (which refResponses puts in response.Error):
	// any JSON value, as in chatEvent.
	Error json.RawMessage `json:"error"`
}

type response struct {
	ID     string `json:"id"`
	Model  string `json:"model"`
	Status string `json:"status"`
	Usage  *struct {
		InputTokens  count `json:"input_tokens"`
		OutputTokens count `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Code code `json:"code"`
	} `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
}

func (o *observer) refRecord(r *response) {
	if r.ID != "" {
		o.setID(r.ID)
	}
	if r.Model != "" {
		o.setModel(r.Model)
	}
	if r.Usage != nil {
		o.g.SetUsage(r.Usage.InputTokens.or(), r.Usage.OutputTokens.or())
	}
}

func (o *observer) refFinishResponse(r *response) {
	o.refRecord(r)
	switch r.Status {
	case "completed":
		o.g.AddFinishReason("stop")
		o.ended = true
	case "incomplete":
		reason := "length"
		if r.IncompleteDetails != nil && r.IncompleteDetails.Reason != "" && r.IncompleteDetails.Reason != "max_output_tokens" {
			reason = r.IncompleteDetails.Reason
		}
		o.g.AddFinishReason(reason)
		o.ended = true
	case "failed", "cancelled":
		t := "response_" + r.Status
		if r.Error != nil && r.Error.Code != "" {
			t = wrap.Code(string(r.Error.Code), t) // a code that is no code names no failure
		}
		o.fail(t)
	}
}

func (o *observer) refResponses(data []byte) {
	var ev responsesEvent
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	errKind := byte(0) // as chatFields.errKind
	var e apiError
	if len(ev.Error) > 0 && string(ev.Error) != "null" {
		errKind = 'x'
		if json.Unmarshal(ev.Error, &e) == nil {
			errKind = 'o'
			ev.response.Error = &struct {
				Code code `json:"code"`
			}{e.Code}
		}
	}
	switch ev.Type {
	case "response.output_text.delta", "response.refusal.delta", "response.reasoning_text.delta",
		"response.reasoning_summary_text.delta", "response.function_call_arguments.delta",
		"response.custom_tool_call_input.delta", "response.mcp_call_arguments.delta",
		"response.audio.transcript.delta":
		if ev.Delta {
			o.chunk()
		}
	case "response.created", "response.in_progress", "response.queued":
		o.refRecord(&ev.Response)
	case "response.completed", "response.incomplete", "response.failed":
		if ev.Response.Status == "" {
			ev.Response.Status = strings.TrimPrefix(ev.Type, "response.")
		}
		o.refFinishResponse(&ev.Response)
	case "error":
		t := string(ev.Code)
		if t == "" {
			t = streamErrorType
			if errKind == 'o' {
				t = e.typ()
			}
		}
		o.fail(t)
	case "":
		switch {
		case ev.Object == "response": // a non-streamed reply
			o.refFinishResponse(&ev.response)
		case errKind == 'o':
			o.fail(e.typ())
		case errKind == 'x':
			o.fail(streamErrorType)
		}
	}
}

// Anthropic Messages. A chunk is a content_block_delta whose delta carries text (text_delta),
// thinking (thinking_delta) or partial_json (input_json_delta); signature and citation deltas,
// pings, message_start and the block starts and stops are not. The end marker is message_stop.
type anthropicEvent struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Model   string `json:"model"`
	Message struct {
		ID    string          `json:"id"`
		Model string          `json:"model"`
		Usage *anthropicUsage `json:"usage"`
	} `json:"message"`
	Delta struct {
		Text        present `json:"text"`
		Thinking    present `json:"thinking"`
		PartialJSON present `json:"partial_json"`
		StopReason  string  `json:"stop_reason"`
	} `json:"delta"`
	StopReason string          `json:"stop_reason"`
	Usage      *anthropicUsage `json:"usage"`
	Error      *apiError       `json:"error"`
}

type anthropicUsage struct {
	InputTokens  count `json:"input_tokens"`
	OutputTokens count `json:"output_tokens"`
}

func (o *observer) refAnthropicUsage(u *anthropicUsage) {
	if u != nil {
		o.ownUsage(u.InputTokens.or(), u.OutputTokens.or())
	}
}

// refAnthropic reads an Anthropic event, and reports whether it was one (valid JSON of its types).
func (o *observer) refAnthropic(data []byte) bool {
	var ev anthropicEvent
	if json.Unmarshal(data, &ev) != nil {
		return false
	}
	switch ev.Type {
	case "content_block_delta":
		if ev.Delta.Text || ev.Delta.Thinking || ev.Delta.PartialJSON {
			o.chunk()
		}
	case "message_start":
		if ev.Message.ID != "" {
			o.setID(ev.Message.ID)
		}
		if ev.Message.Model != "" {
			o.setModel(ev.Message.Model)
		}
		if u := ev.Message.Usage; u != nil { // input tokens only: the output count is a placeholder
			o.ownUsage(u.InputTokens.or(), -1)
		}
	case "message_delta":
		if ev.Delta.StopReason != "" {
			o.g.AddFinishReason(ev.Delta.StopReason)
		}
		o.refAnthropicUsage(ev.Usage)
	case "message_stop":
		o.ended = true
	case "error":
		t := streamErrorType
		if ev.Error != nil && ev.Error.Type != "" {
			t = string(ev.Error.Type)
		}
		o.fail(t)
	case "message": // a non-streamed reply
		if ev.ID != "" {
			o.setID(ev.ID)
		}
		if ev.Model != "" {
			o.setModel(ev.Model)
		}
		if ev.StopReason != "" {
			o.g.AddFinishReason(ev.StopReason)
		}
		o.refAnthropicUsage(ev.Usage)
		o.ended = true
	}
	return true
}

// Gemini. A chunk is a GenerateContentResponse with a candidate part that carries text (thoughts
// included), a functionCall, executableCode, codeExecutionResult or inlineData. The end marker is a
// candidate with a finishReason (or a promptFeedback.blockReason).
type geminiEvent struct {
	Candidates []struct {
		Content struct {
			Parts []struct {
				Text                present `json:"text"`
				FunctionCall        present `json:"functionCall"`
				ExecutableCode      present `json:"executableCode"`
				CodeExecutionResult present `json:"codeExecutionResult"`
				InlineData          present `json:"inlineData"`
			} `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *struct {
		PromptTokenCount     count `json:"promptTokenCount"`
		CandidatesTokenCount count `json:"candidatesTokenCount"`
		ThoughtsTokenCount   count `json:"thoughtsTokenCount"`
	} `json:"usageMetadata"`
	ModelVersion string    `json:"modelVersion"`
	ResponseID   string    `json:"responseId"`
	Error        *apiError `json:"error"`
}

func (o *observer) refGemini(data []byte) {
	var ev geminiEvent
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	if ev.Error != nil {
		o.fail(ev.Error.typ())
		return
	}
	if ev.ResponseID != "" {
		o.setID(ev.ResponseID)
	}
	if ev.ModelVersion != "" {
		o.setModel(ev.ModelVersion)
	}
	if u := ev.UsageMetadata; u != nil {
		out := u.CandidatesTokenCount.or()
		if out >= 0 && u.ThoughtsTokenCount.ok {
			out += u.ThoughtsTokenCount.n
		}
		o.g.SetUsage(u.PromptTokenCount.or(), out)
	}
	content := false
	for _, c := range ev.Candidates {
		for _, p := range c.Content.Parts {
			if p.Text || p.FunctionCall || p.ExecutableCode || p.CodeExecutionResult || p.InlineData {
				content = true
			}
		}
		if c.FinishReason != "" && c.FinishReason != "FINISH_REASON_UNSPECIFIED" {
			o.g.AddFinishReason(strings.ToLower(c.FinishReason))
			o.ended = true
		}
	}
	if pf := ev.PromptFeedback; pf != nil && pf.BlockReason != "" {
		o.g.AddFinishReason(strings.ToLower(pf.BlockReason))
		o.ended = true
	}
	if content {
		o.chunk()
	}
}

// Ollama. A chunk is a line whose message carries content, thinking or tool_calls (/api/chat), or
// that carries response or thinking (/api/generate). The end marker is "done": true.
type ollamaEvent struct {
	Model   string `json:"model"`
	Message *struct {
		Content   present `json:"content"`
		Thinking  present `json:"thinking"`
		ToolCalls present `json:"tool_calls"`
	} `json:"message"`
	Response        present `json:"response"`
	Thinking        present `json:"thinking"`
	Done            bool    `json:"done"`
	DoneReason      string  `json:"done_reason"`
	PromptEvalCount count   `json:"prompt_eval_count"`
	EvalCount       count   `json:"eval_count"`
	Error           *string `json:"error"`
}

func (o *observer) refOllama(data []byte) {
	var ev ollamaEvent
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	if ev.Error != nil {
		o.fail(streamErrorType)
		return
	}
	if ev.Model != "" {
		o.setModel(ev.Model)
	}
	if m := ev.Message; (m != nil && (m.Content || m.Thinking || m.ToolCalls)) || ev.Response || ev.Thinking {
		o.chunk()
	}
	if ev.Done {
		if ev.DoneReason != "" {
			o.g.AddFinishReason(ev.DoneReason)
		}
		if ev.PromptEvalCount.ok || ev.EvalCount.ok {
			o.g.SetUsage(ev.PromptEvalCount.or(), ev.EvalCount.or())
		}
		o.ended = true
	}
}

// Amazon Bedrock ConverseStream. A chunk is a contentBlockDelta whose delta carries text,
// toolUse.input or reasoningContent.text; the end marker is messageStop; usage comes in metadata.
type bedrockDelta struct {
	Delta *struct {
		Text    present `json:"text"`
		ToolUse *struct {
			Input present `json:"input"`
		} `json:"toolUse"`
		ReasoningContent *struct {
			Text present `json:"text"`
		} `json:"reasoningContent"`
	} `json:"delta"`
}

type bedrockStop struct {
	StopReason string `json:"stopReason"`
}

type bedrockMetadata struct {
	Usage *struct {
		InputTokens  count `json:"inputTokens"`
		OutputTokens count `json:"outputTokens"`
	} `json:"usage"`
}

func (o *observer) refBedrock(name, data []byte) {
	if converseEvent(name) {
		raw, ok := refSDKObject(data)
		if !ok {
			o.badEvent()
			return
		}
		data = raw
	}
	switch string(name) {
	case "contentBlockDelta":
		var ev bedrockDelta
		if json.Unmarshal(data, &ev) != nil {
			return
		}
		if d := ev.Delta; d != nil && (d.Text || (d.ToolUse != nil && d.ToolUse.Input) ||
			(d.ReasoningContent != nil && d.ReasoningContent.Text)) {
			o.chunk()
		}
	case "messageStop":
		var ev bedrockStop
		if json.Unmarshal(data, &ev) != nil {
			return
		}
		if ev.StopReason != "" {
			o.g.AddFinishReason(ev.StopReason)
		}
		o.ended = true
	case "metadata":
		var ev bedrockMetadata
		if json.Unmarshal(data, &ev) != nil {
			return
		}
		if u := ev.Usage; u != nil {
			o.g.SetUsage(u.InputTokens.or(), u.OutputTokens.or())
		}
	}
}

// Amazon Bedrock InvokeModelWithResponseStream: a chunk's {"bytes": "<base64>"}, decoded, read as
// its model family's event (see invoke.go).
type invokeChunk struct {
	Bytes string `json:"bytes"`
}

// mark is set by any value: the member is present.
type mark bool

func (m *mark) UnmarshalJSON([]byte) error {
	*m = true
	return nil
}

type novaChunk struct {
	ContentBlockDelta *bedrockDelta    `json:"contentBlockDelta"`
	MessageStop       *bedrockStop     `json:"messageStop"`
	Metadata          *bedrockMetadata `json:"metadata"`
}

type cohereChunk struct {
	EventType     string  `json:"event_type"`
	Text          present `json:"text"`
	FinishReason  string  `json:"finish_reason"`
	ToolCalls     present `json:"tool_calls"`
	ToolCallDelta *struct {
		Parameters present `json:"parameters"`
		Text       present `json:"text"`
	} `json:"tool_call_delta"`
}

type titanChunk struct {
	OutputText                present `json:"outputText"`
	CompletionReason          string  `json:"completionReason"`
	InputTextTokenCount       count   `json:"inputTextTokenCount"`
	TotalOutputTextTokenCount count   `json:"totalOutputTextTokenCount"`
}

type mistralChunk struct {
	Outputs []struct {
		Text       present `json:"text"`
		StopReason string  `json:"stop_reason"`
	} `json:"outputs"`
}

type llamaChunk struct {
	Generation           present `json:"generation"`
	StopReason           string  `json:"stop_reason"`
	PromptTokenCount     count   `json:"prompt_token_count"`
	GenerationTokenCount count   `json:"generation_token_count"`
}

// refSDKObject returns the object at the start of data, as aws-sdk-go-v2 reads an event's payload
// (see sdkObject): json.Decoder reads the first value and nothing after it.
func refSDKObject(data []byte) (json.RawMessage, bool) {
	var raw json.RawMessage
	if json.NewDecoder(bytes.NewReader(data)).Decode(&raw) != nil || raw[0] != '{' {
		return nil, false
	}
	return raw, true
}

func (o *observer) refInvoke(name, data []byte) {
	if string(name) != "chunk" {
		return
	}
	raw, ok := refSDKObject(data)
	var ch invokeChunk
	if !ok || json.Unmarshal(raw, &ch) != nil {
		o.badEvent()
		return
	}
	if ch.Bytes == "" {
		return
	}
	d, err := base64.StdEncoding.DecodeString(ch.Bytes)
	if err != nil {
		o.badEvent()
		return
	}
	var fam struct {
		Type              mark `json:"type"`
		MessageStart      mark `json:"messageStart"`
		ContentBlockStart mark `json:"contentBlockStart"`
		ContentBlockDelta mark `json:"contentBlockDelta"`
		ContentBlockStop  mark `json:"contentBlockStop"`
		MessageStop       mark `json:"messageStop"`
		Metadata          mark `json:"metadata"`
		EventType         mark `json:"event_type"`
		OutputText        mark `json:"outputText"`
		CompletionReason  mark `json:"completionReason"`
		InputTextTokens   mark `json:"inputTextTokenCount"`
		OutputTextTokens  mark `json:"totalOutputTextTokenCount"`
		Outputs           mark `json:"outputs"`
		Generation        mark `json:"generation"`
		PromptTokens      mark `json:"prompt_token_count"`
		GenerationTokens  mark `json:"generation_token_count"`
		Choices           mark `json:"choices"`
		Error             mark `json:"error"`
		Metrics           *struct {
			InputTokenCount  count `json:"inputTokenCount"`
			OutputTokenCount count `json:"outputTokenCount"`
		} `json:"amazon-bedrock-invocationMetrics"`
	}
	if json.Unmarshal(d, &fam) != nil {
		return
	}
	ok = false
	switch {
	case bool(fam.Type):
		ok = o.refAnthropic(d)
	case bool(fam.MessageStart || fam.ContentBlockStart || fam.ContentBlockDelta || fam.ContentBlockStop || fam.MessageStop || fam.Metadata):
		var ev novaChunk
		if ok = json.Unmarshal(d, &ev) == nil; ok {
			if dl := ev.ContentBlockDelta; dl != nil && dl.Delta != nil {
				if x := dl.Delta; x.Text || (x.ToolUse != nil && x.ToolUse.Input) || (x.ReasoningContent != nil && x.ReasoningContent.Text) {
					o.chunk()
				}
			}
			if ev.MessageStop != nil {
				if ev.MessageStop.StopReason != "" {
					o.g.AddFinishReason(ev.MessageStop.StopReason)
				}
				o.ended = true
			}
			if m := ev.Metadata; m != nil && m.Usage != nil {
				o.ownUsage(m.Usage.InputTokens.or(), m.Usage.OutputTokens.or())
			}
		}
	case bool(fam.EventType):
		var ev cohereChunk
		if ok = json.Unmarshal(d, &ev) == nil; ok {
			switch ev.EventType {
			case "text-generation":
				if ev.Text {
					o.chunk()
				}
			case "tool-calls-chunk":
				if d := ev.ToolCallDelta; ev.Text || (d != nil && (d.Parameters || d.Text)) {
					o.cohereTools = true
					o.chunk()
				}
			case "tool-calls-generation":
				if bool(ev.Text || ev.ToolCalls) && !o.cohereTools {
					o.chunk()
				}
			case "stream-end":
				if ev.FinishReason != "" {
					o.g.AddFinishReason(ev.FinishReason)
				}
				o.ended = true
			}
		}
	case bool(fam.OutputText || fam.CompletionReason || fam.InputTextTokens || fam.OutputTextTokens):
		var ev titanChunk
		if ok = json.Unmarshal(d, &ev) == nil; ok {
			if ev.OutputText {
				o.chunk()
			}
			if ev.InputTextTokenCount.ok || ev.TotalOutputTextTokenCount.ok {
				o.ownUsage(ev.InputTextTokenCount.or(), ev.TotalOutputTextTokenCount.or())
			}
			if ev.CompletionReason != "" {
				o.g.AddFinishReason(ev.CompletionReason)
				o.ended = true
			}
		}
	case bool(fam.Outputs):
		var ev mistralChunk
		if ok = json.Unmarshal(d, &ev) == nil; ok {
			text := false
			for _, x := range ev.Outputs {
				text = text || bool(x.Text)
			}
			if text {
				o.chunk()
			}
			for _, x := range ev.Outputs {
				if x.StopReason != "" {
					o.g.AddFinishReason(x.StopReason)
					o.ended = true
				}
			}
		}
	case bool(fam.Generation || fam.PromptTokens || fam.GenerationTokens):
		var ev llamaChunk
		if ok = json.Unmarshal(d, &ev) == nil; ok {
			if ev.Generation {
				o.chunk()
			}
			if ev.PromptTokenCount.ok || ev.GenerationTokenCount.ok {
				o.ownUsage(ev.PromptTokenCount.or(), ev.GenerationTokenCount.or())
			}
			if ev.StopReason != "" {
				o.g.AddFinishReason(ev.StopReason)
				o.ended = true
			}
		}
	case bool(fam.Choices || fam.Error):
		ok = o.refInvokeOpenAI(d)
	default:
		ok = true // a family not read here: only the metrics
	}
	if ok && fam.Metrics != nil {
		o.invokeMetrics(fam.Metrics.InputTokenCount, fam.Metrics.OutputTokenCount)
	}
}
