package itlauthextension

import (
	"errors"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"

	"github.com/otelitl/itl/collector/internal/confcheck"
)

// Config configures the itl_auth extension.
type Config struct {
	// Authenticator is the server authenticator whose decisions this extension passes on, such as
	// bearertokenauth/clients. It must be an extension of the service too.
	Authenticator component.ID `mapstructure:"authenticator"`
	// LogInterval is the least time between two log lines about refused requests; the refusals in
	// between are counted, and the next line says how many there were.
	LogInterval time.Duration `mapstructure:"log_interval"`
	// Hint is what the log line gives as the fix, in the operator's terms (which variable holds the
	// token on each side). Empty, the line says to send the token the authenticator expects.
	Hint string `mapstructure:"hint"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var (
	_ component.Config    = (*Config)(nil)
	_ confmap.Validator   = (*Config)(nil)
	_ confmap.Unmarshaler = (*Config)(nil)
)

// Unmarshal decodes the configuration, refusing a key that is not a setting (naming the one it
// likely misspells) and a duration written without its unit.
func (c *Config) Unmarshal(conf *confmap.Conf) error { return confcheck.Unmarshal(conf, c) }

// Validate checks the configuration and says how to fix what is wrong.
func (c *Config) Validate() error {
	var errs []error
	if c.Authenticator == (component.ID{}) {
		errs = append(errs, errors.New("authenticator: not set; name the server authenticator whose refusals to count, such as bearertokenauth/clients, an extension of the service too"))
	} else if c.Authenticator.Type() == Type {
		errs = append(errs, errors.New("authenticator: "+c.Authenticator.String()+" is an itl_auth extension; name the authenticator that checks the token, such as bearertokenauth/clients"))
	}
	errs = append(errs, confcheck.Between("log_interval", c.LogInterval, time.Second, 24*time.Hour, defaultLogInterval))
	return errors.Join(errs...)
}
