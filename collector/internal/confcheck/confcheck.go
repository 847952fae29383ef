// Package confcheck holds the checks the collector components' configurations share, so that every
// bad value is refused at start with the same kind of message: the key, the value, and the fix.
package confcheck

import (
	"fmt"
	"math"
	"time"

	"go.opentelemetry.io/collector/confmap"
)

// Units refuses a duration written without its unit: "stall_threshold: 250" decodes as 250
// nanoseconds, and a variable set to "15" as 15 nanoseconds, which is never what was meant. conf is
// a component's configuration before it is decoded; keys are its duration keys ("a::b" for nested
// ones).
func Units(conf *confmap.Conf, keys ...string) error {
	for _, k := range keys {
		switch v := conf.Get(k).(type) {
		case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
			return fmt.Errorf("%s: %v has no unit, and would be read as nanoseconds; write it with one, such as %vs or %vms", k, v, v, v)
		}
	}
	return nil
}

// Between reports a value outside [lo, hi] as an error naming key, the bounds and the default.
func Between[T int | int32 | int64 | time.Duration](key string, v, lo, hi, def T) error {
	if v < lo || v > hi {
		return fmt.Errorf("%s: %v is outside [%v, %v]; the default is %v", key, v, lo, hi, def)
	}
	return nil
}

// Boundaries checks explicit histogram boundaries: at least one, at most max, finite, strictly
// increasing.
func Boundaries(b []float64, max int) error {
	switch {
	case len(b) == 0:
		return fmt.Errorf("needs at least one boundary")
	case len(b) > max:
		return fmt.Errorf("%d boundaries, more than %d: every series keeps a count per bucket", len(b), max)
	}
	for i, v := range b {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("boundary %d is %v; boundaries must be finite numbers", i, v)
		}
		if i > 0 && v <= b[i-1] {
			return fmt.Errorf("boundaries must increase strictly; %v follows %v", v, b[i-1])
		}
	}
	return nil
}
