package requiredenvprovider

import (
	"context"
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
