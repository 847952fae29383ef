package httpitl_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestAttackRedirect: a 307 or 308 to the real endpoint. With a body the client can re-read, both
// hops get it whole and the caller its stream; with one it cannot, the caller gets the redirect,
// as without httpitl, and the upstream got the body whole. Each hop is a span: the redirect's
// without chunks (and, today, without error.type: whether a redirect is a generation at all is
// open), the stream's with its chunks.
func TestAttackRedirect(t *testing.T) {
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"` + strings.Repeat("p", 300_000) + `"}]}`
	want := sha256.Sum256([]byte(body))
	stream := "data: " + chunkA + "\n\n" + stopDone
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		var mu sync.Mutex
		var seen []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			sum := sha256.Sum256(b)
			mu.Lock()
			seen = append(seen, r.URL.Path+map[bool]string{true: " whole", false: " cut"}[sum == want])
			mu.Unlock()
			if r.URL.Path == "/old/v1/chat/completions" {
				http.Redirect(w, r, "/v1/chat/completions", code)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, stream)
		}))
		defer srv.Close()
		for _, rewindable := range []bool{true, false} {
			mu.Lock()
			seen = nil
			mu.Unlock()
			c, exp := tracedOver(t, &http.Transport{})
			var rd io.Reader = strings.NewReader(body)
			if !rewindable {
				rd = struct{ io.Reader }{bytes.NewReader([]byte(body))}
			}
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/old/v1/chat/completions", rd)
			req.ContentLength = int64(len(body))
			res, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(res.Body)
			res.Body.Close()
			c.CloseIdleConnections()
			mu.Lock()
			hops := strings.Join(seen, ", ")
			mu.Unlock()
			spans := waitSpans(t, exp, map[bool]int{true: 2, false: 1}[rewindable])
			if rewindable {
				if string(got) != stream || hops != "/old/v1/chat/completions whole, /v1/chat/completions whole" {
					t.Errorf("%d: the caller got %q; the upstream saw %s", code, got, hops)
				}
				a := attrsOf(spans[1])
				if a["otelitl.chunk.count"].AsInt64() != 1 || a["error.type"].AsString() != "" || a["gen_ai.request.model"].AsString() != "m" {
					t.Errorf("%d: the stream's span: %v", code, spans[1].Attributes)
				}
			} else if res.StatusCode != code || hops != "/old/v1/chat/completions whole" {
				t.Errorf("%d: the caller got %d; the upstream saw %s", code, res.StatusCode, hops)
			}
			a := attrsOf(spans[0])
			if a["http.response.status_code"].AsInt64() != int64(code) || a["otelitl.chunk.count"].AsInt64() != 0 {
				t.Errorf("%d: the redirect's span: %v", code, spans[0].Attributes)
			}
		}
	}
}

// TestAttackRequestBodyFails: a request body that fails after some bytes: the caller gets the
// failure as without httpitl, the span ends with it, nothing hangs.
func TestAttackRequestBodyFails(t *testing.T) {
	srv := serveRaw(t, "text/event-stream", stopDone)
	boom := errors.New("boom")
	for _, size := range []int{10, 2 << 20} {
		for _, traced := range []bool{false, true} {
			c := &http.Client{Transport: &http.Transport{}}
			if traced {
				tc, e := tracedOver(t, &http.Transport{})
				c = tc
				defer func() {
					s := waitSpans(t, e, 1)[0]
					if attrsOf(s)["error.type"].AsString() == "" {
						t.Errorf("%d bytes: the span of a request that failed has no error.type", size)
					}
				}()
			}
			rd := io.MultiReader(strings.NewReader(`{"model":"m","stream":true,"x":"`+strings.Repeat("x", size)), iotestErr{boom})
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", rd)
			_, err := c.Do(req)
			if !errors.Is(err, boom) {
				t.Errorf("%d bytes, traced %v: the caller got %v", size, traced, err)
			}
			c.CloseIdleConnections()
		}
	}
}

type iotestErr struct{ err error }

func (e iotestErr) Read([]byte) (int, error) { return 0, e.err }
