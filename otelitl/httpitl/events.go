package httpitl

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/otelitl/itl/itlconv"
	"github.com/otelitl/itl/otelitl"
)

// observer reads one response's events and records them on a generation. It is not safe for
// concurrent use: its owner serialises calls.
type observer struct {
	c         call
	g         *otelitl.Generation
	streaming bool   // count chunks (the response streams)
	onChunk   func() // records a chunk; nil means g.Chunk(1)
	fr        *framer

	opaque  bool   // the body is compressed: nothing is read, and its end is taken as complete
	ended   bool   // the protocol's end marker was seen
	errType string // an error event's type
	values  int    // events read
}

func newObserver(c call, g *otelitl.Generation, fr framing, streaming bool, max int) *observer {
	o := &observer{c: c, g: g, streaming: streaming}
	o.fr = newFramer(fr, max, o.event)
	return o
}

func (o *observer) feed(p []byte) {
	if !o.opaque {
		o.fr.feed(p)
	}
}

func (o *observer) chunk() {
	if !o.streaming {
		return
	}
	if o.onChunk != nil {
		o.onChunk()
		return
	}
	o.g.Chunk(1)
}

// failure returns the error End gets for the events read, and whether there is one: an error
// event, or a stream that ended without its end marker.
func (o *observer) failure() error {
	if o.errType != "" {
		return &eventError{typ: o.errType}
	}
	if !o.ended && !o.opaque {
		return errIncomplete
	}
	return nil
}

// eventError is an error event in a response; only its type or code is kept, never its message.
type eventError struct{ typ string }

func (e *eventError) Error() string     { return "httpitl: the response reported an error: " + e.typ }
func (e *eventError) ErrorType() string { return e.typ }

type incompleteError struct{}

func (incompleteError) Error() string {
	return "httpitl: the response ended without its protocol's end marker"
}
func (incompleteError) ErrorType() string { return itlconv.ErrorTypeIncompleteStream }

var errIncomplete error = incompleteError{}

// streamErrorType is the error.type of an error event that names no type or code.
const streamErrorType = itlconv.ErrorTypeStreamError

// boundType makes an error event's type or code fit error.type: valid UTF-8 without control
// characters, at most itlconv.MaxErrorTypeLength bytes.
func boundType(s string) string {
	if len(s) > itlconv.MaxErrorTypeLength {
		s = s[:itlconv.MaxErrorTypeLength]
	}
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return -1
		}
		return r
	}, s)
	return s
}

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
type code string

func (c *code) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*c = code(s)
		return nil
	}
	var n json.Number
	if json.Unmarshal(b, &n) == nil {
		*c = code(n.String())
	}
	return nil
}

// count accepts a JSON number; anything else leaves it unknown.
type count struct {
	n  int
	ok bool
}

func (c *count) UnmarshalJSON(b []byte) error {
	n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	if err == nil && n >= 0 && n < 1<<40 {
		c.n, c.ok = int(n), true
	}
	return nil
}

