package httpitl_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl/httpitl"
)

func chatChunk(content string) string {
	return `data: {"id":"chatcmpl-9","object":"chat.completion.chunk","model":"gpt-x","choices":[{"index":0,"delta":{"content":"` + content + `"},"finish_reason":null}]}` + "\n\n"
}

// script serves a scripted response to every POST: status, then each piece flushed after a pause.
// A piece "HANGUP" closes the connection in the middle of the chunked body.
func script(t *testing.T, status int, pieces ...string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if status != http.StatusOK {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, strings.Join(pieces, ""))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(status)
		w.(http.Flusher).Flush()
		for _, p := range pieces {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(3 * time.Millisecond):
			}
			if p == "HANGUP" {
				panic(http.ErrAbortHandler) // the connection is cut without the chunked body's end
			}
			_, _ = io.WriteString(w, p)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func tracedClient(t *testing.T) (*http.Client, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return &http.Client{Transport: httpitl.NewTransport(&http.Transport{}, httpitl.WithTracerProvider(tp))}, exp
}

type outcome struct {
	status  int
	body    string
	readErr string // the error type the caller saw reading the body
	doErr   string
}

// call posts a chat request with c and reads the whole body the way a caller would.
func call(ctx context.Context, c *http.Client, url string) outcome {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", strings.NewReader(`{"model":"gpt-x","stream":true,"messages":[]}`))
	res, err := c.Do(req)
	if err != nil {
		return outcome{doErr: fmt.Sprintf("%T", errors.Unwrap(err))}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	o := outcome{status: res.StatusCode, body: string(b)}
	if err != nil {
		o.readErr = fmt.Sprintf("%T %v", err, errors.Is(err, io.ErrUnexpectedEOF))
	}
	return o
}

// TestMisbehaviour runs each broken server with and without httpitl: the caller must see the
// same bytes and the same error, and the span the right error.type.
func TestMisbehaviour(t *testing.T) {
	for _, tc := range []struct {
		name     string
		status   int
		pieces   []string
		errType  string
		chunks   int64
		noSecret bool
	}{
		{name: "complete", status: 200, pieces: []string{chatChunk("a"), chatChunk("b"), "data: [DONE]\n\n"}, chunks: 2},
		{name: "truncated", status: 200, pieces: []string{chatChunk("a"), chatChunk("b"), chatChunk("c")}, errType: "incomplete_stream", chunks: 3},
		{name: "cut mid-body", status: 200, pieces: []string{chatChunk("a"), `data: {"id":`, "HANGUP"}, errType: "incomplete_stream", chunks: 1},
		{name: "error event", status: 200, pieces: []string{chatChunk("a"), `data: {"error":{"message":"SECRET overloaded text","type":"server_error","code":"overloaded"}}` + "\n\n"},
			errType: "overloaded", chunks: 1, noSecret: true},
		{name: "error event without type", status: 200, pieces: []string{`data: {"error":{"message":"SECRET"}}` + "\n\n", "data: [DONE]\n\n"}, errType: "stream_error", noSecret: true},
		{name: "429", status: 429, pieces: []string{`{"error":{"message":"SECRET slow down","type":"rate_limit_error"}}`}, errType: "429", noSecret: true},
		{name: "500", status: 500, pieces: []string{`{"error":{"message":"SECRET"}}`}, errType: "500", noSecret: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := script(t, tc.status, tc.pieces...)
			plain := &http.Client{Transport: &http.Transport{}}
			traced, exp := tracedClient(t)
			check := wraptest.NoLeak(t, plain, traced)
			want := call(context.Background(), plain, srv.URL)
			got := call(context.Background(), traced, srv.URL)
			if got != want {
				t.Errorf("with httpitl the caller saw %+v, without %+v", got, want)
			}
			span, attrs := oneSpan(t, exp)
			if g := attrs[attrKey("error.type")].AsString(); g != tc.errType {
				t.Errorf("error.type %q, want %q", g, tc.errType)
			}
			if g := attrs[attrKey("otelitl.chunk.count")].AsInt64(); g != tc.chunks {
				t.Errorf("chunk.count %d, want %d", g, tc.chunks)
			}
			if tc.noSecret {
				all := span.Status.Description
				for _, kv := range span.Attributes {
					all += kv.Value.String()
				}
				if strings.Contains(all, "SECRET") {
					t.Errorf("the error's message reached the span: %q", all)
				}
			}
			check()
		})
	}
}

// TestCallerStopsReading: a caller that reads part of a stream and closes the body; a caller that
// cancels its context and never reads again; a deadline.
func TestCallerStopsReading(t *testing.T) {
	long := []string{chatChunk("a"), chatChunk("b")}
	for range 200 {
		long = append(long, chatChunk("c"))
	}
	long = append(long, "data: [DONE]\n\n")
	srv := script(t, 200, long...)

	t.Run("close early", func(t *testing.T) {
		traced, exp := tracedClient(t)
		check := wraptest.NoLeak(t, traced)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(`{"model":"gpt-x","stream":true}`))
		res, err := traced.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, len(chatChunk("a"))*2)
		if _, err := io.ReadFull(res.Body, buf); err != nil {
			t.Fatal(err)
		}
		if err := res.Body.Close(); err != nil {
			t.Fatal(err)
		}
		_, attrs := oneSpan(t, exp)
		if g := attrs[attrKey("error.type")].AsString(); g != "cancelled" {
			t.Errorf("error.type %q, want cancelled", g)
		}
		if g := attrs[attrKey("otelitl.chunk.count")].AsInt64(); g != 2 {
			t.Errorf("chunk.count %d, want 2", g)
		}
		check()
	})
	t.Run("cancel without reading", func(t *testing.T) {
		traced, exp := tracedClient(t)
		check := wraptest.NoLeak(t, traced)
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(`{"model":"gpt-x","stream":true}`))
		res, err := traced.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		deadline := time.Now().Add(5 * time.Second)
		for len(exp.GetSpans()) == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		_, attrs := oneSpan(t, exp)
		if g := attrs[attrKey("error.type")].AsString(); g != "cancelled" {
			t.Errorf("error.type %q, want cancelled", g)
		}
		_, rerr := io.ReadAll(res.Body)
		if !errors.Is(rerr, context.Canceled) {
			t.Errorf("the caller's read after cancelling returned %v", rerr)
		}
		res.Body.Close()
		check()
	})
	t.Run("deadline", func(t *testing.T) {
		// The deadline must pass while the body is read. One that passes before the answer's
		// header, as a loaded machine can make 50 ms do, is tried again longer: the stream lasts
		// over 600 ms.
		for _, d := range []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond} {
			traced, exp := tracedClient(t)
			check := wraptest.NoLeak(t, traced)
			ctx, cancel := context.WithTimeout(context.Background(), d)
			got := call(ctx, traced, srv.URL)
			cancel()
			if got.doErr != "" && d < 200*time.Millisecond {
				t.Logf("the deadline of %v passed before the answer's header (%+v): again, longer", d, got)
				check()
				continue
			}
			if got.readErr == "" {
				t.Fatalf("the read must fail at the deadline of %v: %+v", d, got)
			}
			_, attrs := oneSpan(t, exp)
			if g := attrs[attrKey("error.type")].AsString(); g != "timeout" {
				t.Errorf("error.type %q, want timeout", g)
			}
			check()
			return
		}
	})
}

