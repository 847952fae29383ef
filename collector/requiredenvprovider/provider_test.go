package requiredenvprovider

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func retrieve(t *testing.T, uri string) (any, error) {
	t.Helper()
	p := NewFactory().Create(confmap.ProviderSettings{Logger: zap.NewNop()})
	r, err := p.Retrieve(context.Background(), uri, nil)
	if err != nil {
		return nil, err
	}
	return r.AsRaw()
}

func TestRetrieve(t *testing.T) {
	t.Setenv("RE_SET", "value")
	t.Setenv("RE_EMPTY", "")
	t.Setenv("RE_BLANK", "  ")
	t.Setenv("RE_NUM", "42")
	for _, c := range []struct {
		uri     string
		want    any
		wantErr string
	}{
		{uri: "env:RE_SET", want: "value"},
		{uri: "env:RE_NUM", want: 42}, // YAML typing, as envprovider
		{uri: "env:RE_UNSET_X", want: nil},
		{uri: "env:RE_UNSET_X:-fallback", want: "fallback"},
		{uri: "env:RE_UNSET_X:-", want: ""},
		{uri: "env:RE_EMPTY:-fallback", want: "fallback"}, // set but empty: the default applies, as in a shell
		{uri: "env:RE_EMPTY:-", want: ""},
		{uri: "env:RE_BLANK:-fallback", want: "fallback"}, // white space counts as empty, as for ":?"
		{uri: "env:RE_SET:-fallback", want: "value"},
		{uri: "env:RE_SET:?needed", want: "value"},
		{uri: "env:RE_UNSET_X:?set it to the backend token", wantErr: "environment variable RE_UNSET_X is unset: set it to the backend token"},
		{uri: "env:RE_EMPTY:?set it", wantErr: "environment variable RE_EMPTY is empty: set it"},
		{uri: "env:RE_BLANK:?set it", wantErr: "environment variable RE_BLANK is empty: set it"},
		{uri: "env:RE_UNSET_X:?", wantErr: "environment variable RE_UNSET_X is unset: this configuration needs it"},
		{uri: "env:RE_UNSET_X:-a:?b", want: "a:?b"}, // the first operator decides
		{uri: "env:1BAD", wantErr: "invalid name"},
		{uri: "file:x", wantErr: "not supported"},
	} {
		got, err := retrieve(t, c.uri)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want one containing %q", c.uri, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s = %#v, %v; want %#v", c.uri, got, err, c.want)
		}
	}
}

// TestEmptyTakesDefault: a variable set to "" takes its default, as in a shell, and an info line
// names it and the default; a variable that is unset or set gets no such line.
func TestEmptyTakesDefault(t *testing.T) {
	t.Setenv("RE_EMPTY", "")
	t.Setenv("RE_SET", "value")
	for _, c := range []struct {
		uri, want string
		logged    bool
	}{
		{"env:RE_EMPTY:-127.0.0.1:4317", "127.0.0.1:4317", true},
		{"env:RE_SET:-127.0.0.1:4317", "value", false},
		{"env:RE_UNSET_X:-127.0.0.1:4317", "127.0.0.1:4317", false},
	} {
		core, logs := observer.New(zapcore.InfoLevel)
		p := NewFactory().Create(confmap.ProviderSettings{Logger: zap.New(core)})
		r, err := p.Retrieve(context.Background(), c.uri, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.uri, err)
		}
		if got, _ := r.AsRaw(); got != c.want {
			t.Errorf("%s = %#v, want %q", c.uri, got, c.want)
		}
		logged := logs.FilterMessageSnippet("its default is used").Len() == 1
		if logged != c.logged {
			t.Errorf("%s: logged %v, want %v (logs %v)", c.uri, logged, c.logged, logs.All())
		}
		if logged {
			if f := logs.All()[0].ContextMap(); f["name"] != "RE_EMPTY" || f["default"] != "127.0.0.1:4317" {
				t.Errorf("%s: the line's fields %v, want the name and the default", c.uri, f)
			}
		}
	}
}

// yamlProvider serves its YAML for any URI of the scheme "yaml".
type yamlProvider string

func (p yamlProvider) Retrieve(context.Context, string, confmap.WatcherFunc) (*confmap.Retrieved, error) {
	return confmap.NewRetrievedFromYAML([]byte(p))
}

func (yamlProvider) Scheme() string { return "yaml" }

func (yamlProvider) Shutdown(context.Context) error { return nil }

// resolve resolves yaml with the provider pair of NewFactories.
func resolve(t *testing.T, yaml string) (*confmap.Conf, error) {
	t.Helper()
	env, conv := NewFactories()
	r, err := confmap.NewResolver(confmap.ResolverSettings{
		URIs: []string{"yaml:config"},
		ProviderFactories: []confmap.ProviderFactory{
			confmap.NewProviderFactory(func(confmap.ProviderSettings) confmap.Provider { return yamlProvider(yaml) }),
			env,
		},
		ConverterFactories: []confmap.ConverterFactory{conv},
		DefaultScheme:      "env",
	})
	if err != nil {
		t.Fatal(err)
	}
	return r.Resolve(context.Background())
}

