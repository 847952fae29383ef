package urlpass

import (
	"strings"
	"testing"
)

// FuzzRedact: a URL's password, whatever bytes it holds but an @ (a /, ? or # pasted as it is
// among them), is written xxxxx, and the rest of the URL is kept; a user and password it cannot
// tell from a host and port before a /, ? or # (digits alone after the colon; brackets around an
// IPv6 address) are left out (see UserinfoAt).
func FuzzRedact(f *testing.F) {
	f.Add("user", "s3cr3t", "backend.example:4318", "/v1")
	f.Add("user", "s3cr3t#x", "backend.example:4318", "")
	f.Add("u", "a/b?c#d", "[::1]:4318", "/p?q=a:b@c")
	f.Fuzz(func(t *testing.T, user, password, host, path string) {
		if user == "" || strings.ContainsAny(user, ":@/?#") || strings.ContainsAny(password, "@") ||
			host == "" || strings.ContainsAny(host, "@/?#") || (path != "" && path[0] != '/') {
			return
		}
		if i := strings.IndexAny(password, "/?#"); i >= 0 && hostPort(user+":"+password[:i]) {
			// What comes before the /, ? or # reads as a host and port (user:123#x@h, digits
			// alone; [:::]#x@h, an IPv6 address): a URL of its own, not told.
			return
		}
		if i := strings.IndexAny(path, "?#"); i >= 0 && strings.Contains(path[i:], "@") && strings.ContainsAny(password, "/?#") {
			return // an @ further on, after a pasted password: which @ ends it is a guess
		}
		if strings.Contains(path, "@") && strings.ContainsAny(password, "/?#") {
			return
		}
		a := "https://" + user + ":" + password + "@" + host + path
		want := "https://" + user + ":xxxxx@" + host + path
		if got := Redact(a); got != want {
			t.Fatalf("Redact(%q) = %q, want %q", a, got, want)
		}
	})
}
