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
//     shipped configs do not set (ITL_QUEUE_BYTES=1);
//   - a queue counted in bytes that holds less than one request its OTLP receivers accept: the
//     queue takes each request whole, as a receiver hands it over (the batch cuts it only when it
//     leaves), so a larger one was refused every time, the client told "sending queue is full"
//     however empty the queue was, and the collector started without a word (ITL_QUEUE_BYTES of
//     16 MiB beside receivers that take 32).
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
	largest := largestRequests(conf)
	var errs []error
	for _, id := range ids {
		queue := asMap(asMap(exporters[id])["sending_queue"])
		if enabled, set := queue["enabled"].(bool); set && !enabled {
			continue // a queue turned off, whose settings the collector does not check
		}
		if batch := asMap(queue["batch"]); batch != nil {
			batchSizer, _ := batch["sizer"].(string)
			if batchSizer == "" {
				// The queue's, when it names one; items, exporterhelper's default, when not.
				if batchSizer, _ = queue["sizer"].(string); batchSizer == "" {
					batchSizer = "items"
				}
			}
			for _, k := range []string{"min_size", "max_size"} {
				if err := batchSize(k, batch[k], batchSizer); err != nil {
					errs = append(errs, keyErr("exporters::"+id+"::sending_queue::batch::"+k, err))
				}
			}
		}
		v, ok := queue["queue_size"]
		if !ok || v == nil {
			continue // no size: the exporter's default
		}
		sizer, _ := queue["sizer"].(string)
		if sizer == "" {
			sizer = "requests" // exporterhelper's default
		}
		err := queueSize(v, sizer, asMap(queue["batch"]), queue)
		if r, fed := largest[id]; err == nil && fed && sizer == "bytes" {
			if n, _ := wholeNumber(v); n < r.bytes {
				err = fmt.Errorf("%d bytes is less than one request the receiver %s takes (%s: %d bytes): the queue takes a request whole, so a larger one is refused every time (the client is told \"sending queue is full\"); give at least %d, or lower %s", n, r.receiver, r.key, r.bytes, r.bytes, r.key)
			}
		}
		if err != nil {
			errs = append(errs, keyErr("exporters::"+id+"::sending_queue::queue_size", err))
		}
	}
	return errors.Join(errs...)
}

// request is the largest request an OTLP receiver takes, and the key that sets it.
type request struct {
	bytes         int64
	receiver, key string
}

// The OTLP receiver's limits when its config sets none: gRPC's default message size, and
// confighttp's default max_request_body_size.
const (
	defaultGRPCMessage = 4 << 20
	defaultHTTPBody    = 20 << 20
)

// largestRequests returns, for each exporter that a pipeline feeds from OTLP receivers, the
// largest request any of those receivers takes.
func largestRequests(conf *confmap.Conf) map[string]request {
	receivers := asMap(conf.Get("receivers"))
	out := map[string]request{}
	for _, p := range asMap(asMap(conf.Get("service"))["pipelines"]) {
		var max request
		for _, id := range asStrings(asMap(p)["receivers"]) {
			if id != "otlp" && !strings.HasPrefix(id, "otlp/") {
				continue
			}
			protocols := asMap(asMap(receivers[id])["protocols"])
			key := "receivers::" + id + "::protocols::"
			if grpc, ok := protocols["grpc"]; ok {
				r := request{defaultGRPCMessage, id, key + "grpc::max_recv_msg_size_mib, 4 by default"}
				if mib, ok := wholeNumber(asMap(grpc)["max_recv_msg_size_mib"]); ok && mib > 0 && mib <= math.MaxInt64>>20 {
					r = request{mib << 20, id, key + "grpc::max_recv_msg_size_mib"}
				}
				if r.bytes > max.bytes {
					max = r
				}
			}
			if http, ok := protocols["http"]; ok {
				r := request{defaultHTTPBody, id, key + "http::max_request_body_size, 20 MiB by default"}
				if n, ok := wholeNumber(asMap(http)["max_request_body_size"]); ok && n > 0 {
					r = request{n, id, key + "http::max_request_body_size"}
				}
				if r.bytes > max.bytes {
					max = r
				}
			}
		}
		if max.bytes == 0 {
			continue
		}
		for _, id := range asStrings(asMap(p)["exporters"]) {
			if max.bytes > out[id].bytes {
				out[id] = max
			}
		}
	}
	return out
}

// wholeNumber returns v as an int64 when it is a whole number the collector would take as one.
func wholeNumber(v any) (int64, bool) {
	switch v := v.(type) {
	case int:
		return int64(v), true
	case int64:
		return v, true
	case uint64:
		return int64(v), v <= math.MaxInt64
	case float64:
		return int64(v), v == math.Trunc(v) && v < math.MaxInt64 && v >= math.MinInt64
	}
	return 0, false
}

