// Package requiredenvprovider is the "env" configuration provider of otelcol-itl: the collector's own
// envprovider plus the shell's required expansion, so that a config can refuse to start when a
// secret or an endpoint it needs is missing instead of running with an empty value:
//
//	${env:NAME}             the variable's value (unset: empty, with a warning)
//	${env:NAME:-default}    the default when NAME is unset or empty
//	${env:NAME:?message}    an error naming NAME, with the message, when NAME is unset or empty
//
// Both treat an empty variable as the shell does. The collector's own envprovider gives "" for a
// variable set to "" even when it has a default; here the default applies, because a variable
// passed on empty (a compose file's NAME=${NAME}) would otherwise turn a receiver's loopback
// default into every interface. A value containing only white space counts as empty for both:
// "Bearer " with a blank token is as useless as an empty one, and " " is no endpoint.
//
// Build a distribution with it in place of go.opentelemetry.io/collector/confmap/provider/envprovider
// (both claim the "env" scheme); exporter-config/builder-config.yaml does so for the ocb build.
// A distribution whose main sets its ResolverSettings itself (cmd/otelcol-itl) takes NewFactories
// instead, which names every missing required variable at once.
package requiredenvprovider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/confmap"
	"go.uber.org/zap"
)

const scheme = "env"

// validName is the collector's rule for environment variable names in ${env:...}.
var validName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

type provider struct {
	logger  *zap.Logger
	missing *missing // nil: a missing required variable fails its Retrieve
}

// NewFactory returns the factory of the "env" provider with ${env:NAME:?message} support. The
// first required variable found missing fails the configuration; NewFactories names them all.
func NewFactory() confmap.ProviderFactory { return newFactory(nil) }

func newFactory(m *missing) confmap.ProviderFactory {
	return confmap.NewProviderFactory(func(ps confmap.ProviderSettings) confmap.Provider {
		logger := ps.Logger
		if logger == nil {
			logger = zap.NewNop()
		}
		return &provider{logger: logger, missing: m}
	})
}

// NewFactories returns the "env" provider of NewFactory and a converter that together report
// every required variable that is missing in one error, where the provider alone stops at the
// first: the collector resolves a configuration's references one at a time, so that a config
// needing four variables would otherwise be started four times to learn them. The provider
// notes a missing variable and stands a placeholder in for its value; the converter, which the
// resolver runs once every reference is resolved, fails the configuration naming each of them,
// so that no placeholder ever reaches a component. Give both to the same ResolverSettings (the
// provider without the converter would let placeholders through), to one resolver at a time.
func NewFactories() (confmap.ProviderFactory, confmap.ConverterFactory) {
	m := &missing{}
	return newFactory(m), confmap.NewConverterFactory(func(confmap.ConverterSettings) confmap.Converter { return m })
}

// missing collects the required variables found missing while a configuration resolves.
type missing struct {
	mu    sync.Mutex
	names []string
	errs  map[string]error
}

func (m *missing) add(name string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.errs == nil {
		m.errs = map[string]error{}
	}
	if _, ok := m.errs[name]; !ok { // a variable referenced twice is named once
		m.names = append(m.names, name)
		m.errs[name] = err
	}
}

// Convert fails the configuration when a required variable was missing, naming every one, and
// forgets them, ready for the next resolution.
func (m *missing) Convert(context.Context, *confmap.Conf) error {
	m.mu.Lock()
	names, errs := m.names, m.errs
	m.names, m.errs = nil, nil
	m.mu.Unlock()
	switch len(names) {
	case 0:
		return nil
	case 1:
		return errs[names[0]]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d environment variables this configuration needs are missing:", len(names))
	for _, n := range names {
		b.WriteString("\n  ")
		b.WriteString(errs[n].Error())
	}
	return errors.New(b.String())
}

// Retrieve resolves env:NAME, env:NAME:-default and env:NAME:?message.
func (p *provider) Retrieve(_ context.Context, uri string, _ confmap.WatcherFunc) (*confmap.Retrieved, error) {
	if !strings.HasPrefix(uri, scheme+":") {
		return nil, fmt.Errorf("%q uri is not supported by the %q provider", uri, scheme)
	}
	ref := parse(uri[len(scheme)+1:])
	if !validName.MatchString(ref.name) {
		return nil, fmt.Errorf("environment variable %q has an invalid name: it must match %s", ref.name, validName)
	}
	val, exists := os.LookupEnv(ref.name)
	switch {
	case ref.required && strings.TrimSpace(val) == "":
		state := "unset"
		if exists {
			state = "empty"
		}
		msg := strings.TrimSpace(ref.message)
		if msg == "" {
			msg = "this configuration needs it"
		}
		err := fmt.Errorf("environment variable %s is %s: %s", ref.name, state, msg)
		if p.missing == nil {
			return nil, err
		}
		p.missing.add(ref.name, err)
		// A value no component sees (the converter fails the configuration first), readable in
		// any error a provider it is nested in (${file:${env:NAME:?}}) might give.
		return confmap.NewRetrieved("<" + ref.name + " is " + state + ">")
	case strings.TrimSpace(val) == "" && ref.def != nil:
		// Unset or empty, as in a shell: the collector's envprovider keeps a variable set to "",
		// but a variable passed on empty (a compose file's NAME=${NAME}) would then turn a
		// receiver's default loopback endpoint into every interface.
		if exists && *ref.def != "" {
			p.logger.Info("Configuration references an environment variable set to an empty or blank value: its default is used, as in a shell",
				zap.String("name", ref.name), zap.String("default", *ref.def))
		}
		if *ref.def == "" {
			// As envprovider: an explicit empty default stays an empty string, not null.
			return confmap.NewRetrieved("")
		}
		val = *ref.def
	case !exists:
		p.logger.Warn("Configuration references unset environment variable", zap.String("name", ref.name))
	case val == "":
		p.logger.Info("Configuration references empty environment variable", zap.String("name", ref.name))
	}
	return confmap.NewRetrievedFromYAML([]byte(val))
}

func (*provider) Scheme() string { return scheme }

func (*provider) Shutdown(context.Context) error { return nil }

type reference struct {
	name     string
	def      *string
	required bool
	message  string
}

// parse splits NAME, NAME:-default and NAME:?message; the first of ":-" and ":?" decides.
func parse(s string) reference {
	d, q := strings.Index(s, ":-"), strings.Index(s, ":?")
	switch {
	case q >= 0 && (d < 0 || q < d):
		return reference{name: s[:q], required: true, message: s[q+2:]}
	case d >= 0:
		def := s[d+2:]
		return reference{name: s[:d], def: &def}
	}
	return reference{name: s}
}
