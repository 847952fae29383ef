package urlpass

import (
	"strings"
	"testing"
)

// FuzzRedact: a URL's password, whatever bytes it holds but an @ (a /, ? or # pasted as it is
// among them), is written xxxxx, and the rest of the URL is kept; the one password it cannot tell
// from a port, digits alone before a /, ? or #, is left out (see UserinfoAt).
func FuzzRedact(f *testing.F) {
	f.Add("user", "s3cr3t", "backend.example:4318", "/v1")
	f.Add("user", "s3cr3t#x", "backend.example:4318", "")
	f.Add("u", "a/b?c#d", "[::1]:4318", "/p?q=a:b@c")
	f.Fuzz(func(t *testing.T, user, password, host, path string) {
		if user == "" || strings.ContainsAny(user, ":@/?#") || strings.ContainsAny(password, "@") ||
			host == "" || strings.ContainsAny(host, "@/?#") || (path != "" && path[0] != '/') {
			return
		}
		if i := strings.IndexAny(password, "/?#"); i >= 0 && strings.Trim(password[:i], "0123456789") == "" {
			return // reads as a port: not told
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
