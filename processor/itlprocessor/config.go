package itlprocessor

import (
	"errors"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/otelitl/itl/internal/decode"
)

// Config configures the itl processor.
type Config struct {
	// StallThreshold is the gap above which a gap counts as a stall (otelitl.stalls).
	StallThreshold time.Duration `mapstructure:"stall_threshold"`
	// ChunkEventNames are the span event names read as chunk arrivals, highest priority first.
	ChunkEventNames []string `mapstructure:"chunk_event_names"`
	// CompactEvents rewrites a complete event timeline into the compact otelitl.chunk.offsets_us
	// (and otelitl.chunk.tokens) attributes and removes its events, to cut stored span size.
	CompactEvents bool `mapstructure:"compact_events"`
	// DropTimeline removes the timeline (compact attributes or chunk events) after annotating.
	DropTimeline bool `mapstructure:"drop_timeline"`
	// MaxChunks is the most chunks read from one span; a longer timeline is left alone and counted
	// as malformed (too_many_chunks), so that one span cannot cost unbounded time or memory.
	MaxChunks int `mapstructure:"max_chunks"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

// Validate checks the configuration and says how to fix what is wrong.
func (c *Config) Validate() error {
	var errs []error
	errs = append(errs, decode.ValidateReading(c.StallThreshold, c.ChunkEventNames, c.MaxChunks))
	if c.CompactEvents && c.DropTimeline {
		errs = append(errs, errors.New("compact_events and drop_timeline: set at most one; drop_timeline removes the timeline that compact_events would rewrite"))
	}
	return errors.Join(errs...)
}
