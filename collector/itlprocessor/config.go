package itlprocessor

import (
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/internal/confcheck"
)

// Config configures the itl processor.
type Config struct {
	// Config holds the settings spans are read with, shared with the itl_metrics connector:
	// stall_threshold, chunk_event_names, max_chunks, excluded_operations and excluded_scopes.
	genaispan.Config `mapstructure:",squash"`

	// CompactEvents rewrites a complete event timeline into the compact otelitl.chunk.offsets_us
	// (and otelitl.chunk.tokens) attributes and removes its events, to cut stored span size.
	CompactEvents bool `mapstructure:"compact_events"`
	// DropTimeline removes the timeline (compact attributes or chunk events) after annotating.
	DropTimeline bool `mapstructure:"drop_timeline"`
	// KeepClientFigures leaves the figures otelitl's Go client writes on its spans
	// (itlconv.ClientScope) as they are, without reading the timeline again: the client computes
	// them exactly as the processor does. It applies only where the processor would compute the
	// same figures: at the default stall_threshold, without drop_timeline, and with compact_events
	// to spans without events (a timeline of chunk events is read to be compacted). Set it to
	// false when spans under that scope come from senders you do not trust to write figures that
	// agree with their timelines.
	KeepClientFigures bool `mapstructure:"keep_client_figures"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var (
	_ component.Config    = (*Config)(nil)
	_ confmap.Validator   = (*Config)(nil)
	_ confmap.Unmarshaler = (*Config)(nil)
)

// Unmarshal decodes the configuration, refusing a key that is not a setting (naming the one it
// likely misspells), a duration written without its unit and a count with a fraction.
func (c *Config) Unmarshal(conf *confmap.Conf) error { return confcheck.Unmarshal(conf, c) }

// Validate checks the configuration and says how to fix what is wrong.
func (c *Config) Validate() error {
	var errs []error
	errs = append(errs, c.Config.Check())
	if c.CompactEvents && c.DropTimeline {
		errs = append(errs, errors.New("compact_events and drop_timeline: set at most one; drop_timeline removes the timeline that compact_events would rewrite"))
	}
	return errors.Join(errs...)
}
