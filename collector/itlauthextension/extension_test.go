package itlauthextension

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensionauth"
	"go.opentelemetry.io/collector/extension/extensiontest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

const rightToken, wrongToken = "the-right-token", "a-wrong-token"

var clientsID = component.MustNewIDWithName("bearertokenauth", "clients")

// host holds the extensions of a service, as the collector's host does.
type host map[component.ID]component.Component

func (h host) GetExtensions() map[component.ID]component.Component { return h }

// bearerToken is a server authenticator that decides, and words its errors, as contrib's
// bearertokenauth v0.165.1 does (bearertokenauth.go, Authenticate). The real one is not a
// requirement of this module: every collector that builds in the otelitl components would resolve
// it (e2e's TestModuleCutCollector). The e2e tests run the real one in front of this extension, in
// the built collector, and read the reasons it classifies there (TestGatewayRefusesWrongToken).
type bearerToken struct{ token string }

func (bearerToken) Start(context.Context, component.Host) error { return nil }
func (bearerToken) Shutdown(context.Context) error              { return nil }

func (b bearerToken) Authenticate(ctx context.Context, headers map[string][]string) (context.Context, error) {
	auth, ok := headers["Authorization"]
	if !ok {
		auth, ok = headers["authorization"]
	}
	if !ok || len(auth) == 0 {
		return ctx, errors.New("missing or empty authorization header: Authorization")
	}
	if auth[0] != "Bearer "+b.token {
		return ctx, errors.New("provided authorization does not match expected scheme or token")
	}
	return ctx, nil
}

// started returns a host holding bearertokenauth/clients, accepting rightToken.
func started(*testing.T) host {
	return host{clientsID: bearerToken{token: rightToken}}
}

type fixture struct {
	ext    *auth
	reader *sdkmetric.ManualReader
	logs   *observer.ObservedLogs
	now    time.Time
}

// newFixture starts an itl_auth in front of bearertokenauth/clients, with a meter and a
// logger the test reads and a clock it moves.
func newFixture(t *testing.T, cfg *Config) *fixture {
	t.Helper()
	f := &fixture{reader: sdkmetric.NewManualReader(), now: time.Unix(1_700_000_000, 0)}
	core, logs := observer.New(zap.InfoLevel)
	f.logs = logs
	set := extensiontest.NewNopSettings(Type)
	set.Logger = zap.New(core)
	set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(f.reader))
	ext, err := NewFactory().Create(context.Background(), set, cfg)
	require.NoError(t, err)
	f.ext = ext.(*auth)
	f.ext.now = func() time.Time { return f.now }
	require.NoError(t, ext.Start(context.Background(), started(t)))
	t.Cleanup(func() { assert.NoError(t, ext.Shutdown(context.Background())) })
	return f
}

// refusedCounts returns the refused counter's values by "protocol/reason".
func (f *fixture) refusedCounts(t *testing.T) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, f.reader.Collect(context.Background(), &rm))
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "otelcol_extension_itl_auth_refused" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				p, _ := dp.Attributes.Value("protocol")
				r, _ := dp.Attributes.Value("reason")
				out[p.AsString()+"/"+r.AsString()] += dp.Value
			}
		}
	}
	return out
}

// grpcHeaders are the metadata grpc-go's server hands the authenticator (lower-case keys, its
// content-type); httpHeaders what Go's HTTP server does (canonical keys).
func grpcHeaders(token string) map[string][]string {
	h := map[string][]string{"content-type": {"application/grpc"}, ":authority": {"gateway:4317"}}
	if token != "" {
		h["authorization"] = []string{"Bearer " + token}
	}
	return h
}

func httpHeaders(token string) map[string][]string {
	h := map[string][]string{"Content-Type": {"application/x-protobuf"}}
	if token != "" {
		h["Authorization"] = []string{"Bearer " + token}
	}
	return h
}

// from returns a context holding the client's address, as the receivers' servers put it.
func from(addr string) context.Context {
	ap, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		panic(err)
	}
	return client.NewContext(context.Background(), client.Info{Addr: ap})
}

