package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/confmap"
)

// defaultBatchMinSize is exporterhelper v0.165's default sending_queue::batch::min_size.
const defaultBatchMinSize = 8192

// queueSizes refuses, at validate and before start, an exporter's sending_queue::queue_size that
// the collector would refuse without saying what to give, or take as another number:
//
//   - text, such as 10MB or 256MiB (ITL_QUEUE_BYTES=10MB): the collector said "'queue_size'
//     expected type 'int64', got unconvertible type 'string'", neither the unit nor the fix;
//   - a number beyond int64, which the collector's decoder wrapped to a negative one and refused
//     as "`queue_size` must be positive" (ITL_QUEUE_BYTES=99999999999999999999);
//   - a number with a fraction, which the decoder cut silently (268435456.5 was 268435456);
//   - zero or less: the collector's "`queue_size` must be positive" named no unit nor a value;
//   - one below the batch's min_size (8192 by default) in the same sizer, which the collector
//     refused as "`min_size` must be less than or equal to `queue_size`", naming a min_size the
//     shipped configs do not set (ITL_QUEUE_BYTES=1).
//
// Each error names the key, the value, the queue's unit (its sizer) and a value to give; the note
// that follows names the variable that set it.
func queueSizes() confmap.ConverterFactory {
	return confmap.NewConverterFactory(func(confmap.ConverterSettings) confmap.Converter { return queueSizesConverter{} })
}

type queueSizesConverter struct{}

func (queueSizesConverter) Convert(_ context.Context, conf *confmap.Conf) error {
	exporters := asMap(conf.Get("exporters"))
	ids := make([]string, 0, len(exporters))
	for id := range exporters {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var errs []error
	for _, id := range ids {
		queue := asMap(asMap(exporters[id])["sending_queue"])
		v, ok := queue["queue_size"]
		if enabled, set := queue["enabled"].(bool); !ok || v == nil || (set && !enabled) {
			continue // no size, or a queue turned off, whose settings the collector does not check
		}
		sizer, _ := queue["sizer"].(string)
		if sizer == "" {
			sizer = "requests" // exporterhelper's default
		}
		if err := queueSize(v, sizer, asMap(queue["batch"]), queue); err != nil {
			errs = append(errs, keyErr("exporters::"+id+"::sending_queue::queue_size", err))
		}
	}
	return errors.Join(errs...)
}

// withUnit is a size written with a unit: 10MB, 256 MiB, 2G.
var withUnit = regexp.MustCompile(`^\s*([0-9]+(?:\.[0-9]+)?)\s*([kKMGT])i?[bB]?\s*$`)

// queueSize says what is wrong with the queue_size v of a queue counted in sizer, or nil.
func queueSize(v any, sizer string, batch, queue map[string]any) error {
	example := map[string]string{"bytes": "268435456 for 256 MiB", "items": "100000", "requests": "1000"}[sizer]
	give := "give a whole number of " + sizer
	if example != "" {
		give += ", such as " + example
	}
	var n int64
	switch v := v.(type) {
	case int:
		n = int64(v)
	case int64:
		n = v
	case uint64:
		if v > math.MaxInt64 {
			return fmt.Errorf("%d is more than the most the collector takes, %d; %s", v, int64(math.MaxInt64), give)
		}
		n = int64(v)
	case float64:
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			return fmt.Errorf("%v is not a number; %s", v, give)
		case v >= math.MaxInt64 || v < math.MinInt64:
			return fmt.Errorf("%s is more than the most the collector takes, %d; %s", strconv.FormatFloat(v, 'g', -1, 64), int64(math.MaxInt64), give)
		case v != math.Trunc(v):
			return fmt.Errorf("%s is not a whole number, and the collector would cut it to %d; %s", strconv.FormatFloat(v, 'f', -1, 64), int64(v), give)
		}
		n = int64(v)
	case string:
		if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			// Quoted in the file ("1000"), which the collector's decoder takes as text.
			return fmt.Errorf("%q is a number written as text, which the collector refuses; write it without quotes", v)
		}
		if m := withUnit.FindStringSubmatch(v); m != nil && sizer == "bytes" {
			num, _ := strconv.ParseFloat(m[1], 64)
			prefix := strings.ToUpper(m[2])
			exp := float64(strings.Index("KMGT", prefix) + 1)
			return fmt.Errorf("%q is not a number: queue_size takes a whole number of bytes, without a unit (%s %siB is %.0f, %s %sB %.0f)",
				v, m[1], prefix, num*math.Pow(1024, exp), m[1], prefix, num*math.Pow(1000, exp))
		}
		return fmt.Errorf("%q is not a number; %s, without a unit", v, give)
	default:
		return fmt.Errorf("%v is not a number; %s", v, give)
	}
	if n <= 0 {
		return fmt.Errorf("%d is not above 0: it is the most the queue holds, in %s; %s", n, sizer, give)
	}
	// exporterhelper refuses a queue that cannot hold one batch, when both count alike: the batch's
	// sizer is its own, or the queue's when the queue names one and the batch does not.
	if batch == nil {
		return nil
	}
	batchSizer, _ := batch["sizer"].(string)
	if batchSizer == "" {
		if _, set := queue["sizer"]; !set {
			return nil // items, the batch's default, against requests, the queue's
		}
		batchSizer = sizer
	}
	if batchSizer != sizer {
		return nil
	}
	minSize, where := int64(defaultBatchMinSize), "sending_queue::batch::min_size, 8192 by default"
	switch m := batch["min_size"].(type) {
	case int:
		minSize, where = int64(m), "sending_queue::batch::min_size"
	case int64:
		minSize, where = m, "sending_queue::batch::min_size"
	}
	if n < minSize {
		atLeast := fmt.Sprintf("give at least %d", minSize)
		if example != "" {
			atLeast += ", such as " + example
		}
		return fmt.Errorf("%d is below the batch's smallest size (%s), %d %s, so the queue could never hold a batch; %s", n, where, minSize, sizer, atLeast)
	}
	return nil
}
