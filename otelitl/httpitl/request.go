package httpitl

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
)

// requestFields are what is read from a request body: the model and whether a stream was asked
// for. Nothing else of the body (the prompt) is kept.
type requestFields struct {
	model     string
	stream    bool
	hasStream bool
}

// scanRequest reads the top-level "model" and "stream" members of the JSON object at the start of
// b, which may be cut short. Other members are skipped without being decoded.
func scanRequest(b []byte) requestFields {
	var f requestFields
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return f
	}
	i++
	for {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != '"' {
			return f
		}
		end := stringEnd(b, i)
		if end < 0 {
			return f
		}
		key := b[i : end+1]
		i = skipSpace(b, end+1)
		if i >= len(b) || b[i] != ':' {
			return f
		}
		i = skipSpace(b, i+1)
		vend := valueEnd(b, i)
		if vend < 0 {
			return f
		}
		val := b[i:vend]
		switch string(key) {
		case `"model"`:
			var s string
			if len(val) < 1024 && json.Unmarshal(val, &s) == nil {
				f.model = s
			}
		case `"stream"`:
			switch string(val) {
			case "true":
				f.stream, f.hasStream = true, true
			case "false":
				f.stream, f.hasStream = false, true
			}
		}
		i = skipSpace(b, vend)
		if i >= len(b) || b[i] != ',' {
			return f
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index of the quote closing the string that starts at b[i], or -1.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		k := bytes.IndexAny(b[j:], "\"\\")
		if k < 0 {
			return -1
		}
		j += k
		if b[j] == '\\' {
			j += 2
			continue
		}
		return j
	}
	return -1
}

// valueEnd returns the index just past the JSON value starting at b[i], or -1 when it is cut off.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		if e := stringEnd(b, i); e >= 0 {
			return e + 1
		}
		return -1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := stringEnd(b, j)
				if e < 0 {
					return -1
				}
				j = e
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	for j := i; j < len(b); j++ {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
	}
	return -1
}

// peekRequest reads the fields of req's body, at most limit bytes of it, and returns the request to
// send: req itself when the body was read from a copy (GetBody) or is empty, else a shallow copy
// whose body replays the bytes read and then the rest, with ContentLength unchanged and GetBody set
// when the whole body was read.
func peekRequest(req *http.Request, limit int) (*http.Request, requestFields) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, requestFields{}
	}
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			b, _ := io.ReadAll(io.LimitReader(rc, int64(limit)))
			_ = rc.Close()
			return req, scanRequest(b)
		}
	}
	buf := make([]byte, 0, min(limit, max(int(req.ContentLength), 512)))
	var err error
	for len(buf) < limit && err == nil {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		var n int
		n, err = req.Body.Read(buf[len(buf):min(cap(buf), limit)])
		buf = buf[:len(buf)+n]
	}
	r2 := new(http.Request)
	*r2 = *req
	whole := err == io.EOF
	switch {
	case whole:
		r2.Body = &replayBody{Reader: bytes.NewReader(buf), closer: req.Body}
		r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf)), nil }
	case err != nil:
		// The body failed: the transport must see the same failure after the bytes read.
		r2.Body = &replayBody{Reader: io.MultiReader(bytes.NewReader(buf), errReader{err}), closer: req.Body}
	default:
		r2.Body = &replayBody{Reader: io.MultiReader(bytes.NewReader(buf), req.Body), closer: req.Body}
	}
	return r2, scanRequest(buf)
}

type replayBody struct {
	io.Reader
	closer io.Closer
}

func (b *replayBody) Close() error { return b.closer.Close() }

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