// TestEveryMissingNamedAtOnce: with NewFactories, a configuration missing several required
// variables fails naming each once, in the order they are referenced, where NewFactory stops at
// the first; one missing variable gets NewFactory's message; none missing resolves as NewFactory
// does.
func TestEveryMissingNamedAtOnce(t *testing.T) {
	const yaml = `exporters:
  otlphttp:
    endpoint: ${env:RE_URL:?set RE_URL to the backend URL}
    headers: {authorization: "Bearer ${env:RE_TOKEN:?set RE_TOKEN to the token}"}
  tls:
    cert_file: ${env:RE_CERT:?}
    key_file: ${env:RE_CERT:?}
    port: ${env:RE_PORT:-4318}
`
	t.Setenv("RE_URL", "")
	os.Unsetenv("RE_URL")
	t.Setenv("RE_TOKEN", " ")
	t.Setenv("RE_CERT", "")
	os.Unsetenv("RE_CERT")
	_, err := resolve(t, yaml)
	want := "3 environment variables this configuration needs are missing:\n" +
		"  environment variable RE_URL is unset: set RE_URL to the backend URL\n" +
		"  environment variable RE_TOKEN is empty: set RE_TOKEN to the token\n" +
		"  environment variable RE_CERT is unset: this configuration needs it"
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("error %v, want one ending in\n%s", err, want)
	}

	t.Setenv("RE_URL", "http://backend:4318")
	t.Setenv("RE_CERT", "/tls/cert.pem")
	_, err = resolve(t, yaml)
	if err == nil || !strings.HasSuffix(err.Error(), ": environment variable RE_TOKEN is empty: set RE_TOKEN to the token") {
		t.Errorf("one missing: %v", err)
	}

	t.Setenv("RE_TOKEN", "s3cret")
	conf, err := resolve(t, yaml)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{
		"exporters::otlphttp::endpoint":               "http://backend:4318",
		"exporters::otlphttp::headers::authorization": "Bearer s3cret",
		"exporters::tls::cert_file":                   "/tls/cert.pem",
		"exporters::tls::port":                        4318,
	} {
		if got := conf.Get(key); got != want {
			t.Errorf("%s = %#v, want %#v", key, got, want)
		}
	}
}

