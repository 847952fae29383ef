// Package server serves the simulated engine over the wire formats the SDKs speak: OpenAI Chat
// Completions (streaming with SSE chunks and an optional usage chunk, and non-streaming), the
// OpenAI Responses API (streaming events), Anthropic Messages (streaming events), the Gemini API
// (generateContent, and streamGenerateContent as SSE with alt=sse or as a streamed JSON array) and
// Ollama (/api/chat and /api/generate, NDJSON). Bad requests get each provider's JSON errors with
// the right status codes.
package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/otelitl/itl/examples/fakellm/engine"
)

// RequestIDHeader carries the engine's id of a request, so that a client can fetch the arrival
// times the engine recorded for it (GET /debug/arrivals?id=N).
const RequestIDHeader = "X-Fakellm-Request-Id"

// DefaultModels are the model names a fakellm serves unless told otherwise (its -models flag).
var DefaultModels = []string{"fake-gpt", "fake-claude", "fake-llama", "fake-gemini"}

// Server is the HTTP front of an engine.
type Server struct {
	eng    *engine.Engine
	models map[string]bool
	mux    *http.ServeMux
}

// New serves eng for the given model names.
func New(eng *engine.Engine, models []string) *Server {
	s := &Server{eng: eng, models: map[string]bool{}, mux: http.NewServeMux()}
	for _, m := range models {
		s.models[m] = true
	}
	s.mux.HandleFunc("POST /v1/chat/completions", s.chat)
	s.mux.HandleFunc("POST /v1/responses", s.responses)
	s.mux.HandleFunc("POST /v1/messages", s.messages)
	s.mux.HandleFunc("POST /v1beta/models/{call}", s.gemini)
	s.mux.HandleFunc("POST /api/chat", s.ollama(true))
	s.mux.HandleFunc("POST /api/generate", s.ollama(false))
	s.mux.HandleFunc("GET /debug/arrivals", s.arrivals)
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// words is the vocabulary replies are made of: the text is not the point, its rhythm is.
var words = strings.Fields("the model streams tokens at a cadence set by its batch its cache and its scheduler while the reader waits and reads")

func text(id uint64, i, tokens int) string {
	var b strings.Builder
	for k := range tokens {
		b.WriteString(words[(int(id)*7+i*3+k)%len(words)])
		b.WriteByte(' ')
	}
	return b.String()
}

// promptTokens estimates the prompt's tokens from its text, about four bytes a token.
func promptTokens(raw json.RawMessage) int { return max(len(raw)/4, 1) }

type openaiError struct {
	status           int
	typ, code, param string
	msg              string
}

func writeOpenAIError(w http.ResponseWriter, e openaiError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	var code, param any
	if e.code != "" {
		code = e.code
	}
	if e.param != "" {
		param = e.param
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": e.msg, "type": e.typ, "code": code, "param": param}})
}

func writeAnthropicError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}

type sse struct {
	w  http.ResponseWriter
	fl http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	return &sse{w: w, fl: fl}
}

func (s *sse) send(event string, v any) {
	if event != "" {
		fmt.Fprintf(s.w, "event: %s\n", event)
	}
	b, _ := json.Marshal(v)
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if s.fl != nil {
		s.fl.Flush()
	}
}

func (s *sse) done() {
	fmt.Fprint(s.w, "data: [DONE]\n\n")
	if s.fl != nil {
		s.fl.Flush()
	}
}

func (s *Server) arrivals(w http.ResponseWriter, r *http.Request) {
	id, err := requestID(r.URL.Query().Get("id"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	arrivals, err := s.eng.Lookup(id)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	out := []int64{}
	for _, t := range arrivals {
		out = append(out, t.UnixNano())
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "arrivals_unix_nano": out})
}

// replyIDPrefixes are what the reply ids put before the request's number (chatcmpl-fake5 is
// request 5), so that an id copied from a reply works as well as the number; Gemini's puts it
// between fake and gemini (fake5gemini).
var replyIDPrefixes = []string{"chatcmpl-fake", "resp_fake", "msg_fake"}

// requestID reads /debug/arrivals's id: the request's number, or a reply's id that carries it.
func requestID(v string) (uint64, error) {
	if v == "" {
		return 0, fmt.Errorf("id is missing: give the request's number, from the %s response header, such as ?id=5", RequestIDHeader)
	}
	n := v
	for _, p := range replyIDPrefixes {
		n = strings.TrimPrefix(n, p)
	}
	if g, ok := strings.CutPrefix(n, "fake"); ok && strings.HasSuffix(g, "gemini") { // Gemini's: fake5gemini
		n = strings.TrimSuffix(g, "gemini")
	}
	id, err := strconv.ParseUint(n, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("id %q: give the request's number, from the %s response header (or a reply's id, such as chatcmpl-fake5)", v, RequestIDHeader)
	}
	return id, nil
}

type chatRequest struct {
	Model         string          `json:"model"`
	Messages      json.RawMessage `json:"messages"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           int `json:"max_tokens"`
	MaxCompletionTokens int `json:"max_completion_tokens"`
}

func (s *Server) submit(ctx context.Context, w http.ResponseWriter, prompt, maxTokens int) (*engine.Request, bool) {
	req, err := s.eng.Submit(ctx, prompt, maxTokens)
	if err != nil {
		writeOpenAIError(w, openaiError{status: http.StatusServiceUnavailable, typ: "server_error", msg: err.Error()})
		return nil, false
	}
	w.Header().Set(RequestIDHeader, strconv.FormatUint(req.ID, 10))
	return req, true
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var body chatRequest
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeOpenAIError(w, openaiError{status: http.StatusBadRequest, typ: "invalid_request_error", msg: "We could not parse the JSON body of your request: " + err.Error()})
		return
	}
	if body.Model == "" {
		writeOpenAIError(w, openaiError{status: http.StatusBadRequest, typ: "invalid_request_error", param: "model", code: "missing_required_parameter", msg: "you must provide a model parameter"})
		return
	}
	if !s.models[body.Model] {
		writeOpenAIError(w, openaiError{status: http.StatusNotFound, typ: "invalid_request_error", param: "model", code: "model_not_found", msg: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", body.Model)})
		return
	}
	if len(body.Messages) == 0 || string(body.Messages) == "[]" || string(body.Messages) == "null" {
		writeOpenAIError(w, openaiError{status: http.StatusBadRequest, typ: "invalid_request_error", param: "messages", code: "missing_required_parameter", msg: "messages: at least one message is required"})
		return
	}
	maxTokens := body.MaxCompletionTokens
	if maxTokens == 0 {
		maxTokens = body.MaxTokens
	}
	prompt := promptTokens(body.Messages)
	req, ok := s.submit(r.Context(), w, prompt, maxTokens)
	if !ok {
		return
	}
	id := fmt.Sprintf("chatcmpl-fake%d", req.ID)
	created := time.Now().Unix()
	if !body.Stream {
		var sb strings.Builder
		i, total := 0, 0
		for st := range req.Steps {
			sb.WriteString(text(req.ID, i, st.Tokens))
			i++
			total += st.Tokens
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": body.Model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": sb.String()}, "finish_reason": req.FinishReason}},
			"usage":   map[string]any{"prompt_tokens": prompt, "completion_tokens": total, "total_tokens": prompt + total},
		})
		return
	}
	out := newSSE(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": body.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	out.send("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	i, total := 0, 0
	for st := range req.Steps {
		out.send("", chunk(map[string]any{"content": text(req.ID, i, st.Tokens)}, nil))
		i++
		total += st.Tokens
	}
	if req.FinishReason == "cancelled" {
		return
	}
	out.send("", chunk(map[string]any{}, req.FinishReason))
	if body.StreamOptions != nil && body.StreamOptions.IncludeUsage {
		out.send("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": body.Model, "choices": []any{},
			"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": total, "total_tokens": prompt + total}})
	}
	out.done()
}

type responsesRequest struct {
	Model           string          `json:"model"`
	Input           json.RawMessage `json:"input"`
	Instructions    string          `json:"instructions"`
	Stream          bool            `json:"stream"`
	MaxOutputTokens int             `json:"max_output_tokens"`
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	var body responsesRequest
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeOpenAIError(w, openaiError{status: http.StatusBadRequest, typ: "invalid_request_error", msg: "We could not parse the JSON body of your request: " + err.Error()})
		return
	}
	if !s.models[body.Model] {
		writeOpenAIError(w, openaiError{status: http.StatusNotFound, typ: "invalid_request_error", param: "model", code: "model_not_found", msg: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", body.Model)})
		return
	}
	if len(body.Input) == 0 {
		writeOpenAIError(w, openaiError{status: http.StatusBadRequest, typ: "invalid_request_error", param: "input", code: "missing_required_parameter", msg: "input: an input is required"})
		return
	}
	prompt := promptTokens(body.Input) + len(body.Instructions)/4
	req, ok := s.submit(r.Context(), w, prompt, body.MaxOutputTokens)
	if !ok {
		return
	}
	id := fmt.Sprintf("resp_fake%d", req.ID)
	resp := func(status string, usage any) map[string]any {
		m := map[string]any{"id": id, "object": "response", "created_at": time.Now().Unix(), "model": body.Model, "status": status, "output": []any{}}
		if usage != nil {
			m["usage"] = usage
		}
		return m
	}
	if !body.Stream {
		total := 0
		for st := range req.Steps {
			total += st.Tokens
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp("completed", map[string]any{"input_tokens": prompt, "output_tokens": total, "total_tokens": prompt + total}))
		return
	}
	out := newSSE(w)
	seq := 0
	ev := func(typ string, fields map[string]any) {
		seq++
		fields["type"], fields["sequence_number"] = typ, seq
		out.send(typ, fields)
	}
	ev("response.created", map[string]any{"response": resp("in_progress", nil)})
	ev("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"type": "message", "id": "msg_" + id, "role": "assistant", "status": "in_progress", "content": []any{}}})
	i, total := 0, 0
	for st := range req.Steps {
		ev("response.output_text.delta", map[string]any{"item_id": "msg_" + id, "output_index": 0, "content_index": 0, "delta": text(req.ID, i, st.Tokens)})
		i++
		total += st.Tokens
	}
	if req.FinishReason == "cancelled" {
		return
	}
	status := "completed"
	if req.FinishReason == "length" {
		status = "incomplete"
	}
	final := resp(status, map[string]any{"input_tokens": prompt, "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": total, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": prompt + total})
	if status == "incomplete" {
		final["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
		ev("response.incomplete", map[string]any{"response": final})
		return
	}
	ev("response.completed", map[string]any{"response": final})
}

type messagesRequest struct {
	Model     string          `json:"model"`
	Messages  json.RawMessage `json:"messages"`
	System    json.RawMessage `json:"system"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	var body messagesRequest
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeAnthropicError(w, http.StatusBadRequest, "invalid_request_error", "invalid JSON body: "+err.Error())
		return
	}
	if body.MaxTokens < 1 {
		writeAnthropicError(w, http.StatusBadRequest, "invalid_request_error", "max_tokens: Field required")
		return
	}
	if !s.models[body.Model] {
		writeAnthropicError(w, http.StatusNotFound, "not_found_error", "model: "+body.Model)
		return
	}
	if len(body.Messages) == 0 || string(body.Messages) == "[]" {
		writeAnthropicError(w, http.StatusBadRequest, "invalid_request_error", "messages: at least one message is required")
		return
	}
	prompt := promptTokens(body.Messages) + len(body.System)/4
	req, err := s.eng.Submit(r.Context(), prompt, body.MaxTokens)
	if err != nil {
		writeAnthropicError(w, 529, "overloaded_error", err.Error())
		return
	}
	w.Header().Set(RequestIDHeader, strconv.FormatUint(req.ID, 10))
	id := fmt.Sprintf("msg_fake%d", req.ID)
	if !body.Stream {
		var sb strings.Builder
		total, i := 0, 0
		for st := range req.Steps {
			sb.WriteString(text(req.ID, i, st.Tokens))
			total += st.Tokens
			i++
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "type": "message", "role": "assistant", "model": body.Model,
			"content": []any{map[string]any{"type": "text", "text": sb.String()}}, "stop_reason": stopReason(req.FinishReason), "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": prompt, "output_tokens": total}})
		return
	}
	out := newSSE(w)
	out.send("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message", "role": "assistant", "model": body.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": prompt, "output_tokens": 1}}})
	out.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
	out.send("ping", map[string]any{"type": "ping"})
	i, total := 0, 0
	for st := range req.Steps {
		out.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": text(req.ID, i, st.Tokens)}})
		i++
		total += st.Tokens
	}
	if req.FinishReason == "cancelled" {
		return
	}
	out.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	out.send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stopReason(req.FinishReason), "stop_sequence": nil}, "usage": map[string]any{"output_tokens": total}})
	out.send("message_stop", map[string]any{"type": "message_stop"})
}

func stopReason(finish string) string {
	if finish == "length" {
		return "max_tokens"
	}
	return "end_turn"
}
