package httpitl_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otelitl/itl/examples/fakellm/engine"
	"github.com/otelitl/itl/examples/fakellm/server"
)

// TestWriteEventCorpus writes the corpus of real events that otelitl/httpitl's tests read both
// with its scanner and with encoding/json (TestScanAgrees, and FuzzEvent's seeds): every event
// fakellm sends for each protocol, and the events in the test files of the SDKs this module
// requires, from the module cache. It runs only when asked:
//
//	HTTPITL_WRITE_CORPUS=1 go test -run TestWriteEventCorpus ./httpitl
//
// Each line of otelitl/httpitl/testdata/events/<source>.txt is a protocol name, a tab, and one
// event's data as a Go string literal.
func TestWriteEventCorpus(t *testing.T) {
	if os.Getenv("HTTPITL_WRITE_CORPUS") == "" {
		t.Skip("set HTTPITL_WRITE_CORPUS=1 to write otelitl/httpitl/testdata/events")
	}
	dir := filepath.Join("..", "..", "httpitl", "testdata", "events")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, evs []corpusEvent) {
		t.Helper()
		var b strings.Builder
		seen := map[corpusEvent]bool{}
		for _, e := range evs {
			if seen[e] || len(e.data) > 64<<10 {
				continue
			}
			seen[e] = true
			fmt.Fprintf(&b, "%s\t%s\n", e.proto, strconv.Quote(e.data))
		}
		if err := os.WriteFile(filepath.Join(dir, name+".txt"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d events", name, len(seen))
	}
	write("fakellm", fakellmEvents(t))
	for _, src := range []struct{ name, module, proto string }{
		{"openai-go", "github.com/openai/openai-go/v3", "chat"},
		{"anthropic-sdk-go", "github.com/anthropics/anthropic-sdk-go/v2", "anthropic"},
		{"genai", "google.golang.org/genai", "gemini"},
		{"ollama", "github.com/ollama/ollama", "ollama-chat"},
		{"go-openai", "github.com/sashabaranov/go-openai", "chat"},
		{"langchaingo", "github.com/tmc/langchaingo", "chat"},
	} {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", src.module).Output()
		if err != nil {
			t.Fatalf("go list -m %s: %v", src.module, err)
		}
		write(src.name, sdkEvents(t, strings.TrimSpace(string(out)), src.proto))
	}
}

type corpusEvent struct{ proto, data string }

// fakellmEvents asks fakellm for every protocol, streamed and not, cut by max tokens and not, and
// returns each event of the answers.
func fakellmEvents(t *testing.T) []corpusEvent {
	cfg := engine.DefaultConfig()
	cfg.StepBase = time.Millisecond
	eng, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.New(eng, []string{"fake-gpt", "gemini-2.5-flash", "llama3.2"}))
	defer func() { srv.Close(); eng.Close() }()
	var evs []corpusEvent
	post := func(proto, path, body string) {
		res, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		ct := res.Header.Get("Content-Type")
		for _, d := range splitBody(ct, b) {
			evs = append(evs, corpusEvent{proto, d})
		}
	}
	for _, stream := range []string{"true", "false"} {
		for _, max := range []string{"5", "40"} {
			post("chat", "/v1/chat/completions", `{"model":"fake-gpt","stream":`+stream+`,"max_tokens":`+max+`,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
			post("responses", "/v1/responses", `{"model":"fake-gpt","stream":`+stream+`,"max_output_tokens":`+max+`,"input":"hi"}`)
			post("anthropic", "/v1/messages", `{"model":"fake-gpt","stream":`+stream+`,"max_tokens":`+max+`,"messages":[{"role":"user","content":"hi"}]}`)
			post("ollama-chat", "/api/chat", `{"model":"llama3.2","stream":`+stream+`,"options":{"num_predict":`+max+`},"messages":[{"role":"user","content":"hi"}]}`)
			post("ollama-generate", "/api/generate", `{"model":"llama3.2","stream":`+stream+`,"options":{"num_predict":`+max+`},"prompt":"hi"}`)
		}
	}
	for _, path := range []string{":streamGenerateContent?alt=sse", ":streamGenerateContent", ":generateContent"} {
		post("gemini", "/v1beta/models/gemini-2.5-flash"+path, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":5}}`)
	}
	// Error answers.
	post("chat", "/v1/chat/completions", `{"model":"nope","messages":[{"role":"user","content":"hi"}]}`)
	post("anthropic", "/v1/messages", `{"model":"nope","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	post("gemini", "/v1beta/models/nope:generateContent", `{"contents":[{"parts":[{"text":"hi"}]}]}`)
	post("ollama-chat", "/api/chat", `{"model":"nope"}`)
	return evs
}

// splitBody cuts a body into events the way the Content-Type says: SSE data, NDJSON lines, or a
// JSON value (each element of a top-level array).
func splitBody(contentType string, b []byte) []string {
	var out []string
	switch {
	case strings.HasPrefix(contentType, "text/event-stream"):
		for _, ev := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n\n") {
			var data []string
			for _, line := range strings.Split(ev, "\n") {
				if v, ok := strings.CutPrefix(line, "data:"); ok {
					data = append(data, strings.TrimPrefix(v, " "))
				}
			}
			if len(data) > 0 {
				out = append(out, strings.Join(data, "\n"))
			}
		}
	case strings.HasPrefix(contentType, "application/x-ndjson"):
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				out = append(out, line)
			}
		}
	default:
		var elems []json.RawMessage
		if json.Unmarshal(b, &elems) == nil {
			for _, e := range elems {
				out = append(out, string(e))
			}
		} else if s := strings.TrimSpace(string(b)); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// sdkEvents returns the events in the string literals of a module's test files: SSE data lines,
// lines and literals that are JSON objects, and the elements of literals that are JSON arrays of
// objects, when they are relevant. Invalid JSON is kept: it is as interesting to compare.
func sdkEvents(t *testing.T, dir, proto string) []corpusEvent {
	var evs []corpusEvent
	add := func(s string) {
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "{") && relevant(s) {
			evs = append(evs, corpusEvent{classify(proto, s), s})
		}
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == "vendor" || d.Name() == "node_modules") {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || len(s) < 8 {
				return true
			}
			trimmed := strings.TrimSpace(s)
			if strings.HasPrefix(trimmed, "[") {
				var elems []json.RawMessage
				if json.Unmarshal([]byte(trimmed), &elems) == nil {
					for _, e := range elems {
						add(string(e))
					}
				}
			}
			if strings.HasPrefix(trimmed, "{") && strings.Contains(trimmed, "\n") && json.Valid([]byte(trimmed)) {
				add(trimmed) // a pretty-printed object
			}
			sc := bufio.NewScanner(strings.NewReader(s))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				line := strings.TrimSpace(sc.Text())
				if v, ok := strings.CutPrefix(line, "data:"); ok {
					line = v
				}
				add(line)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// relevant keeps objects that name a member the readers read, and leaves out those that carry
// credentials, fake as the SDKs' test ones are (keys, tokens), which have no place in a corpus.
func relevant(s string) bool {
	lower := strings.ToLower(s)
	for _, c := range []string{"private key", "private_key", "sk-", "api_key", "apikey", "access_token", "refresh_token", "password", "secret", "bearer", "authorization", "credential"} {
		if strings.Contains(lower, c) {
			return false
		}
	}
	for _, k := range []string{`"choices"`, `"delta"`, `"candidates"`, `"usagemetadata"`, `"done"`, `"message"`, `"response"`, `"type"`, `"error"`, `"usage"`, `"model"`, `"id"`} {
		if strings.Contains(lower, k) {
			return true
		}
	}
	return false
}

// classify names the protocol an SDK's event most likely belongs to (every event is read as every
// protocol's anyway).
func classify(proto, s string) string {
	compact := strings.ReplaceAll(s, " ", "")
	switch {
	case strings.Contains(compact, `"type":"response.`) || strings.Contains(compact, `"object":"response"`):
		return "responses"
	case strings.Contains(compact, `"object":"text_completion"`):
		return "completions"
	case strings.Contains(compact, `"candidates":`):
		return "gemini"
	case strings.Contains(compact, `"type":"content_block`) || strings.Contains(compact, `"type":"message`):
		return "anthropic"
	case proto == "ollama-chat" && !strings.Contains(compact, `"message":`) && strings.Contains(compact, `"response":`):
		return "ollama-generate"
	}
	return proto
}
