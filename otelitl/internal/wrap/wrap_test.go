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
