package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Gemini API (generativelanguage.googleapis.com v1beta): POST /v1beta/models/{model}:generateContent
// answers one GenerateContentResponse; :streamGenerateContent streams them, as SSE events
// ("data: {...}" and a CRLF blank line) with ?alt=sse, else as a JSON array written element by
// element. The last response carries the finishReason and the usage.

type geminiRequest struct {
	Contents          json.RawMessage `json:"contents"`
	SystemInstruction json.RawMessage `json:"systemInstruction"`
	GenerationConfig  *struct {
		MaxOutputTokens int `json:"maxOutputTokens"`
	} `json:"generationConfig"`
}

func writeGeminiError(w http.ResponseWriter, status int, st, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "message": msg, "status": st}})
}

func geminiFinish(finish string) string {
	if finish == "length" {
		return "MAX_TOKENS"
	}
	return "STOP"
}

func (s *Server) gemini(w http.ResponseWriter, r *http.Request) {
	model, method, _ := strings.Cut(r.PathValue("call"), ":")
	if method != "generateContent" && method != "streamGenerateContent" {
		writeGeminiError(w, http.StatusNotFound, "NOT_FOUND", "method "+method+" is not served here")
		return
	}
	var body geminiRequest
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeGeminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid JSON payload received. "+err.Error())
		return
	}
	if !s.models[model] {
		writeGeminiError(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("models/%s is not found for API version v1beta, or is not supported for %s.", model, method))
		return
	}
	if len(body.Contents) == 0 || string(body.Contents) == "[]" {
		writeGeminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified")
		return
	}
	maxTokens := 0
	if body.GenerationConfig != nil {
		maxTokens = body.GenerationConfig.MaxOutputTokens
	}
	prompt := promptTokens(body.Contents) + len(body.SystemInstruction)/4
	req, err := s.eng.Submit(r.Context(), prompt, maxTokens)
	if err != nil {
		writeGeminiError(w, http.StatusServiceUnavailable, "UNAVAILABLE", err.Error())
		return
	}
	w.Header().Set(RequestIDHeader, strconv.FormatUint(req.ID, 10))
	respID := fmt.Sprintf("fake%dgemini", req.ID)
	usage := func(out int) map[string]any {
		return map[string]any{"promptTokenCount": prompt, "candidatesTokenCount": out, "totalTokenCount": prompt + out,
			"promptTokensDetails": []any{map[string]any{"modality": "TEXT", "tokenCount": prompt}}}
	}
	response := func(text, finish string, out int) map[string]any {
		cand := map[string]any{"content": map[string]any{"parts": []any{map[string]any{"text": text}}, "role": "model"}, "index": 0}
		m := map[string]any{"candidates": []any{cand}, "modelVersion": model, "responseId": respID}
		if finish != "" {
			cand["finishReason"] = finish
			m["usageMetadata"] = usage(out)
		} else {
			m["usageMetadata"] = map[string]any{"promptTokenCount": prompt, "totalTokenCount": prompt}
		}
		return m
	}
	if method == "generateContent" {
		var sb strings.Builder
		i, total := 0, 0
		for st := range req.Steps {
			sb.WriteString(text(req.ID, i, st.Tokens))
			i++
			total += st.Tokens
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_ = json.NewEncoder(w).Encode(response(sb.String(), geminiFinish(req.FinishReason), total))
		return
	}
	fl, _ := w.(http.Flusher)
	sse := r.URL.Query().Get("alt") == "sse"
	if sse {
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	}
	w.WriteHeader(http.StatusOK)
	n := 0
	send := func(v any) {
		b, _ := json.Marshal(v)
		switch {
		case sse:
			fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		case n == 0:
			fmt.Fprintf(w, "[%s", b)
		default:
			fmt.Fprintf(w, ",\r\n%s", b)
		}
		n++
		if fl != nil {
			fl.Flush()
		}
	}
	i, total := 0, 0
	for st := range req.Steps {
		send(response(text(req.ID, i, st.Tokens), "", 0))
		i++
		total += st.Tokens
	}
	if req.FinishReason == "cancelled" {
		return
	}
	send(response("", geminiFinish(req.FinishReason), total))
	if !sse {
		fmt.Fprint(w, "]")
	}
}

// Ollama: POST /api/chat and /api/generate stream NDJSON (application/x-ndjson) unless "stream":
// false, one object per line; the last has "done": true, done_reason and the counts.

type ollamaRequest struct {
	Model    string          `json:"model"`
	Messages json.RawMessage `json:"messages"`
	Prompt   string          `json:"prompt"`
	System   string          `json:"system"`
	Stream   *bool           `json:"stream"`
	Options  *struct {
		NumPredict int `json:"num_predict"`
	} `json:"options"`
}

func writeOllamaError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": msg})
}

func (s *Server) ollama(chat bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body ollamaRequest
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeOllamaError(w, http.StatusBadRequest, err.Error())
			return
		}
		if body.Model == "" {
			writeOllamaError(w, http.StatusBadRequest, "model is required")
			return
		}
		if !s.models[body.Model] {
			writeOllamaError(w, http.StatusNotFound, fmt.Sprintf("model %q not found, try pulling it first", body.Model))
			return
		}
		prompt := promptTokens(body.Messages)
		if !chat {
			prompt = max(len(body.Prompt)/4, 1)
		}
		maxTokens := 0
		if body.Options != nil {
			maxTokens = body.Options.NumPredict
		}
		start := time.Now()
		req, err := s.eng.Submit(r.Context(), prompt+len(body.System)/4, maxTokens)
		if err != nil {
			writeOllamaError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		w.Header().Set(RequestIDHeader, strconv.FormatUint(req.ID, 10))
		line := func(content string) map[string]any {
			m := map[string]any{"model": body.Model, "created_at": time.Now().UTC().Format(time.RFC3339Nano), "done": false}
			if chat {
				m["message"] = map[string]any{"role": "assistant", "content": content}
			} else {
				m["response"] = content
			}
			return m
		}
		final := func(content string, total int, first time.Time) map[string]any {
			m := line(content)
			now := time.Now()
			m["done"], m["done_reason"] = true, req.FinishReason
			m["total_duration"], m["load_duration"] = now.Sub(start).Nanoseconds(), 0
			m["prompt_eval_count"], m["prompt_eval_duration"] = prompt, first.Sub(start).Nanoseconds()
			m["eval_count"], m["eval_duration"] = total, now.Sub(first).Nanoseconds()
			if !chat {
				m["context"] = []int{1, 2, 3}
			}
			return m
		}
		if body.Stream != nil && !*body.Stream {
			var sb strings.Builder
			i, total := 0, 0
			first := time.Now()
			for st := range req.Steps {
				if i == 0 {
					first = st.At
				}
				sb.WriteString(text(req.ID, i, st.Tokens))
				i++
				total += st.Tokens
			}
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_ = json.NewEncoder(w).Encode(final(sb.String(), total, first))
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
		fl, _ := w.(http.Flusher)
		enc := json.NewEncoder(w)
		send := func(v any) {
			_ = enc.Encode(v)
			if fl != nil {
				fl.Flush()
			}
		}
		i, total := 0, 0
		first := time.Now()
		for st := range req.Steps {
			if i == 0 {
				first = st.At
			}
			send(line(text(req.ID, i, st.Tokens)))
			i++
			total += st.Tokens
		}
		if req.FinishReason == "cancelled" {
			return
		}
		send(final("", total, first))
	}
}