// TestMissingForgottenAfterReport: one resolver resolving again (as the collector does on a
// reload) reports only what is missing then.
func TestMissingForgottenAfterReport(t *testing.T) {
	env, conv := NewFactories()
	r, err := confmap.NewResolver(confmap.ResolverSettings{
		URIs: []string{"yaml:config"},
		ProviderFactories: []confmap.ProviderFactory{
			confmap.NewProviderFactory(func(confmap.ProviderSettings) confmap.Provider {
				return yamlProvider("a: ${env:RE_A:?}\nb: ${env:RE_B:?}\n")
			}),
			env,
		},
		ConverterFactories: []confmap.ConverterFactory{conv},
		DefaultScheme:      "env",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("RE_A", "")
	t.Setenv("RE_B", "")
	if _, err := r.Resolve(context.Background()); err == nil || !strings.Contains(err.Error(), "2 environment variables") {
		t.Errorf("first resolution: %v", err)
	}
	t.Setenv("RE_A", "a")
	t.Setenv("RE_B", "b")
	if conf, err := r.Resolve(context.Background()); err != nil || conf.Get("a") != "a" {
		t.Errorf("second resolution: %v, %v", conf, err)
	}
}

// funcProvider serves the scheme with fn, given the URI's opaque part.
type funcProvider struct {
	scheme string
	fn     func(opaque string) (*confmap.Retrieved, error)
}

func (p funcProvider) Retrieve(_ context.Context, uri string, _ confmap.WatcherFunc) (*confmap.Retrieved, error) {
	return p.fn(strings.TrimPrefix(uri, p.scheme+":"))
}

func (p funcProvider) Scheme() string { return p.scheme }

func (funcProvider) Shutdown(context.Context) error { return nil }

func factoryOf(p confmap.Provider) confmap.ProviderFactory {
	return confmap.NewProviderFactory(func(confmap.ProviderSettings) confmap.Provider { return p })
}

// noFile is a "file" provider with no files, failing as fileprovider does.
var noFile = funcProvider{"file", func(path string) (*confmap.Retrieved, error) {
	return nil, fmt.Errorf("unable to read the file %s: open %s: no such file or directory", path, path)
}}

// newResolver returns a resolver of the configuration *yaml (read at each resolution, as a
// config file edited before a reload), with the pair env and conv and the providers more.
func newResolver(t *testing.T, yaml *string, env confmap.ProviderFactory, conv confmap.ConverterFactory, more ...confmap.ProviderFactory) *confmap.Resolver {
	t.Helper()
	cfg := funcProvider{"yaml", func(string) (*confmap.Retrieved, error) { return confmap.NewRetrievedFromYAML([]byte(*yaml)) }}
	r, err := confmap.NewResolver(confmap.ResolverSettings{
		URIs:               []string{"yaml:config"},
		ProviderFactories:  append([]confmap.ProviderFactory{factoryOf(cfg), env}, more...),
		ConverterFactories: []confmap.ConverterFactory{conv},
		DefaultScheme:      "env",
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestNestedMissingNamed: a required variable inside another provider's reference
// (${file:${env:NAME:?message}}) fails the resolution in that provider, before the converter
// runs; its error still names the variable and the message, as NewFactory's does.
func TestNestedMissingNamed(t *testing.T) {
	os.Unsetenv("RE_CA")
	env, conv := NewFactories()
	yaml := "ca_pem: ${file:${env:RE_CA:?set RE_CA to the CA bundle}}\n"
	_, err := newResolver(t, &yaml, env, conv, factoryOf(noFile)).Resolve(context.Background())
	if err == nil || !strings.Contains(err.Error(), "environment variable RE_CA is unset: set RE_CA to the CA bundle") {
		t.Errorf("error %v, want one naming RE_CA with its message", err)
	}
}

// TestNothingLeftAfterFailedResolution: a resolution that fails before the converter runs (in
// another provider) leaves nothing behind: the same resolver resolving again (a reload after the
// config was fixed) is not failed for a variable it no longer references.
func TestNothingLeftAfterFailedResolution(t *testing.T) {
	os.Unsetenv("RE_CA")
	env, conv := NewFactories()
	yaml := "ca_pem: ${file:${env:RE_CA:?}}\n"
	r := newResolver(t, &yaml, env, conv, factoryOf(noFile))
	if _, err := r.Resolve(context.Background()); err == nil {
		t.Fatal("the first resolution succeeded")
	}
	yaml = "ca_pem: inline\n"
	if conf, err := r.Resolve(context.Background()); err != nil || conf.Get("ca_pem") != "inline" {
		t.Errorf("after the config was fixed: %v, %v", conf, err)
	}
}

// TestResolversSharingThePair: two resolvers given the same pair and resolving at once each
// report their own missing variables: none lets a placeholder through, none fails for the other's.
func TestResolversSharingThePair(t *testing.T) {
	os.Unsetenv("RE_A")
	env, conv := NewFactories()
	entered, release := make(chan struct{}), make(chan struct{})
	block := funcProvider{"block", func(string) (*confmap.Retrieved, error) {
		close(entered)
		<-release
		return confmap.NewRetrieved("b")
	}}
	// Keys resolve in order: a notes RE_A missing, then b waits while the other resolver runs.
	missing := "a: ${env:RE_A:?}\nb: ${block:x}\n"
	fine := "c: ok\n"
	done := make(chan error)
	go func() {
		conf, err := newResolver(t, &missing, env, conv, factoryOf(block)).Resolve(context.Background())
		if err == nil {
			err = fmt.Errorf("resolved, a = %v", conf.Get("a"))
		} else if !strings.Contains(err.Error(), "environment variable RE_A is unset") {
			err = fmt.Errorf("want an error naming RE_A, got: %w", err)
		} else {
			err = nil
		}
		done <- err
	}()
	<-entered
	if _, err := newResolver(t, &fine, env, conv).Resolve(context.Background()); err != nil {
		t.Errorf("the resolver without a missing variable: %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Errorf("the resolver with RE_A missing: %v", err)
	}
}

// TestOctal: a value YAML reads as an octal number different from the decimal one it looks like
// gets a warning naming the variable, not its value, which may be a secret; others none.
func TestOctal(t *testing.T) {
	for v, want := range map[string]bool{
		"0123": true, "-012": true, "+0644": true, " 010 ": true,
		"089": false, "07": false, "-07": false, "00": false, "0": false, "123": false, "0x1F": false, "0o17": false,
		"0123.5": false, "--012": false, "": false,
	} {
		if got := octal(v); got != want {
			t.Errorf("octal(%q) = %v, want %v", v, got, want)
		}
	}
	core, logs := observer.New(zapcore.WarnLevel)
	t.Setenv("RE_OCT", "0123")
	p := NewFactory().Create(confmap.ProviderSettings{Logger: zap.New(core)})
	r, err := p.Retrieve(context.Background(), "env:RE_OCT", nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := r.AsRaw()
	entries := logs.All()
	if raw != 83 || len(entries) != 1 || entries[0].ContextMap()["name"] != "RE_OCT" || len(entries[0].ContextMap()) != 1 {
		t.Errorf("RE_OCT=0123: %#v, logged %v; want the variable's name only (its value may be a secret)", raw, entries)
	}
}
