package httpitl_test

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelitl/itl/internal/wraptest"
)

const threeChunks = "data: " + chunkA + "\n\ndata: " + chunkA + "\n\ndata: " + chunkA + "\n\n" + stopDone

// TestAttackContentTypeLies: the body is cut by its Content-Type, whatever it holds. The caller
// gets its bytes unchanged in every case; what the span can say follows the doc: SSE labelled
// application/json is read as JSON values, not counted as a stream; JSON labelled text/event-stream
// has no events and is incomplete; a missing or oddly written Content-Type falls back on the
// protocol.
func TestAttackContentTypeLies(t *testing.T) {
	for _, tc := range []struct {
		name, ct, body, errType string
		chunks                  int64
	}{
		{"SSE as application/json", "application/json", threeChunks, "", 0},
		{"JSON as text/event-stream", "text/event-stream", `{"id":"x","choices":[{"message":{"content":"hi"},"finish_reason":"stop"}]}`, "incomplete_stream", 0},
		{"SSE without Content-Type", "", threeChunks, "", 3},
		{"SSE as Text/Event-Stream with parameters", "Text/Event-Stream ; charset=utf-8", threeChunks, "", 3},
		{"SSE as text/plain", "text/plain", threeChunks, "", 3},
		{"NDJSON as text/event-stream", "text/event-stream", `{"message":{"content":"a"},"done":false}` + "\n" + `{"done":true}` + "\n", "incomplete_stream", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header()["Content-Type"] = []string{tc.ct} // "" too: no sniffing
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c, exp := tracedOver(t, &http.Transport{})
			defer c.CloseIdleConnections()
			if _, got, err := post(context.Background(), t, c, srv.URL+"/v1/chat/completions", chatReq); err != nil || string(got) != tc.body {
				t.Fatalf("the caller got %q, %v", got, err)
			}
			a := attrsOf(waitSpans(t, exp, 1)[0])
			if g := a["error.type"].AsString(); g != tc.errType {
				t.Errorf("error.type %q, want %q", g, tc.errType)
			}
			if g := a["otelitl.chunk.count"].AsInt64(); g != tc.chunks {
				t.Errorf("%d chunks, want %d", g, tc.chunks)
			}
		})
	}
}

// gzipServer streams threeChunks gzip-compressed, flushing the compressor after every event, when
// the request accepts gzip.
func gzipServer(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			_, _ = io.WriteString(w, threeChunks)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		for _, ev := range strings.SplitAfter(threeChunks, "\n\n") {
			_, _ = io.WriteString(zw, ev)
			_ = zw.Flush()
			w.(http.Flusher).Flush()
			time.Sleep(2 * time.Millisecond)
		}
		_ = zw.Close()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestAttackGzip: a gzip stream that Go's transport asked for itself reaches httpitl decompressed
// and is read chunk by chunk; one the caller asked for (Accept-Encoding: gzip) reaches the caller
// compressed and unchanged, and its span has the duration and no timeline, without an error.
func TestAttackGzip(t *testing.T) {
	srv := gzipServer(t)
	for _, callerAsks := range []bool{false, true} {
		plain := &http.Client{Transport: &http.Transport{}}
		c, exp := tracedOver(t, &http.Transport{})
		get := func(c *http.Client) (string, string) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(chatReq))
			if callerAsks {
				req.Header.Set("Accept-Encoding", "gzip")
			}
			res, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			return string(b), res.Header.Get("Content-Encoding")
		}
		want, wantCE := get(plain)
		got, gotCE := get(c)
		if got != want || gotCE != wantCE {
			t.Errorf("caller asks %v: with httpitl %q (%s), without %q (%s)", callerAsks, got, gotCE, want, wantCE)
		}
		if !callerAsks && got != threeChunks {
			t.Errorf("decompressed: %q", got)
		}
		a := attrsOf(waitSpans(t, exp, 1)[0])
		wantChunks := map[bool]int64{false: 3, true: 0}[callerAsks]
		if g := a["otelitl.chunk.count"].AsInt64(); g != wantChunks || a["error.type"].AsString() != "" {
			t.Errorf("caller asks %v: %d chunks (want %d), error.type %q", callerAsks, g, wantChunks, a["error.type"].AsString())
		}
		plain.CloseIdleConnections()
		c.CloseIdleConnections()
	}
}

