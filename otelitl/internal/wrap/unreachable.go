package wrap

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"

	"github.com/otelitl/itl/itlconv"
)

// Unreachable gives err, the error of a request that got no response (a RoundTripper's error), an
// error.type that says why, from a fixed set (see UnreachableType), where otelitl would name it by
// its Go type: *net.OpError for a refused connection and an unresolved name alike. The error
// itself is kept (errors.Is and errors.As reach it). A context's end is left as it is, for End to
// name cancelled or timeout, and so is an error that names its own type (an ErrorType method in
// its chain returning a value).
func Unreachable(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var typed interface{ ErrorType() string }
	if errors.As(err, &typed) && typed.ErrorType() != "" {
		return err
	}
	return &TypedError{Err: err, Type: UnreachableType(err)}
}

// NoResponse is Unreachable for an SDK wrapper: it names err only when it is an http.Client's error
// (a *url.Error in its chain: the SDK's request got no response), and leaves any other error (an API
// error, one the SDK made itself) as it is. The transport under the client failed the same way as
// the one under httpitl's transport, and is named the same.
func NoResponse(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	return Unreachable(err)
}

// UnreachableType names the failure of a request that got no response, from its error's type and
// never from its message, which names the address: dns_error for a name that did not resolve
// (whatever the resolver's own failure), connection_refused, timeout for a deadline that passed
// (dialing, the TLS handshake, the response's headers), tls_error for a TLS handshake that failed
// (a certificate not trusted, a server without TLS), else connection_error (the connection reset,
// or closed before the server answered).
//
// A DNS lookup that timed out is one of two failures, told apart by the error's chain, not its
// IsTimeout. Cut by the caller's deadline (a context's, http.Client's Timeout, the dialer's
// Timeout, which net makes a context deadline), the *net.DNSError wraps net's "i/o timeout", which
// Is context.DeadlineExceeded: Unreachable leaves such an error as it is, and End names it
// "timeout", as a deadline passing while dialing or waiting for the headers is. The resolver's own
// timeout (no DNS server answered within resolv.conf's timeout and attempts) wraps nothing: it stays
// dns_error. The conventions' error.type asks for a low-cardinality value that says what went
// wrong, and "timeout" here says that a deadline the caller set passed (its fix: the deadline, or
// the server's speed); a resolver that never answers is a failure to resolve the name, whose fix
// is the DNS setup, whatever the caller's deadlines, and is counted with the other names that did
// not resolve.
func UnreachableType(err error) string {
	var (
		dns      *net.DNSError
		timeout  interface{ Timeout() bool }
		record   tls.RecordHeaderError
		alert    tls.AlertError
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &dns):
		return itlconv.ErrorTypeDNS
	case errors.Is(err, syscall.ECONNREFUSED):
		return itlconv.ErrorTypeConnectionRefused
	case errors.As(err, &timeout) && timeout.Timeout(), errors.Is(err, os.ErrDeadlineExceeded):
		return itlconv.ErrorTypeTimeout
	case errors.As(err, &record), errors.As(err, &alert), errors.As(err, &verify),
		errors.As(err, &unknown), errors.As(err, &hostname), errors.As(err, &invalid),
		// net/http's own error for a plain HTTP answer to a TLS handshake, which has no type.
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return itlconv.ErrorTypeTLS
	}
	return itlconv.ErrorTypeConnection
}
