package wrap

import (
	"net/url"
	"strings"
	"testing"

	"github.com/otelitl/itl/itlconv"
)

func TestCode(t *testing.T) {
	for code, want := range map[string]string{
		"overloaded_error":            "overloaded_error",
		"rate-limit.exceeded_2":       "rate-limit.exceeded_2",
		"":                            "fb",
		"two words":                   "fb",
		"quote\"":                     "fb",
		"überlastet":                  "fb",
		strings.Repeat("a", 64):       strings.Repeat("a", 64),
		strings.Repeat("a", 65):       "fb",
		"Invalid prompt: hello there": "fb",
	} {
		if got := Code(code, "fb"); got != want {
			t.Errorf("Code(%q) = %q, want %q", code, got, want)
		}
	}
}

func TestServer(t *testing.T) {
	for raw, want := range map[string]struct {
		host string
		port int
	}{
		"https://api.openai.com/v1": {"api.openai.com", 443},
		"http://localhost:8080":     {"localhost", 8080},
		"http://[::1]/x":            {"::1", 80},
		"":                          {"", 0},
		"/relative/only":            {"", 0},
	} {
		if h, p := ServerOf(raw); h != want.host || p != want.port {
			t.Errorf("ServerOf(%q) = %q, %d; want %q, %d", raw, h, p, want.host, want.port)
		}
	}
	if h, p := Server((*url.URL)(nil)); h != "" || p != 0 {
		t.Errorf("Server(nil) = %q, %d", h, p)
	}
}

func TestErrorTypes(t *testing.T) {
	for err, want := range map[interface{ ErrorType() string }]string{
		closedEarly{}: itlconv.ErrorTypeCancelled,
		incomplete{}:  itlconv.ErrorTypeIncompleteStream,
	} {
		if got := err.ErrorType(); got != want {
			t.Errorf("%T: %q, want %q", err, got, want)
		}
	}
}

// TestErrorObjectType: an error object is named by its first non-empty code, type or status, when
// it is a code; else stream_error, never a fallback to the next member, nor the message.
func TestErrorObjectType(t *testing.T) {
	for raw, want := range map[string]string{
		`{"code":"overloaded","type":"server_error","status":"UNAVAILABLE"}`: "overloaded",
		`{"code":null,"type":"server_error"}`:                                "server_error",
		`{"code":"","type":"","status":"UNAVAILABLE"}`:                       "UNAVAILABLE",
		`{"code":429,"type":"server_error"}`:                                 "429",
		`{"code":1e3}`:                                                       "1e3",
		`{"code":true,"type":"server_error"}`:                                "server_error",
		`{"CODE":"upper"}`:                                                   "upper",
		`{"code":"two words","type":"server_error"}`:                         itlconv.ErrorTypeStreamError,
		`{"code":"` + strings.Repeat("x", 65) + `","type":"server_error"}`:   itlconv.ErrorTypeStreamError,
		`{"message":"overloaded"}`:                                           itlconv.ErrorTypeStreamError,
		`"overloaded"`:                                                       itlconv.ErrorTypeStreamError,
		`["overloaded"]`:                                                     itlconv.ErrorTypeStreamError,
		`null`:                                                               itlconv.ErrorTypeStreamError,
		`{"code":`:                                                           itlconv.ErrorTypeStreamError,
	} {
		if got := ErrorObjectType([]byte(raw)); got != want {
			t.Errorf("ErrorObjectType(%s) = %q, want %q", raw, got, want)
		}
	}
}

// TestCodeValue: a code is read as httpitl reads it, a number as written.
func TestCodeValue(t *testing.T) {
	for raw, want := range map[string]string{
		`"rate_limit_exceeded"`: "rate_limit_exceeded",
		`"server\u005ferror"`:   "server_error",
		`429`:                   "429",
		`1e3`:                   "1e3",
		`-1.5`:                  "-1.5",
		`null`:                  "",
		`true`:                  "",
		`{"code":"c"}`:          "",
		``:                      "",
	} {
		if got := CodeValue([]byte(raw)); got != want {
			t.Errorf("CodeValue(%s) = %q, want %q", raw, got, want)
		}
	}
}
