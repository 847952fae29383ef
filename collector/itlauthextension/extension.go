package itlauthextension

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensionauth"
	"go.opentelemetry.io/collector/extension/extensioncapabilities"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
)

// The values of the refused counter's attributes.
const (
	protocolGRPC = "grpc"
	protocolHTTP = "http"
	// reasonMissing: the request had no credentials at all (bearertokenauth: "missing or empty
	// authorization header"); reasonInvalid: it had some, and the authenticator refused them.
	reasonMissing = "missing"
	reasonInvalid = "invalid"
)

// auth is the itl_auth extension.
type auth struct {
	cfg    *Config
	logger *zap.Logger
	now    func() time.Time

	refused metric.Int64Counter
	// attrs holds the counter's attribute sets, made once: [protocol][reason].
	attrs map[[2]string]metric.AddOption

	inner extensionauth.Server // set at Start

	mu         sync.Mutex
	lastLine   time.Time // when the last line was logged; zero before the first
	suppressed int64     // refusals since the last line, not logged
}

var (
	_ extensionauth.Server            = (*auth)(nil)
	_ extensioncapabilities.Dependent = (*auth)(nil)
)

func newAuth(set extension.Settings, cfg *Config) (*auth, error) {
	refused, err := set.MeterProvider.Meter(ScopeName).Int64Counter("otelcol_extension_itl_auth_refused",
		metric.WithDescription("Requests the authenticator refused (gRPC Unauthenticated, HTTP 401), by protocol and reason (missing: no credentials; invalid: wrong ones)."),
		metric.WithUnit("{request}"))
	if err != nil {
		return nil, err
	}
	a := &auth{cfg: cfg, logger: set.Logger, now: time.Now, refused: refused, attrs: map[[2]string]metric.AddOption{}}
	for _, p := range []string{protocolGRPC, protocolHTTP} {
		for _, r := range []string{reasonMissing, reasonInvalid} {
			a.attrs[[2]string{p, r}] = metric.WithAttributeSet(attribute.NewSet(attribute.String("protocol", p), attribute.String("reason", r)))
		}
	}
	return a, nil
}

// Dependencies makes the collector start the authenticator before this extension.
func (a *auth) Dependencies() []component.ID { return []component.ID{a.cfg.Authenticator} }

// Start finds the authenticator this extension passes the decisions of.
func (a *auth) Start(_ context.Context, host component.Host) error {
	ext, ok := host.GetExtensions()[a.cfg.Authenticator]
	if !ok {
		return fmt.Errorf("authenticator: %s is not an extension of the service; configure it and list it in service.extensions", a.cfg.Authenticator)
	}
	inner, ok := ext.(extensionauth.Server)
	if !ok {
		return fmt.Errorf("authenticator: %s does not authenticate servers' requests; name one that does, such as bearertokenauth/clients", a.cfg.Authenticator)
	}
	a.inner = inner
	return nil
}

// Shutdown does nothing: the authenticator is the collector's to stop.
func (*auth) Shutdown(context.Context) error { return nil }

// Authenticate returns the authenticator's decision unchanged, and counts and logs a refusal.
func (a *auth) Authenticate(ctx context.Context, headers map[string][]string) (context.Context, error) {
	out, err := a.inner.Authenticate(ctx, headers)
	if err != nil {
		a.refuse(ctx, headers, err)
	}
	return out, err
}

// refuse counts a refused request and logs it, unless a line was logged within log_interval.
func (a *auth) refuse(ctx context.Context, headers map[string][]string, err error) {
	protocol, reason := protocolOf(headers), reasonOf(err)
	a.refused.Add(ctx, 1, a.attrs[[2]string{protocol, reason}])

	now := a.now()
	a.mu.Lock()
	if !a.lastLine.IsZero() && now.Sub(a.lastLine) < a.cfg.LogInterval {
		a.suppressed++
		a.mu.Unlock()
		return
	}
	suppressed := a.suppressed
	a.lastLine, a.suppressed = now, 0
	a.mu.Unlock()

	remote := "unknown"
	if addr := client.FromContext(ctx).Addr; addr != nil {
		remote = addr.String()
	}
	fix := a.cfg.Hint
	if fix == "" {
		fix = "the client must send the credentials " + a.cfg.Authenticator.String() + " expects"
	}
	a.logger.Warn("Refused a request: its credentials are not ones the authenticator accepts; the client's data is dropped (not retried)",
		zap.String("remote", remote),
		zap.String("protocol", protocol),
		zap.String("reason", reason),
		zap.String("authenticator", a.cfg.Authenticator.String()),
		zap.String("error", err.Error()), // the authenticator's message, which names no token
		zap.Int64("refused_since_last_line", suppressed),
		zap.Stringer("log_interval", a.cfg.LogInterval),
		zap.String("fix", fix))
}

// protocolOf tells the gRPC receiver's requests from the HTTP one's by their headers: gRPC's
// metadata holds the lower-case content-type application/grpc (grpc-go's server refuses a call
// without it); Go's HTTP server holds the canonical Content-Type.
func protocolOf(headers map[string][]string) string {
	for _, v := range headers["content-type"] {
		if strings.HasPrefix(v, "application/grpc") {
			return protocolGRPC
		}
	}
	return protocolHTTP
}

// reasonOf tells a request without credentials from one with wrong ones by the authenticator's
// message: bearertokenauth says "missing or empty authorization header" (the e2e tests read the
// reasons with the real extension in the built collector, so that a change of wording fails there).
func reasonOf(err error) string {
	if strings.Contains(strings.ToLower(err.Error()), "missing") {
		return reasonMissing
	}
	return reasonInvalid
}
