// Package urlpass finds the password in a URL that url.Parse may not read, so that errors and
// printed configurations never show it: a password pasted with a /, ? or # that is not
// percent-encoded (user:pa#ss@host) ends the host for url.Parse, whose own error then quotes it.
// otelcol-itl (its errors, notes and print-config) and otelitl-proxy (its upstreams) share it, so
// that one URL is read alike by both.
package urlpass

import (
	"net"
	"strings"
)

// Redact returns the URL a with the password in it, if any, written xxxxx, as url.URL.Redacted
// does, for one url.Parse cannot read. The authority ends at the path, the query or the fragment:
// an @ in a query (https://host?next=a:b@c) is no password's; but a password pasted with a /, ?
// or # in it (user:pa#ss@host) is one's (see UserinfoAt).
func Redact(a string) string {
	rest := a
	if _, after, ok := strings.Cut(a, "://"); ok {
		rest = after
	}
	at, _ := UserinfoAt(rest)
	if at < 0 {
		return a
	}
	user, _, hasPassword := strings.Cut(rest[:at], ":")
	if !hasPassword {
		return a
	}
	start := len(a) - len(rest)
	return a[:start] + user + ":xxxxx" + a[start+at:]
}

// Pasted reports whether URL a has a user or password holding a /, ? or # that is not
// percent-encoded (see UserinfoAt): url.Parse ended its host there, and the fix is to
// percent-encode them.
func Pasted(a string) bool {
	rest := a
	if _, after, ok := strings.Cut(a, "://"); ok {
		rest = after
	}
	at, pasted := UserinfoAt(rest)
	return at >= 0 && pasted
}

// UserinfoAt returns where the user information of rest, a URL after its scheme:// or an address,
// ends: the index of its @, or -1 without one; and whether the user information holds a /, ? or #,
// which a URL's authority cannot (url.Parse ends the host there). The authority ends at the first
// of them, so that an @ in a path or a query is no user's: https://host?next=a:b@c. But when what
// comes before that is no host[:port] (user:pa, of a password pasted as it is, user:pa#ss@host,
// whose "port" is no number) and an @ follows, the user information runs to the last @ before the
// host that follows it: every error and print-config would otherwise show the password. A user
// and password whose part before the / ? or # reads as a host and port is not told: digits alone
// after the colon (user:123#ss@host), or brackets around an IPv6 address ([::]#ss@host).
func UserinfoAt(rest string) (at int, pasted bool) {
	end := len(rest)
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		end = i
	}
	authority := rest[:end]
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		return at, false
	}
	if hostPort(authority) {
		return -1, false
	}
	first := strings.IndexByte(rest[end:], '@')
	if first < 0 {
		return -1, false
	}
	first += end
	host := len(rest)
	if i := strings.IndexAny(rest[first:], "/?#"); i >= 0 {
		host = first + i
	}
	return strings.LastIndex(rest[:host], "@"), true
}

// hostPort reports whether a could be a URL's host with its port or without: a name or an IPv4
// address, or an IPv6 address in brackets (with a zone or without), then a colon and digits (none,
// for an empty port) or nothing. Brackets around anything else ([:], of a user "[" with a
// password "]#" pasted) are no host.
func hostPort(a string) bool {
	if strings.HasPrefix(a, "[") {
		i := strings.IndexByte(a, ']')
		if i < 0 {
			return false
		}
		ip, _, _ := strings.Cut(a[1:i], "%")
		if net.ParseIP(ip) == nil {
			return false
		}
		a = a[i+1:]
		if a == "" {
			return true
		}
		if a[0] != ':' {
			return false
		}
	}
	_, port, found := strings.Cut(a, ":")
	return !found || strings.Trim(port, "0123456789") == ""
}