// TestAttackTrailers: a chunked stream with trailers: the caller gets the trailers and the bytes,
// the span is complete.
func TestAttackTrailers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Trailer", "X-Usage")
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range strings.SplitAfter(threeChunks, "\n\n") {
			_, _ = io.WriteString(w, ev)
			w.(http.Flusher).Flush()
		}
		w.Header().Set("X-Usage", "42")
		w.Header().Set(http.TrailerPrefix+"X-Late", "yes")
	}))
	defer srv.Close()
	c, exp := tracedOver(t, &http.Transport{})
	defer c.CloseIdleConnections()
	res, got, err := post(context.Background(), t, c, srv.URL+"/v1/chat/completions", chatReq)
	if err != nil || string(got) != threeChunks || res.TransferEncoding == nil {
		t.Fatalf("%q %v %v", got, err, res.TransferEncoding)
	}
	if res.Trailer.Get("X-Usage") != "42" || res.Trailer.Get("X-Late") != "yes" {
		t.Errorf("trailers %v", res.Trailer)
	}
	a := attrsOf(waitSpans(t, exp, 1)[0])
	if a["otelitl.chunk.count"].AsInt64() != 3 || a["error.type"].AsString() != "" {
		t.Errorf("span %v", a)
	}
}

// TestAttackConcurrent: one transport shared by 200 goroutines at once, over HTTP/1.1 and HTTP/2,
// each call doing something else with its stream: reading it whole, closing it early, cancelling
// its context while another goroutine reads, closing it while another goroutine reads. Every call
// gets one span with the right name and its bytes unchanged; nothing leaks. Run with -race.
func TestAttackConcurrent(t *testing.T) {
	const n = 200
	long := strings.Repeat("data: "+chunkA+"\n\n", 20) + stopDone
	for _, h2 := range []bool{false, true} {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			for i, ev := range strings.SplitAfter(long, "\n\n") {
				if _, err := io.WriteString(w, ev); err != nil {
					return
				}
				if i%5 == 0 {
					w.(http.Flusher).Flush()
					time.Sleep(time.Millisecond)
				}
			}
		}))
		if h2 {
			srv.EnableHTTP2 = true
			srv.StartTLS()
		} else {
			srv.Start()
		}
		base := baseFor(srv)
		c, exp := tracedOver(t, base)
		check := wraptest.NoLeak(t, c)
		var wg sync.WaitGroup
		errs := make(chan string, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(chatReq))
				res, err := c.Do(req)
				if err != nil {
					errs <- err.Error()
					return
				}
				switch i % 4 {
				case 0: // whole
					b, err := io.ReadAll(res.Body)
					if err != nil || string(b) != long {
						errs <- fmt.Sprintf("whole: %d bytes, %v", len(b), err)
					}
				case 1: // close after a few bytes
					_, _ = io.ReadFull(res.Body, make([]byte, 1+rand.IntN(200)))
					res.Body.Close()
					return
				case 2: // cancel while another goroutine reads
					go func() { time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond); cancel() }()
					_, _ = io.Copy(io.Discard, res.Body)
				case 3: // close while another goroutine reads
					done := make(chan struct{})
					go func() { defer close(done); _, _ = io.Copy(io.Discard, res.Body) }()
					time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
					res.Body.Close()
					<-done
				}
				res.Body.Close()
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		spans := waitSpans(t, exp, n)
		for _, s := range spans {
			a := attrsOf(s)
			switch et := a["error.type"].AsString(); et {
			case "", "cancelled":
			default:
				t.Errorf("error.type %q", et)
			}
			if a["gen_ai.request.model"].AsString() != "m" {
				t.Errorf("model %q", a["gen_ai.request.model"].AsString())
			}
		}
		srv.Close()
		check()
	}
}