func (c count) or() int {
	if c.ok {
		return c.n
	}
	return -1
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

func (o *observer) fail(t string) {
	if o.errType == "" {
		o.errType = boundType(t)
	}
}

// event handles one event's data.
func (o *observer) event(name, data []byte, overflow bool) {
	o.values++
	if overflow {
		return // too large to read: its bytes went by unread
	}
	switch o.c.proto {
	case protoChat, protoCompletions:
		o.openAIChat(data)
	case protoResponses:
		o.openAIResponses(data)
	case protoAnthropic:
		o.anthropic(data)
	case protoGemini:
		o.gemini(data)
	case protoOllamaChat, protoOllamaGen:
		o.ollama(data)
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
		FinishReason string `json:"finish_reason"`
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

func (o *observer) openAIChat(data []byte) {
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		o.ended = true
		return
	}
	var ev chatEvent
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	if len(ev.Error) > 0 && string(ev.Error) != "null" {
		var e apiError
		if json.Unmarshal(ev.Error, &e) != nil {
			o.fail(streamErrorType)
		} else {
			o.fail(e.typ())
		}
		return
	}
	if ev.Object == "error" {
		e := apiError{Type: ev.Type, Code: ev.Code}
		o.fail(e.typ())
		return
	}
	if ev.ID != "" {
		o.g.SetResponseID(ev.ID)
	}
	if ev.Model != "" {
		o.g.SetResponseModel(ev.Model)
	}
	if ev.Usage != nil {
		o.g.SetUsage(ev.Usage.PromptTokens.or(), ev.Usage.CompletionTokens.or())
	}
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
		if ch.FinishReason != "" {
			o.g.AddFinishReason(ch.FinishReason)
		}
	}
	if content {
		o.chunk()
	}
	if !o.streaming && len(ev.Choices) > 0 {
		o.ended = true // a complete non-streamed reply
	}
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

func (o *observer) record(r *response) {
	if r.ID != "" {
		o.g.SetResponseID(r.ID)
	}
	if r.Model != "" {
		o.g.SetResponseModel(r.Model)
	}
	if r.Usage != nil {
		o.g.SetUsage(r.Usage.InputTokens.or(), r.Usage.OutputTokens.or())
	}
}

func (o *observer) finishResponse(r *response) {
	o.record(r)
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
			t = string(r.Error.Code)
		}
		o.fail(t)
	}
}

func (o *observer) openAIResponses(data []byte) {
	var ev responsesEvent
	if json.Unmarshal(data, &ev) != nil {
		return
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
		o.record(&ev.Response)
	case "response.completed", "response.incomplete", "response.failed":
		if ev.Response.Status == "" {
			ev.Response.Status = strings.TrimPrefix(ev.Type, "response.")
		}
		o.finishResponse(&ev.Response)
	case "error":
		t := string(ev.Code)
		if t == "" {
			t = streamErrorType
		}
		o.fail(t)
	case "":
		if ev.Object == "response" { // a non-streamed reply
			o.finishResponse(&ev.response)
		} else if ev.response.Error != nil {
			o.fail(string(ev.response.Error.Code))
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

func (o *observer) anthropicUsage(u *anthropicUsage) {
	if u != nil {
		o.g.SetUsage(u.InputTokens.or(), u.OutputTokens.or())
	}
}

func (o *observer) anthropic(data []byte) {
	var ev anthropicEvent
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	switch ev.Type {
	case "content_block_delta":
		if ev.Delta.Text || ev.Delta.Thinking || ev.Delta.PartialJSON {
			o.chunk()
		}
	case "message_start":
		if ev.Message.ID != "" {
			o.g.SetResponseID(ev.Message.ID)
		}
		if ev.Message.Model != "" {
			o.g.SetResponseModel(ev.Message.Model)
		}
		o.anthropicUsage(ev.Message.Usage)
	case "message_delta":
		if ev.Delta.StopReason != "" {
			o.g.AddFinishReason(ev.Delta.StopReason)
		}
		o.anthropicUsage(ev.Usage)
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
			o.g.SetResponseID(ev.ID)
		}
		if ev.Model != "" {
			o.g.SetResponseModel(ev.Model)
		}
		if ev.StopReason != "" {
			o.g.AddFinishReason(ev.StopReason)
		}
		o.anthropicUsage(ev.Usage)
		o.ended = true
	}
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

func (o *observer) gemini(data []byte) {
	var ev geminiEvent
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	if ev.Error != nil {
		o.fail(ev.Error.typ())
		return
	}
	if ev.ResponseID != "" {
		o.g.SetResponseID(ev.ResponseID)
	}
	if ev.ModelVersion != "" {
		o.g.SetResponseModel(ev.ModelVersion)
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

func (o *observer) ollama(data []byte) {
	var ev ollamaEvent
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	if ev.Error != nil {
		o.fail(streamErrorType)
		return
	}
	if ev.Model != "" {
		o.g.SetResponseModel(ev.Model)
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