// asStrings returns the strings of a list in a configuration.
func asStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// withUnit is a size written with a unit: 10MB, 256 MiB, 2G.
var withUnit = regexp.MustCompile(`^\s*([0-9]+(?:\.[0-9]+)?)\s*([kKMGT])i?[bB]?\s*$`)

// withUnitErr says that v, the text of the setting key counted in sizer, is a size in bytes
// written with a unit, and how many bytes it is in either reading; nil for other text.
func withUnitErr(key, v, sizer string) error {
	m := withUnit.FindStringSubmatch(v)
	if m == nil || sizer != "bytes" {
		return nil
	}
	num, _ := strconv.ParseFloat(m[1], 64)
	prefix := strings.ToUpper(m[2])
	exp := float64(strings.Index("KMGT", prefix) + 1)
	return fmt.Errorf("%q is not a number: %s takes a whole number of bytes, without a unit (%s %siB is %.0f, %s %sB %.0f)",
		v, key, m[1], prefix, num*math.Pow(1024, exp), m[1], prefix, num*math.Pow(1000, exp))
}

// batchSize says what is wrong with a batch's min_size or max_size v, counted in sizer, that the
// collector would refuse without the fix ("'max_size' expected type 'int64', got unconvertible
// type 'string'" of OTLP_MAX_REQUEST_BYTES=3MB) or cut silently (1.5 taken as 1); nil otherwise.
// Whole numbers within int64 are the collector's to judge: its messages name the bounds.
func batchSize(key string, v any, sizer string) error {
	give := "give a whole number of " + sizer
	if sizer == "bytes" {
		give += ", such as 3145728 for 3 MiB"
	}
	switch v := v.(type) {
	case uint64:
		if v > math.MaxInt64 {
			return fmt.Errorf("%d is more than the most the collector takes, %d; %s", v, int64(math.MaxInt64), give)
		}
	case float64:
		if v >= math.MaxInt64 && !math.IsInf(v, 0) {
			// 99999999999999999999, which YAML reads as 1e+20: the collector wrapped it around
			// and refused "-9223372036854775808", a number nobody wrote.
			return fmt.Errorf("%s is more than the most the collector takes, %d; %s", strconv.FormatFloat(v, 'g', -1, 64), int64(math.MaxInt64), give)
		}
		if v <= math.MinInt64 && !math.IsInf(v, 0) {
			// -99999999999999999999: "found -9223372036854775808" too.
			return fmt.Errorf("%s is negative; %s", strconv.FormatFloat(v, 'g', -1, 64), give)
		}
		if v >= 0 && v < math.MaxInt64 && v != math.Trunc(v) {
			return fmt.Errorf("%s is not a whole number, and the collector would cut it to %d; %s", strconv.FormatFloat(v, 'f', -1, 64), int64(v), give)
		}
	case string:
		return textSize(key, v, sizer, give, "is negative")
	}
	return nil
}

// textSize says what is wrong with v, the size of the setting key counted in sizer, given as text:
// a number in quotes, one beyond a float64 (which YAML leaves as text: below says what a negative
// one is), one with a unit, or none. give is the fix to give.
func textSize(key, v, sizer, give, below string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	switch {
	case err == nil:
		// Quoted in the file ("1000"), which the collector's decoder takes as text.
		return fmt.Errorf("%q is a number written as text, which the collector refuses; write it without quotes", v)
	case errors.Is(err, strconv.ErrRange) && f < 0:
		// Beyond a float64 (-1e400), which YAML leaves as text.
		return fmt.Errorf("%q %s; %s", v, below, give)
	case errors.Is(err, strconv.ErrRange) && f > 1:
		// 1e400; ParseFloat's ErrRange is also a number too small, 1e-400, left to the next case.
		return fmt.Errorf("%q is more than the most the collector takes, %d; %s", v, int64(math.MaxInt64), give)
	}
	if err := withUnitErr(key, v, sizer); err != nil {
		return err
	}
	return fmt.Errorf("%q is not a number; %s, without a unit", v, give)
}

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
		case v <= 0:
			// Checked before the bounds and the fraction: -1e20 (a number below int64, which
			// YAML reads as a float) is below 0, not more than the most; -0.5 too.
			return fmt.Errorf("%s is not above 0: it is the most the queue holds, in %s; %s", strconv.FormatFloat(v, 'g', -1, 64), sizer, give)
		case v >= math.MaxInt64:
			return fmt.Errorf("%s is more than the most the collector takes, %d; %s", strconv.FormatFloat(v, 'g', -1, 64), int64(math.MaxInt64), give)
		case v != math.Trunc(v):
			return fmt.Errorf("%s is not a whole number, and the collector would cut it to %d; %s", strconv.FormatFloat(v, 'f', -1, 64), int64(v), give)
		}
		n = int64(v)
	case string:
		return textSize("queue_size", v, sizer, give, "is not above 0: it is the most the queue holds, in "+sizer)
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
