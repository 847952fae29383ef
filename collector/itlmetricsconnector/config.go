package itlmetricsconnector

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/lightstep/go-expohisto/structure"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/internal/confcheck"
	"github.com/otelitl/itl/itlconv"
)

// Dimension is a metric attribute read from each span's attributes, then its resource's. A span
// that has neither takes Default when it is set, and otherwise goes without the attribute.
type Dimension struct {
	Name    string  `mapstructure:"name"`
	Default *string `mapstructure:"default"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// HistogramConfig chooses the histogram kind: explicit buckets (the default) or base-2
// exponential histograms when exponential.max_size is set.
type HistogramConfig struct {
	Explicit    ExplicitConfig    `mapstructure:"explicit"`
	Exponential ExponentialConfig `mapstructure:"exponential"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// ExplicitConfig holds the bucket boundaries of each histogram, in seconds (tokens for
// token_usage). A metric left out keeps its default boundaries.
type ExplicitConfig struct {
	Buckets BucketsConfig `mapstructure:"buckets"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// BucketsConfig has one list of boundaries per histogram.
type BucketsConfig struct {
	TimeToFirstChunk   []float64 `mapstructure:"time_to_first_chunk"`
	TimePerOutputChunk []float64 `mapstructure:"time_per_output_chunk"`
	Duration           []float64 `mapstructure:"duration"`
	TokenUsage         []float64 `mapstructure:"token_usage"`
	TimePerOutputToken []float64 `mapstructure:"time_per_output_token"`
	GapMax             []float64 `mapstructure:"gap_max"`

	ServerTimeToFirstToken   []float64 `mapstructure:"server_time_to_first_token"`
	ServerTimePerOutputToken []float64 `mapstructure:"server_time_per_output_token"`
	ServerRequestDuration    []float64 `mapstructure:"server_request_duration"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// ExponentialConfig turns on exponential histograms with at most MaxSize buckets each.
type ExponentialConfig struct {
	MaxSize int `mapstructure:"max_size"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// ExemplarsConfig attaches the trace and span id of the generations behind the largest values to
// each histogram point.
type ExemplarsConfig struct {
	Enabled         bool `mapstructure:"enabled"`
	MaxPerDataPoint int  `mapstructure:"max_per_data_point"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// DeduplicateConfig makes the connector count a span at most once while it remembers it: a span
// (trace ID and span ID) that arrives again, as a client's retry sends it, is skipped.
type DeduplicateConfig struct {
	// MaxSpans bounds the spans remembered, and so the memory: a span is remembered while fewer
	// than MaxSpans/2 (rounded down) other distinct spans have come after it (new ones, or ones sent again from
	// further back, which are remembered anew), and at most until MaxSpans have.
	// 0, the default, remembers none and counts every span each time it arrives; otherwise 1024
	// (twice the largest request of an OTel SDK by default) to 10,000,000.
	MaxSpans int `mapstructure:"max_spans"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Config configures the itl_metrics connector.
type Config struct {
	// Dimensions are the metric attributes; ExcludeDimensions removes some of them by name.
	Dimensions        []Dimension `mapstructure:"dimensions"`
	ExcludeDimensions []string    `mapstructure:"exclude_dimensions"`
	// DimensionValueMaxLength truncates longer dimension values, so that a client cannot blow up
	// label sizes.
	DimensionValueMaxLength int `mapstructure:"dimension_value_max_length"`
	// AddInstanceID adds the collector's service.instance.id as the collector.instance.id dimension,
	// so that replicas behind a load balancer never write the same series.
	AddInstanceID bool `mapstructure:"add_instance_id"`

	Histogram HistogramConfig `mapstructure:"histogram"`
	// AggregationTemporality is "cumulative" or "delta", or spanmetrics' spelling of either,
	// AGGREGATION_TEMPORALITY_CUMULATIVE or AGGREGATION_TEMPORALITY_DELTA.
	AggregationTemporality string `mapstructure:"aggregation_temporality"`
	// MetricsFlushInterval is how often the metrics are sent on.
	MetricsFlushInterval time.Duration `mapstructure:"metrics_flush_interval"`
	// MetricsExpiration drops a series that saw no span for that long; 0 keeps series forever.
	MetricsExpiration time.Duration `mapstructure:"metrics_expiration"`
	// AggregationCardinalityLimit is the most series kept; spans beyond it go to one overflow series
	// with otel.metric.overflow=true. It bounds the connector's memory.
	AggregationCardinalityLimit int             `mapstructure:"aggregation_cardinality_limit"`
	Exemplars                   ExemplarsConfig `mapstructure:"exemplars"`
	// Deduplicate counts a span sent again (a client's retry of a request the pipeline refused or
	// timed out) once; off by default.
	Deduplicate DeduplicateConfig `mapstructure:"deduplicate"`

	// Config holds the settings spans are read with, shared with the itl processor:
	// stall_threshold, chunk_event_names, max_chunks, excluded_operations and excluded_scopes.
	genaispan.Config `mapstructure:",squash"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var (
	_ component.Config    = (*Config)(nil)
	_ confmap.Validator   = (*Config)(nil)
	_ confmap.Unmarshaler = (*Config)(nil)
)

const (
	cumulative = "cumulative"
	delta      = "delta"
	// The spellings of contrib's spanmetrics connector, accepted so that a config moves over as is.
	cumulativeContrib = "AGGREGATION_TEMPORALITY_CUMULATIVE"
	deltaContrib      = "AGGREGATION_TEMPORALITY_DELTA"
)

// isDelta reports whether the temporality names delta, in either spelling.
func (c *Config) isDelta() bool {
	return c.AggregationTemporality == delta || c.AggregationTemporality == deltaContrib
}

// Bounds of the settings: outside them a value is a typo, or costs more memory, CPU or label size
// than any use justifies.
const (
	maxDimensions       = 32
	minValueMaxLength   = 16
	maxValueMaxLength   = 4096
	maxBoundaries       = 256
	minFlushInterval    = 100 * time.Millisecond
	maxFlushInterval    = time.Hour
	maxExpiration       = 24 * time.Hour
	maxCardinalityLimit = 1_000_000
	maxExemplars        = 100
	minDedupSpans       = 1024 // twice the 512 spans an OTel SDK sends a request at most by default
	maxDedupSpans       = 10_000_000
)

// Unmarshal decodes the configuration, refusing a key that is not a setting (naming the one it
// likely misspells), a duration written without its unit and a count with a fraction.
func (c *Config) Unmarshal(conf *confmap.Conf) error {
	if err := bareDimensions(conf); err != nil {
		return err
	}
	if err := bareSections(conf); err != nil {
		return err
	}
	if err := emptyDeduplicate(conf); err != nil {
		return err
	}
	return confcheck.Unmarshal(conf, c)
}

// emptyDeduplicate refuses a deduplicate section that sets nothing (deduplicate: {}, the key
// alone, or max_spans without a value): written to turn deduplication on, it would leave max_spans
// at 0, off, without a word.
func emptyDeduplicate(conf *confmap.Conf) error {
	v, ok := conf.ToStringMap()["deduplicate"]
	if !ok {
		return nil
	}
	switch v := v.(type) {
	case nil:
	case map[string]any:
		if n, set := v["max_spans"]; len(v) > 1 || (len(v) == 1 && (!set || n != nil)) {
			return nil // set, or another key, which the decoder names
		}
	default:
		return nil // bareSections names it
	}
	return fmt.Errorf("deduplicate: the section sets no max_spans, so every span would count each time it comes, as without it; set it, such as %s, or leave the section out", sectionExample("deduplicate"))
}

// sectionExamples are the settings that are sections of their own, by their dotted names, each
// with the settings to write under it in the example that bareSections gives.
var sectionExamples = map[string]string{
	"histogram":                  "{exponential: {max_size: 160}}",
	"histogram.explicit":         "{buckets: {duration: [0.5, 1, 2, 5]}}",
	"histogram.explicit.buckets": "{duration: [0.5, 1, 2, 5]}",
	"histogram.exponential":      "{max_size: 160}",
	"exemplars":                  "{enabled: true}",
	"deduplicate":                "{max_spans: 100000}",
}

// sectionExample writes the example of the section name from the top, as a user writes it under
// the connector: histogram: {exponential: {max_size: 160}} for histogram.exponential.
func sectionExample(name string) string {
	parts := strings.Split(name, ".")
	out := parts[len(parts)-1] + ": " + sectionExamples[name]
	for i := len(parts) - 2; i >= 0; i-- {
		out = parts[i] + ": {" + out + "}"
	}
	return out
}

// bareSections refuses a section given a value of its own (deduplicate: true, deduplicate: 100000,
// exemplars: true, histogram: {exponential: 160}), as a switch or a size would be written, with
// the form to write: the decoder says only "'deduplicate' expected a map or struct, got "bool"".
func bareSections(conf *confmap.Conf) error {
	expanded := confmap.NewFromStringMap(conf.ToStringMap())
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(sectionExamples)) {
		switch v := expanded.Get(strings.ReplaceAll(name, ".", "::")).(type) {
		case map[string]any, nil:
		default:
			errs = append(errs, fmt.Errorf("%s: %v is not a section; write its settings under it, such as %s", name, v, sectionExample(name)))
		}
	}
	return errors.Join(errs...)
}

// bareDimensions refuses a dimension written as a bare name (dimensions: [gen_ai.request.model]),
// as exclude_dimensions lists them, with the form to write: the decoder says only that it expected
// a map.
func bareDimensions(conf *confmap.Conf) error {
	list, _ := conf.ToStringMap()["dimensions"].([]any)
	var errs []error
	for i, d := range list {
		switch d.(type) {
		case map[string]any, nil:
		default:
			errs = append(errs, fmt.Errorf("dimensions[%d]: %v is not a dimension; write each as a map with its name (and a default, if you want one), such as - name: %v", i, d, d))
		}
	}
	return errors.Join(errs...)
}

// ownAttributes are the attributes the connector puts on its data points itself, with what they
// say: a dimension of the same name would be overwritten on some points and not others, and a span
// could make its series look like the overflow series.
var ownAttributes = map[string]string{
	string(itlconv.OverflowKey):            "it marks the series of spans past aggregation_cardinality_limit",
	string(itlconv.CollectorInstanceIDKey): "the replica's id, with add_instance_id",
	string(semconv.ErrorTypeKey):           "the error of a failed generation, on the duration's points",
	string(semconv.GenAITokenTypeKey):      "input or output, on the token usage's points",
	itlconv.TimingKey:                      "the timing source, on otelitl.generations",
}

// Validate checks the configuration and says how to fix what is wrong.
func (c *Config) Validate() error {
	var errs []error
	seen := map[string]bool{}
	for i, d := range c.Dimensions {
		if d.Name == "" {
			errs = append(errs, fmt.Errorf("dimensions[%d].name: must not be empty", i))
		} else if seen[d.Name] {
			errs = append(errs, fmt.Errorf("dimensions[%d].name: %q is listed twice; list each dimension once", i, d.Name))
		} else if why, ok := ownAttributes[d.Name]; ok {
			errs = append(errs, fmt.Errorf("dimensions[%d].name: %q is an attribute the connector sets itself (%s); remove it from dimensions", i, d.Name, why))
		}
		seen[d.Name] = true
		if d.Default != nil && len(*d.Default) > c.DimensionValueMaxLength && c.DimensionValueMaxLength >= minValueMaxLength {
			errs = append(errs, fmt.Errorf("dimensions[%d].default: %d bytes, longer than dimension_value_max_length (%d), so every series would carry it cut; shorten it or raise dimension_value_max_length",
				i, len(*d.Default), c.DimensionValueMaxLength))
		}
	}
	for i, n := range c.ExcludeDimensions {
		if !seen[n] {
			errs = append(errs, fmt.Errorf("exclude_dimensions[%d]: %q is not a dimension; the dimensions are %s", i, n, strings.Join(c.dimensionNames(), ", ")))
		}
	}
	if len(c.Dimensions) > maxDimensions {
		errs = append(errs, fmt.Errorf("dimensions: %d, more than %d: every one multiplies the series", len(c.Dimensions), maxDimensions))
	}
	errs = append(errs, confcheck.Between("dimension_value_max_length", c.DimensionValueMaxLength, minValueMaxLength, maxValueMaxLength, defaultValueMaxLength))
	if m := c.Histogram.Exponential.MaxSize; m != 0 {
		if m < int(structure.MinSize) || m > int(structure.MaximumMaxSize) {
			errs = append(errs, fmt.Errorf("histogram.exponential.max_size: %d is outside [%d, %d]; %d buckets is the usual size, and 0, the default, keeps explicit buckets",
				m, structure.MinSize, structure.MaximumMaxSize, structure.DefaultMaxSize))
		}
	}
	if c.Histogram.Exponential.MaxSize > 0 && c.Histogram.Explicit.Buckets.any() {
		errs = append(errs, errors.New("histogram: set either explicit.buckets or exponential.max_size, not both"))
	}
	for _, m := range metricDefs {
		if b := m.buckets(&c.Histogram.Explicit.Buckets); b != nil {
			if err := confcheck.Boundaries(b, maxBoundaries); err != nil {
				errs = append(errs, fmt.Errorf("histogram.explicit.buckets.%s: %w", m.key, err))
			}
		}
	}
	switch c.AggregationTemporality {
	case cumulative, delta, cumulativeContrib, deltaContrib:
	default:
		errs = append(errs, fmt.Errorf("aggregation_temporality: %q is not known; use cumulative or delta (or %s / %s)", c.AggregationTemporality, cumulativeContrib, deltaContrib))
	}
	errs = append(errs, confcheck.Between("metrics_flush_interval", c.MetricsFlushInterval, minFlushInterval, maxFlushInterval, defaultFlushInterval))
	if c.MetricsExpiration != 0 {
		if err := confcheck.Between("metrics_expiration", c.MetricsExpiration, 0, maxExpiration, defaultExpiration); err != nil {
			errs = append(errs, fmt.Errorf("%w, or 0 to keep series forever", err))
		}
	}
	errs = append(errs, confcheck.Between("aggregation_cardinality_limit", c.AggregationCardinalityLimit, 1, maxCardinalityLimit, defaultCardinalityLimit))
	// Checked when exemplars are off too: a value out of range would otherwise pass until the day
	// they are turned on.
	errs = append(errs, confcheck.Between("exemplars.max_per_data_point", c.Exemplars.MaxPerDataPoint, 1, maxExemplars, defaultExemplars))
	if m := c.Deduplicate.MaxSpans; m < 0 {
		errs = append(errs, fmt.Errorf("deduplicate.max_spans: %d is negative; set 0 (the default) to count every span each time it comes, or the number of recent spans to remember, such as 100000", m))
	} else if m > 0 && m < minDedupSpans {
		// Read as a number of attempts, max_spans: 3 would remember the last model call alone.
		errs = append(errs, fmt.Errorf("deduplicate.max_spans: %d is too few to catch a retry: a span is remembered while fewer than max_spans/2 model calls come after it, and an OTel SDK sends up to 512 spans a request by default, so below %d a request's own model calls can push its first ones out before it comes again; set at least %d, such as 100000, or 0 (the default) to count every span each time it comes",
			m, minDedupSpans, minDedupSpans))
	} else if m > maxDedupSpans {
		errs = append(errs, fmt.Errorf("deduplicate.max_spans: %d would hold up to %s of span IDs (%d bytes a span); at most %d (%s), and 100000 covers the retries of a client's queue many times over",
			m, mebibytes(float64(m)*dedupBytesPerSpan), dedupBytesPerSpan, maxDedupSpans, mebibytes(maxDedupSpans*dedupBytesPerSpan)))
	}
	errs = append(errs, c.Config.Check())
	return errors.Join(errs...)
}

// mebibytes writes a size in bytes as MiB. The size is a float64: the product of a max_spans near
// the largest int and the bytes a span wraps around as an int.
func mebibytes(n float64) string { return fmt.Sprintf("%.0f MiB", n/(1<<20)) }

func (c *Config) dimensionNames() []string {
	var names []string
	for _, d := range c.Dimensions {
		names = append(names, d.Name)
	}
	return names
}

func (b *BucketsConfig) any() bool {
	for _, m := range metricDefs {
		if m.buckets(b) != nil {
			return true
		}
	}
	return false
}