// TestRefusalsCountedAndLogged sends the extension, in front of bearertokenauth's decisions,
// requests as both receivers' servers hand them over: the accepted ones pass, uncounted and
// unlogged; each refused one is counted by protocol and reason, and returns bearertokenauth's own
// error; the first refusal is logged with the client's address and the fix, the next ones within
// log_interval are not, and the first line after it says how many there were. No line holds a
// token.
func TestRefusalsCountedAndLogged(t *testing.T) {
	cfg := &Config{Authenticator: clientsID, LogInterval: time.Minute, Hint: "set the agent's OTLP_TOKEN to the gateway's GATEWAY_TOKEN"}
	f := newFixture(t, cfg)

	for _, h := range []map[string][]string{grpcHeaders(rightToken), httpHeaders(rightToken)} {
		_, err := f.ext.Authenticate(from("10.0.0.1:1000"), h)
		require.NoError(t, err)
	}
	assert.Empty(t, f.refusedCounts(t), "accepted requests counted")
	assert.Zero(t, f.logs.Len(), "accepted requests logged")

	_, err := f.ext.Authenticate(from("10.0.0.2:2000"), grpcHeaders(wrongToken))
	require.EqualError(t, err, "provided authorization does not match expected scheme or token") // the authenticator's, unchanged
	f.now = f.now.Add(30 * time.Second)
	for _, h := range []map[string][]string{grpcHeaders(""), httpHeaders(wrongToken), httpHeaders("")} {
		_, err := f.ext.Authenticate(from("10.0.0.3:3000"), h)
		require.Error(t, err)
	}
	assert.Equal(t, map[string]int64{"grpc/invalid": 1, "grpc/missing": 1, "http/invalid": 1, "http/missing": 1}, f.refusedCounts(t))

	lines := f.logs.TakeAll()
	require.Len(t, lines, 1, "refusals within log_interval of the first are logged")
	first := lines[0].ContextMap()
	assert.Equal(t, zap.WarnLevel, lines[0].Level)
	assert.Equal(t, "10.0.0.2:2000", first["remote"])
	assert.Equal(t, "grpc", first["protocol"])
	assert.Equal(t, "invalid", first["reason"])
	assert.Equal(t, "bearertokenauth/clients", first["authenticator"])
	assert.Equal(t, int64(0), first["refused_since_last_line"])
	assert.Equal(t, cfg.Hint, first["fix"])
	assert.Equal(t, "1m0s", first["log_interval"], "as written in the config; the collector's encoder writes a zap.Duration as seconds (60)")

	f.now = f.now.Add(30 * time.Second) // a minute after the first line
	_, err = f.ext.Authenticate(from("10.0.0.4:4000"), httpHeaders(""))
	require.EqualError(t, err, "missing or empty authorization header: Authorization")
	lines = f.logs.TakeAll()
	require.Len(t, lines, 1, "the first refusal a log_interval after the last line is logged")
	next := lines[0].ContextMap()
	assert.Equal(t, "10.0.0.4:4000", next["remote"])
	assert.Equal(t, "http", next["protocol"])
	assert.Equal(t, "missing", next["reason"])
	assert.Equal(t, int64(3), next["refused_since_last_line"])
	assert.Equal(t, map[string]int64{"grpc/invalid": 1, "grpc/missing": 1, "http/invalid": 1, "http/missing": 2}, f.refusedCounts(t))

	for _, l := range append([]observer.LoggedEntry{}, f.logs.All()...) {
		for _, v := range l.ContextMap() {
			if s, ok := v.(string); ok && (strings.Contains(s, rightToken) || strings.Contains(s, wrongToken)) {
				t.Errorf("a log line holds a token: %v", l.ContextMap())
			}
		}
	}
}

// TestDefaultFix: without a hint, the line says to send what the authenticator expects, naming it.
func TestDefaultFix(t *testing.T) {
	f := newFixture(t, &Config{Authenticator: clientsID, LogInterval: time.Minute})
	_, err := f.ext.Authenticate(context.Background(), grpcHeaders(wrongToken))
	require.Error(t, err)
	lines := f.logs.TakeAll()
	require.Len(t, lines, 1)
	assert.Equal(t, "the client must send the credentials bearertokenauth/clients expects", lines[0].ContextMap()["fix"])
	assert.Equal(t, "unknown", lines[0].ContextMap()["remote"], "a context without the client's address")
}

// TestLifecycle creates, starts and stops the extension as the collector does, and checks that
// Start refuses an authenticator the service does not have, or one that does not authenticate
// servers' requests, naming the key, the value and the fix.
func TestLifecycle(t *testing.T) {
	factory := NewFactory()
	assert.Equal(t, Type, factory.Type())
	assert.Equal(t, Stability, factory.Stability())
	cfg := factory.CreateDefaultConfig().(*Config)
	cfg.Authenticator = clientsID
	require.NoError(t, componenttest.CheckConfigStruct(cfg))

	create := func(t *testing.T) extension.Extension {
		t.Helper()
		ext, err := factory.Create(context.Background(), extensiontest.NewNopSettings(Type), cfg)
		require.NoError(t, err)
		return ext
	}
	t.Run("started and stopped", func(t *testing.T) {
		ext := create(t)
		assert.Equal(t, []component.ID{clientsID}, ext.(interface{ Dependencies() []component.ID }).Dependencies())
		require.NoError(t, ext.Start(context.Background(), started(t)))
		_, err := ext.(extensionauth.Server).Authenticate(context.Background(), grpcHeaders(rightToken))
		require.NoError(t, err)
		require.NoError(t, ext.Shutdown(context.Background()))
	})
	t.Run("stopped without a start", func(t *testing.T) {
		require.NoError(t, create(t).Shutdown(context.Background()))
	})
	t.Run("no such extension", func(t *testing.T) {
		err := create(t).Start(context.Background(), host{})
		require.EqualError(t, err, "authenticator: bearertokenauth/clients is not an extension of the service; configure it and list it in service.extensions")
	})
	t.Run("not a server authenticator", func(t *testing.T) {
		nf := extensiontest.NewNopFactory()
		nop, err := nf.Create(context.Background(), extensiontest.NewNopSettings(nf.Type()), nf.CreateDefaultConfig())
		require.NoError(t, err)
		err = create(t).Start(context.Background(), host{clientsID: nop})
		require.EqualError(t, err, "authenticator: bearertokenauth/clients does not authenticate servers' requests; name one that does, such as bearertokenauth/clients")
	})
}