// TestRequestBodyIntact: the upstream receives the body byte for byte, with the same
// Content-Length, whether the request can be re-read (GetBody) or not, and however large it is.
func TestRequestBodyIntact(t *testing.T) {
	type seen struct {
		sum    string
		length int64
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		_, _ = io.Copy(h, r.Body)
		got <- seen{hex.EncodeToString(h.Sum(nil)), r.ContentLength}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"x","model":"m2","choices":[{"message":{"content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`)
	}))
	defer srv.Close()
	for _, size := range []int{10, 4 << 10, 3 << 20} {
		body := `{"messages":[{"role":"user","content":"` + strings.Repeat("x", size) + `"}],"model":"m1","stream":false}`
		sum := sha256.Sum256([]byte(body))
		for _, reReadable := range []bool{true, false} {
			t.Run(fmt.Sprintf("%d/%v", size, reReadable), func(t *testing.T) {
				traced, exp := tracedClient(t)
				var rd io.Reader = strings.NewReader(body)
				if !reReadable {
					rd = struct{ io.Reader }{bytes.NewReader([]byte(body))}
				}
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", rd)
				if !reReadable {
					req.ContentLength = int64(len(body))
				}
				res, err := traced.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.ReadAll(res.Body)
				res.Body.Close()
				s := <-got
				if s.sum != hex.EncodeToString(sum[:]) || s.length != int64(len(body)) {
					t.Errorf("the upstream got a different body: %+v", s)
				}
				span, attrs := oneSpan(t, exp)
				// Past the bound too: the model is read from a copy, or as the rest of the body is
				// sent.
				wantModel := "m1"
				if span.Name != "chat m1" {
					t.Errorf("span name %q, want chat m1", span.Name)
				}
				for k, want := range map[string]string{"gen_ai.request.model": wantModel, "gen_ai.response.model": "m2", "gen_ai.request.stream": "", /* left out */
					"gen_ai.usage.input_tokens": "3", "gen_ai.response.finish_reasons": `["stop"]`, "error.type": ""} {
					if g := attrs[attrKey(k)].String(); g != want {
						t.Errorf("%s = %q, want %q", k, g, want)
					}
				}
			})
		}
	}
}

// TestGetBodySharingBody: an SDK's GetBody may rewind and return the very reader Body reads
// (anthropic-sdk-go's bedrock package does): httpitl never reads such a "copy", so the upstream
// gets the body whole, for every protocol, and the model is still read.
func TestGetBodySharingBody(t *testing.T) {
	got := make(chan int, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		got <- int(n)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	for _, size := range []int{10, 3 << 20} {
		traced, exp := tracedClient(t)
		body := []byte(`{"messages":[{"role":"user","content":"` + strings.Repeat("x", size) + `"}],"model":"m1","stream":true}`)
		reader := bytes.NewReader(body)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", nil)
		req.Body = io.NopCloser(reader)
		req.GetBody = func() (io.ReadCloser, error) {
			_, err := reader.Seek(0, io.SeekStart)
			return io.NopCloser(reader), err
		}
		req.ContentLength = int64(len(body))
		res, err := traced.Do(req)
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		_, _ = io.ReadAll(res.Body)
		res.Body.Close()
		if n := <-got; n != len(body) {
			t.Errorf("%d bytes: the upstream got %d of %d", size, n, len(body))
		}
		if _, attrs := oneSpan(t, exp); attrs[attrKey("gen_ai.request.model")].String() != "m1" {
			t.Errorf("%d bytes: gen_ai.request.model %q", size, attrs[attrKey("gen_ai.request.model")].String())
		}
	}
}

// TestOtherRequestsPassThrough: no span, and the very response of the base transport.
func TestOtherRequestsPassThrough(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "data: x\n\n") }))
	defer srv.Close()
	traced, exp := tracedClient(t)
	for _, r := range []struct{ method, path string }{{"GET", "/v1/chat/completions"}, {"POST", "/v1/embeddings"}, {"POST", "/v1/models/x:countTokens"}} {
		req, _ := http.NewRequest(r.method, srv.URL+r.path, strings.NewReader("{}"))
		res, err := traced.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(b) != "data: x\n\n" {
			t.Errorf("%s %s: body %q", r.method, r.path, b)
		}
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Errorf("%d spans for requests that are no generation", n)
	}
}
