package genaispan

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/otelitl/itl/collector/internal/confcheck"
	"github.com/otelitl/itl/itlconv"
)

// Config holds the settings with which spans are read. The itl processor and the itl_metrics
// connector squash it into their own configuration, so that both read a span alike and take the
// same keys, defaults and checks.
type Config struct {
	// StallThreshold is the gap above which a gap counts as a stall.
	StallThreshold time.Duration `mapstructure:"stall_threshold"`
	// ChunkEventNames are the span event names read as chunk arrivals, highest priority first: when
	// a span has events of several of these names, only the first name present is read.
	ChunkEventNames []string `mapstructure:"chunk_event_names"`
	// MaxChunks is the most chunks read from one span; a longer timeline is rejected with
	// ReasonTooManyChunks before anything is allocated for it, so that one span cannot cost
	// unbounded time or memory.
	MaxChunks int `mapstructure:"max_chunks"`
	// ExcludedOperations are the gen_ai.operation.name values of spans that are not model calls
	// (agents, agent steps, tools, which wrap model calls and often repeat their usage; plans,
	// retrievals, memory calls: itlconv.DefaultExcludedOperations), so they add no duration, no
	// tokens and no time to first chunk.
	ExcludedOperations []string `mapstructure:"excluded_operations"`
	// ExcludedScopes are the instrumentation scope names (the tracer's name, such as
	// "@traceloop/instrumentation-openai") whose spans are never model calls. Two instrumentations
	// on one call write two spans for one request, a framework's above an SDK's, or an
	// application's instrumentation above otelitl-proxy's span, and each would count as a request;
	// naming one of them here counts the request once. None by default: nothing tells the two
	// spans apart on their own, and a guess would drop real requests.
	ExcludedScopes []string `mapstructure:"excluded_scopes"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Bounds of the settings. Outside them a value is a typo, or costs more than any reply justifies.
const (
	MinStallThreshold = time.Millisecond
	MaxStallThreshold = time.Hour
	MaxMaxChunks      = 1 << 22 // 16 times the default: 32 MiB of offsets for one span
	MaxOperations     = 64
	MaxScopes         = 64
)

// DefaultConfig returns the default settings.
func DefaultConfig() Config {
	return Config{
		StallThreshold:  itlconv.DefaultStallThreshold,
		ChunkEventNames: append([]string(nil), itlconv.DefaultChunkEventNames...),
		MaxChunks:       itlconv.DefaultMaxChunks,

		ExcludedOperations: append([]string(nil), itlconv.DefaultExcludedOperations...),
	}
}

// Check reports what is wrong with the settings, naming each configuration key and the fix. It is
// not called Validate: the collector validates every nested struct that has a Validate method and
// would report these errors a second time, under the Go field name of the squashed struct instead
// of the configuration keys.
func (c *Config) Check() error {
	var errs []error
	errs = append(errs, confcheck.Between("stall_threshold", c.StallThreshold, MinStallThreshold, MaxStallThreshold, itlconv.DefaultStallThreshold))
	errs = append(errs, validateEventNames("chunk_event_names", c.ChunkEventNames))
	errs = append(errs, confcheck.Between("max_chunks", c.MaxChunks, 1, MaxMaxChunks, itlconv.DefaultMaxChunks))
	if len(c.ExcludedOperations) > MaxOperations {
		errs = append(errs, fmt.Errorf("excluded_operations: %d names, more than %d; list the operations that are not model calls", len(c.ExcludedOperations), MaxOperations))
	}
	for i, op := range c.ExcludedOperations {
		if op == "" {
			errs = append(errs, fmt.Errorf("excluded_operations[%d]: an operation name must not be empty; the default is %v", i, itlconv.DefaultExcludedOperations))
		}
	}
	errs = append(errs, checkScopes(c.ExcludedScopes))
	return errors.Join(errs...)
}

// checkScopes checks excluded_scopes: a bounded list of names as a tracer is named, each once.
func checkScopes(scopes []string) error {
	if len(scopes) > MaxScopes {
		return fmt.Errorf("excluded_scopes: %d names, more than %d; list the instrumentation scopes whose spans another instrumentation already records", len(scopes), MaxScopes)
	}
	if list, why := unreadList(scopes); why != "" {
		return fmt.Errorf("excluded_scopes: %q %s, so it would exclude nothing; write %s", strings.Join(scopes, ","), why, list)
	}
	var errs []error
	for i, s := range scopes {
		switch {
		case s == "":
			errs = append(errs, fmt.Errorf("excluded_scopes[%d]: a scope name must not be empty; write the instrumentation scope's name as its spans carry it, such as @traceloop/instrumentation-openai", i))
		case strings.TrimSpace(s) != s:
			errs = append(errs, fmt.Errorf("excluded_scopes[%d]: %q has spaces at an end, which no scope name has, so it would exclude nothing; write %q", i, s, strings.TrimSpace(s)))
		case versioned(s) != "":
			errs = append(errs, fmt.Errorf("excluded_scopes[%d]: %q ends in a version, which the debug exporter prints beside the scope's name and is no part of it, so it would exclude nothing; write %q", i, s, versioned(s)))
		case slices.Contains(scopes[:i], s):
			errs = append(errs, fmt.Errorf("excluded_scopes[%d]: %q is listed twice; list each scope once", i, s))
		}
	}
	return errors.Join(errs...)
}

// unreadList tells a list that YAML could not read, such as [@traceloop/instrumentation-openai]
// from an environment variable (@ cannot begin a name outside quotes): the collector's env provider
// then hands over the text, which the collector splits at its commas, so the first name begins with
// [ and the last ends with ]. Names in quotes without the brackets ("a","b") stay quoted too, as
// the collector keeps a variable's text for a string. No scope name begins with [ or a quote. It
// returns the list to write, every name quoted, and the reason it was refused.
func unreadList(scopes []string) (list, why string) {
	if len(scopes) == 0 {
		return "", ""
	}
	switch {
	case strings.HasPrefix(strings.TrimSpace(scopes[0]), "[") && strings.HasSuffix(strings.TrimSpace(scopes[len(scopes)-1]), "]"):
		why = "is a list that YAML could not read (a name that begins with @ must be in quotes), taken as text"
	case slices.ContainsFunc(scopes, quoted):
		why = "has names in quotes outside a list's brackets, which stay part of each name"
	default:
		return "", ""
	}
	var names []string
	for _, s := range scopes {
		if n := strings.Trim(strings.TrimSpace(s), "[]\"' "); n != "" {
			names = append(names, strconv.Quote(n))
		}
	}
	return "[" + strings.Join(names, ", ") + "]", why
}

// quoted tells a name written in quotes, which the collector kept.
func quoted(s string) bool {
	s = strings.TrimSpace(s)
	return len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0]
}

// versioned returns the name of a scope written with its version as the debug exporter prints it,
// "NAME VERSION" at detailed verbosity or "NAME@VERSION" at normal, and "" for any other name. An
// @ at the start (an npm scope) and a last word without a digit after an optional v are no
// version.
func versioned(s string) string {
	i := strings.LastIndexAny(s, " @")
	if i <= 0 {
		return ""
	}
	v := strings.TrimPrefix(s[i+1:], "v")
	if v == "" || v[0] < '0' || v[0] > '9' {
		return ""
	}
	return strings.TrimSpace(s[:i])
}

// validateEventNames checks a list of chunk event names: at least one, none empty, none twice.
// field names the configuration key in the message.
func validateEventNames(field string, names []string) error {
	if len(names) == 0 {
		return fmt.Errorf("%s: must list at least one event name, such as %s", field, itlconv.ChunkEventName)
	}
	seen := map[string]bool{}
	for i, n := range names {
		if n == "" {
			return fmt.Errorf("%s[%d]: an event name must not be empty", field, i)
		}
		if seen[n] {
			return fmt.Errorf("%s[%d]: %q is listed twice; list each name once, highest priority first", field, i, n)
		}
		seen[n] = true
	}
	return nil
}
