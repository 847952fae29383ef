package httpitl_test

import (
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/otelitl/itl/itlconv"
)

// volumeServer answers with contentType: head, then filler repeated until n bytes of it were
// written, then tail. It writes from one buffer, so that its own allocations stay small.
func volumeServer(t testing.TB, contentType, head string, filler []byte, n int, tail string) (*httptest.Server, [32]byte) {
	h := sha256.New()
	h.Write([]byte(head))
	for left := n; left > 0; left -= len(filler) {
		h.Write(filler[:min(left, len(filler))])
	}
	h.Write([]byte(tail))
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, head)
		for left := n; left > 0; left -= len(filler) {
			if _, err := w.Write(filler[:min(left, len(filler))]); err != nil {
				return
			}
		}
		_, _ = io.WriteString(w, tail)
	}))
	t.Cleanup(srv.Close)
	return srv, sum
}

// readHashed posts body to url with c and returns the sha256 of the response body.
func readHashed(t testing.TB, c *http.Client, url, body string) [32]byte {
	res, err := c.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(h, res.Body, make([]byte, 32<<10)); err != nil {
		t.Fatal(err)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

const (
	chunkA   = `{"choices":[{"index":0,"delta":{"content":"a"}}]}`
	stopDone = `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
)

// TestAttackHugeEventsMemory: a stream with one event of many MB and no line end in it (an SSE data
// line, field name, comment or event name; an NDJSON line; a Gemini array element) passes whole to
// the caller, the events after it are still read, and what httpitl allocates meanwhile stays near
// its bound (1 MiB an event), not the size of the stream.
func TestAttackHugeEventsMemory(t *testing.T) {
	size := 100 << 20
	if raceOn {
		size = 24 << 20
	}
	x := []byte(strings.Repeat("x", 64<<10))
	after := "data: " + chunkA + "\n\ndata: " + chunkA + "\n\n" + stopDone
	for _, tc := range []struct {
		name, ct, path, body, head, tail string
		size, chunks                     int
	}{
		{"SSE data line", "text/event-stream", "/v1/chat/completions", chatReq, "data: {\"a\":\"", "\"}\n\n" + after, size, 2},
		{"SSE data line never ended", "text/event-stream", "/v1/chat/completions", chatReq, "data: " + chunkA + "\n\ndata: ", "", size, 1},
		{"SSE field name", "text/event-stream", "/v1/chat/completions", chatReq, "", "\n\n" + after, size / 4, 2},
		{"SSE comment", "text/event-stream", "/v1/chat/completions", chatReq, ":", "\n\n" + after, size / 4, 2},
		{"SSE event name", "text/event-stream", "/v1/chat/completions", chatReq, "event: ", "\n" + after, size / 4, 2},
		{"NDJSON line", "application/x-ndjson", "/api/chat", `{"model":"m"}`, `{"message":{"content":"`, `"}}` + "\n" +
			`{"message":{"content":"a"},"done":false}` + "\n" + `{"done":true,"eval_count":2}` + "\n", size / 4, 1},
		{"Gemini array element", "application/json", "/v1beta/models/g:streamGenerateContent", `{}`, `[{"candidates":[{"content":{"parts":[{"text":"`, `"}]}}]},` +
			`{"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"STOP"}]}]`, size / 4, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, want := volumeServer(t, tc.ct, tc.head, x, tc.size, tc.tail)
			c, exp := tracedOver(t, &http.Transport{})
			var got [32]byte
			alloc := allocated(func() { got = readHashed(t, c, srv.URL+tc.path, tc.body) })
			c.CloseIdleConnections()
			if got != want {
				t.Fatal("the caller got other bytes than the server sent")
			}
			a := attrsOf(waitSpans(t, exp, 1)[0])
			if n := a["otelitl.chunk.count"].AsInt64(); n != int64(tc.chunks) {
				t.Errorf("%d chunks, want %d", n, tc.chunks)
			}
			if tc.tail == "" {
				if g := a["error.type"].AsString(); g != "incomplete_stream" {
					t.Errorf("error.type %q, want incomplete_stream", g)
				}
			} else if g := a["error.type"].AsString(); g != "" {
				t.Errorf("error.type %q, want none", g)
			}
			// The client, the server and httpitl share the process: 16 MiB is room for their
			// buffers and a 1 MiB event's growth, far below the stream's size.
			if alloc > 16<<20 {
				t.Errorf("%d MiB allocated for a %d MiB stream", alloc>>20, tc.size>>20)
			}
			t.Logf("%d KiB allocated for %d MiB", alloc>>10, tc.size>>20)
		})
	}
}

// TestAttackMillionsOfEvents: a million tiny content events are each read and counted, the
// timeline keeps its cap (2^18 arrivals, the rest counted as dropped), the caller gets every byte,
// and memory stays near the cap's, not the stream's.
func TestAttackMillionsOfEvents(t *testing.T) {
	n := 1 << 20
	if raceOn {
		n = 300_000
	}
	ev := []byte(strings.Repeat("data:"+chunkA+"\n\n", 1024))
	srv, want := volumeServer(t, "text/event-stream", "", ev, n/1024*len(ev), stopDone)
	n = n / 1024 * 1024
	c, exp := tracedOver(t, &http.Transport{})
	var got [32]byte
	alloc := allocated(func() { got = readHashed(t, c, srv.URL+"/v1/chat/completions", chatReq) })
	c.CloseIdleConnections()
	if got != want {
		t.Fatal("the caller got other bytes than the server sent")
	}
	a := attrsOf(waitSpans(t, exp, 1)[0])
	if g := a["otelitl.chunk.count"].AsInt64(); g != int64(n) {
		t.Errorf("%d chunks, want %d", g, n)
	}
	recorded := min(n, 1<<18)
	if g := len(a[itlconv.ChunkOffsetsKey].AsInt64Slice()); g != recorded {
		t.Errorf("%d arrivals recorded, want %d", g, recorded)
	}
	if g := a[itlconv.ChunkDroppedKey].AsInt64(); g != int64(n-recorded) {
		t.Errorf("%d chunks dropped, want %d", g, n-recorded)
	}
	if g := a["error.type"].AsString(); g != "" {
		t.Errorf("error.type %q", g)
	}
	// 2^18 offsets of 8 bytes, their copy into the span in microseconds: some 6 MiB, and buffers.
	if alloc > 32<<20 {
		t.Errorf("%d MiB allocated for %d events", alloc>>20, n)
	}
	t.Logf("%d KiB allocated for %d events", alloc>>10, n)
}
