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
	"sort"
	"strconv"
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
// stands a placeholder in for a missing variable's value, the error it would have returned in
// angle brackets; the converter, which the resolver runs once every reference is resolved, looks
// for those placeholders in the configuration and fails it naming each variable, so that no
// placeholder ever reaches a component. Give both to the same ResolverSettings (the provider
// without the converter would let placeholders through).
//
// The converter judges the configuration it is given, not what the provider saw: a resolution
// that fails before it (in a provider a placeholder was given to, ${file:${env:NAME:?}}, whose
// error then carries the placeholder, so the variable and its message) leaves nothing behind, and
// resolvers sharing the pair, or resolving at once, do not see each other's variables.
func NewFactories() (confmap.ProviderFactory, confmap.ConverterFactory) {
	m := &missing{errs: map[string]missingVar{}}
	return newFactory(m), confmap.NewConverterFactory(func(confmap.ConverterSettings) confmap.Converter { return m })
}

// missing knows the placeholders its provider has handed out, each with its variable's error.
// It only grows, by one entry per distinct variable, state and message a configuration writes.
type missing struct {
	mu   sync.Mutex
	errs map[string]missingVar // by placeholder
}

type missingVar struct {
	name string
	err  error
}

// placeholder notes err, the error of the missing variable name, and returns the value that
// stands in for the variable.
func (m *missing) placeholder(name string, err error) string {
	p := "<" + err.Error() + ">"
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.errs[p]; !ok {
		m.errs[p] = missingVar{name, err}
	}
	return p
}

// Convert fails the configuration when it holds a placeholder, naming every missing variable
// once, in the order of the keys holding them.
func (m *missing) Convert(_ context.Context, conf *confmap.Conf) error {
	m.mu.Lock()
	known := make(map[string]missingVar, len(m.errs))
	for p, v := range m.errs {
		known[p] = v
	}
	m.mu.Unlock()
	if len(known) == 0 {
		return nil
	}
	var errs []error
	named := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			// Several in one value (a URL built of two variables): in the order written.
			type at struct {
				i int
				v missingVar
			}
			var found []at
			for p, mv := range known {
				if i := strings.Index(v, p); i >= 0 {
					found = append(found, at{i, mv})
				}
			}
			sort.Slice(found, func(a, b int) bool { return found[a].i < found[b].i })
			for _, f := range found {
				if !named[f.v.name] { // a variable referenced twice is named once
					named[f.v.name] = true
					errs = append(errs, f.v.err)
				}
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(v[k])
			}
		}
	}
	walk(conf.ToStringMap())
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d environment variables this configuration needs are missing:", len(errs))
	for _, err := range errs {
		b.WriteString("\n  ")
		b.WriteString(err.Error())
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
		// A value no component sees (the converter fails the configuration holding it), which
		// names the variable and the message in any error a provider it is given to
		// (${file:${env:NAME:?}}) returns.
		return confmap.NewRetrieved(p.missing.placeholder(ref.name, err))
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
	if octal(val) {
		// The value is not logged: the variable may hold a secret.
		p.logger.Warn("Configuration references an environment variable whose value has a leading zero, which YAML reads as an octal number (010000 is 4096): a setting that takes a number gets the octal value, one that takes text the value as written; write the number without its leading zero for a decimal one",
			zap.String("name", ref.name))
	}
	return confmap.NewRetrievedFromYAML([]byte(val))
}

// octal reports whether YAML reads v as an octal integer (0123 is 83, while 089 is 89) that
// differs from the decimal number it looks like.
func octal(v string) bool {
	v = strings.TrimSpace(v)
	digits := strings.TrimLeft(v, "+-")
	if len(v)-len(digits) > 1 || len(digits) < 2 || digits[0] != '0' || strings.Trim(digits, "01234567") != "" {
		return false
	}
	n, err := strconv.ParseInt(v, 8, 64)
	dec := strings.TrimLeft(v, "+-0") // the digits without the sign and the leading zeros
	if strings.HasPrefix(v, "-") {
		dec = "-" + dec
	}
	d, derr := strconv.ParseInt(dec, 10, 64)
	return err == nil && derr == nil && d != n // 00 and 07 are the same number either way
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
