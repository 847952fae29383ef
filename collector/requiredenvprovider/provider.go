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
package requiredenvprovider

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"

	"go.opentelemetry.io/collector/confmap"
	"go.uber.org/zap"
)

const scheme = "env"

// validName is the collector's rule for environment variable names in ${env:...}.
var validName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

type provider struct{ logger *zap.Logger }

// NewFactory returns the factory of the "env" provider with ${env:NAME:?message} support.
func NewFactory() confmap.ProviderFactory {
	return confmap.NewProviderFactory(func(ps confmap.ProviderSettings) confmap.Provider {
		logger := ps.Logger
		if logger == nil {
			logger = zap.NewNop()
		}
		return &provider{logger: logger}
	})
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
		return nil, fmt.Errorf("environment variable %s is %s: %s", ref.name, state, msg)
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
