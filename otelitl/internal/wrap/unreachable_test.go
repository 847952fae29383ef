package wrap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/otelitl/itl/otelitl"
)

type named struct{}

func (named) Error() string     { return "named" }
func (named) ErrorType() string { return "mine" }

// TestUnreachable: the error of a request without a response is named from the fixed set; a
// context's end and an error that names its own type are left as they are, and NoResponse names
// only an http.Client's error (*url.Error).
func TestUnreachable(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	clientErr := func(err error) error { return &url.Error{Op: "Post", URL: "http://x", Err: err} }
	for _, tc := range []struct {
		name       string
		err        error
		unreach    string // otelitl.ErrorType of Unreachable(err)
		noResponse string // of NoResponse(err)
	}{
		{"refused", refused, "connection_refused", "*net.OpError"},
		{"refused, from a client", clientErr(refused), "connection_refused", "connection_refused"},
		{"unresolved", clientErr(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", IsNotFound: true}}), "dns_error", "dns_error"},
		{"deadline", clientErr(os.ErrDeadlineExceeded), "timeout", "timeout"},
		// The resolver's own timeout (no DNS server answered, IsTimeout, nothing wrapped): the name did
		// not resolve. A lookup cut by the caller's deadline (a context's, the dialer's) wraps it, as
		// net's resolver does (the "i/o timeout" its mapErr makes of the context's end, which Is
		// context.DeadlineExceeded): timeout.
		{"resolver timed out", clientErr(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "i/o timeout", IsTimeout: true, IsTemporary: true}}),
			"dns_error", "dns_error"},
		{"lookup cut by the deadline", clientErr(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "i/o timeout", IsTimeout: true,
			UnwrapErr: dnsDeadline(t)}}), "timeout", "timeout"},
		{"other", clientErr(errors.New("EOF")), "connection_error", "connection_error"},
		{"cancelled", clientErr(context.Canceled), "cancelled", "cancelled"},
		{"context deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), "timeout", "timeout"},
		{"names its type", clientErr(named{}), "mine", "mine"},
		{"an SDK's own error", errors.New("marshal"), "connection_error", "*errors.errorString"},
	} {
		if got := otelitl.ErrorType(Unreachable(tc.err)).Value.AsString(); got != tc.unreach {
			t.Errorf("%s: Unreachable names it %q, want %q", tc.name, got, tc.unreach)
		}
		if got := otelitl.ErrorType(NoResponse(tc.err)).Value.AsString(); got != tc.noResponse {
			t.Errorf("%s: NoResponse names it %q, want %q", tc.name, got, tc.noResponse)
		}
		if !errors.Is(Unreachable(tc.err), tc.err) {
			t.Errorf("%s: Unreachable hides the error", tc.name)
		}
	}
	if Unreachable(nil) != nil || NoResponse(nil) != nil {
		t.Error("a nil error named")
	}
}

// dnsDeadline returns the error net's resolver wraps in a DNSError when the lookup's context
// deadline passes: a real lookup, on a context whose deadline has passed, by a resolver whose DNS
// server never answers (its Dial waits until the lookup is given up), so that the deadline is
// always what ends it.
func dnsDeadline(t *testing.T) error {
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel()
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	_, err := r.LookupHost(ctx, "otelitl-unreachable-test.example")
	var dns *net.DNSError
	if !errors.As(err, &dns) || dns.UnwrapErr == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a lookup past its deadline: %#v", err)
	}
	return dns.UnwrapErr
}
