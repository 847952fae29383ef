package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"
)

// TestQueueSizes: a sending_queue::queue_size the collector would refuse without a fix (text, zero
// or less, below the batch's min_size), or take as another number (beyond int64, which its
// decoder wrapped negative, or with a fraction, which it cut), is refused with the key, the value,
// the unit and a value to give; the sizes the collector takes as written pass.
func TestQueueSizes(t *testing.T) {
	bytesQueue := func(size any) map[string]any {
		return map[string]any{"sizer": "bytes", "queue_size": size,
			"batch": map[string]any{"sizer": "bytes", "max_size": 3145728}}
	}
	for _, c := range []struct {
		name  string
		queue map[string]any
		want  string // substring of the error; "": none
	}{
		{"the agent's default", bytesQueue(268435456), ""},
		{"huge but an int64", bytesQueue(uint64(9223372036854775807)), ""},
		{"whole, in exponent form", bytesQueue(1e9), ""},
		{"at the batch's min_size", bytesQueue(8192), ""},
		{"requests, no batch", map[string]any{"queue_size": 1}, ""},
		{"requests with a batch of items", map[string]any{"queue_size": 1, "batch": map[string]any{}}, ""},
		{"no size", map[string]any{"sizer": "bytes"}, ""},
		{"a queue turned off", map[string]any{"enabled": false, "queue_size": 0}, ""},
		{"a queue turned on", map[string]any{"enabled": true, "queue_size": 0}, `queue_size: 0 is not above 0`},
		{"with a unit", bytesQueue("10MB"), `queue_size: "10MB" is not a number: queue_size takes a whole number of bytes, without a unit (10 MiB is 10485760, 10 MB 10000000)`},
		{"with a binary unit", bytesQueue("256MiB"), `(256 MiB is 268435456, 256 MB 256000000)`},
		{"quoted", bytesQueue("1000000"), `queue_size: "1000000" is a number written as text, which the collector refuses; write it without quotes`},
		{"text", bytesQueue("lots"), `queue_size: "lots" is not a number; give a whole number of bytes, such as 268435456 for 256 MiB, without a unit`},
		{"negative", bytesQueue(-1), `queue_size: -1 is not above 0: it is the most the queue holds, in bytes; give a whole number of bytes`},
		{"zero", bytesQueue(0), `queue_size: 0 is not above 0`},
		{"beyond int64", bytesQueue(1e20), `queue_size: 1e+20 is more than the most the collector takes, 9223372036854775807`},
		// Below int64 (ITL_QUEUE_BYTES=-99999999999999999999, which YAML reads as a float) or a
		// negative fraction: below 0, not "more than the most".
		{"below int64", bytesQueue(-1e20), `queue_size: -1e+20 is not above 0: it is the most the queue holds, in bytes; give a whole number of bytes`},
		// Beyond a float64, which YAML leaves as text (ITL_QUEUE_BYTES=1e400): a number all the same.
		{"beyond a float", bytesQueue("1e400"), `queue_size: "1e400" is more than the most the collector takes, 9223372036854775807; give a whole number of bytes`},
		{"below a float", bytesQueue("-1e400"), `queue_size: "-1e400" is not above 0: it is the most the queue holds, in bytes; give a whole number of bytes`},
		{"a negative fraction", bytesQueue(-0.5), `queue_size: -0.5 is not above 0: it is the most the queue holds, in bytes`},
		{"beyond int64, unsigned", bytesQueue(uint64(1) << 63), `queue_size: 9223372036854775808 is more than the most the collector takes`},
		{"a fraction", bytesQueue(268435456.5), `queue_size: 268435456.5 is not a whole number, and the collector would cut it to 268435456`},
		{"below the batch's min_size", bytesQueue(1), `queue_size: 1 is below the batch's smallest size (sending_queue::batch::min_size, 8192 by default), 8192 bytes, so the queue could never hold a batch; give at least 8192`},
		{"below a min_size set", map[string]any{"sizer": "bytes", "queue_size": 9000, "batch": map[string]any{"min_size": 10000}}, `queue_size: 9000 is below the batch's smallest size (sending_queue::batch::min_size), 10000 bytes`},
		{"a batch in another sizer", map[string]any{"sizer": "bytes", "queue_size": 1, "batch": map[string]any{"sizer": "items"}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			conf := confmap.NewFromStringMap(map[string]any{"exporters": map[string]any{
				"otlp_grpc": map[string]any{"sending_queue": c.queue}}})
			err := queueSizesConverter{}.Convert(context.Background(), conf)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && err == nil:
				t.Errorf("passed, want %q", c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Errorf("error %v, want %q", err, c.want)
			case c.want != "" && !strings.HasPrefix(err.Error(), "exporters::otlp_grpc::sending_queue::queue_size: "):
				t.Errorf("error %v does not start with the key", err)
			}
		})
	}
}

// TestBatchSizes: a batch's min_size or max_size written with a unit (OTLP_MAX_REQUEST_BYTES=3MB),
// quoted, as text or with a fraction is refused with the key and the number to give, where the
// collector said "'max_size' expected type 'int64', got unconvertible type 'string'", or cut 1.5
// to 1 and then refused 1 as below min_size. Whole numbers are the collector's to judge, and a
// queue turned off is not checked.
func TestBatchSizes(t *testing.T) {
	queue := func(batch map[string]any) map[string]any {
		return map[string]any{"sizer": "bytes", "queue_size": 268435456, "batch": batch}
	}
	const key = "exporters::otlp_grpc::sending_queue::batch::"
	for _, c := range []struct {
		name  string
		queue map[string]any
		want  string // the error; "": none
	}{
		{"the shipped default", queue(map[string]any{"max_size": 3145728}), ""},
		{"min and max", queue(map[string]any{"min_size": 1024, "max_size": 3145728}), ""},
		{"no queue size: the batch checked all the same", map[string]any{"sizer": "bytes", "batch": map[string]any{"max_size": "3MB"}},
			key + `max_size: "3MB" is not a number: max_size takes a whole number of bytes, without a unit (3 MiB is 3145728, 3 MB 3000000)`},
		{"with a unit", queue(map[string]any{"max_size": "3MB"}),
			key + `max_size: "3MB" is not a number: max_size takes a whole number of bytes, without a unit (3 MiB is 3145728, 3 MB 3000000)`},
		{"min_size with a unit", queue(map[string]any{"min_size": "1 KiB"}),
			key + `min_size: "1 KiB" is not a number: min_size takes a whole number of bytes, without a unit (1 KiB is 1024, 1 KB 1000)`},
		{"quoted", queue(map[string]any{"max_size": "1000000"}),
			key + `max_size: "1000000" is a number written as text, which the collector refuses; write it without quotes`},
		{"a fraction", queue(map[string]any{"max_size": 1.5}),
			key + `max_size: 1.5 is not a whole number, and the collector would cut it to 1; give a whole number of bytes, such as 3145728 for 3 MiB`},
		{"text, counted in items", map[string]any{"queue_size": 1000, "batch": map[string]any{"max_size": "lots"}},
			key + `max_size: "lots" is not a number; give a whole number of items, without a unit`},
		{"a unit in items is no unit", map[string]any{"sizer": "items", "queue_size": 100000, "batch": map[string]any{"max_size": "3MB"}},
			key + `max_size: "3MB" is not a number; give a whole number of items, without a unit`},
		{"negative: the collector says", queue(map[string]any{"max_size": -5}), ""},
		// Beyond int64 (OTLP_MAX_REQUEST_BYTES=99999999999999999999, which YAML reads as 1e+20,
		// or a uint64 above int64's most): the collector wrapped it around and said "`max_size`
		// must be non-negative, found -9223372036854775808", of a number nobody wrote.
		{"beyond int64, as a float", queue(map[string]any{"max_size": 1e20}),
			key + `max_size: 1e+20 is more than the most the collector takes, 9223372036854775807; give a whole number of bytes, such as 3145728 for 3 MiB`},
		{"below int64, as a float", queue(map[string]any{"max_size": -1e20}),
			key + `max_size: -1e+20 is negative; give a whole number of bytes, such as 3145728 for 3 MiB`},
		{"beyond a float", queue(map[string]any{"max_size": "1e400"}),
			key + `max_size: "1e400" is more than the most the collector takes, 9223372036854775807; give a whole number of bytes, such as 3145728 for 3 MiB`},
		{"below a float", queue(map[string]any{"max_size": "-1e400"}),
			key + `max_size: "-1e400" is negative; give a whole number of bytes, such as 3145728 for 3 MiB`},
		{"beyond int64, as a uint64", queue(map[string]any{"min_size": uint64(18446744073709551615)}),
			key + `min_size: 18446744073709551615 is more than the most the collector takes, 9223372036854775807; give a whole number of bytes, such as 3145728 for 3 MiB`},
		{"a queue turned off", map[string]any{"enabled": false, "batch": map[string]any{"max_size": "3MB"}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			conf := confmap.NewFromStringMap(map[string]any{"exporters": map[string]any{
				"otlp_grpc": map[string]any{"sending_queue": c.queue}}})
			err := queueSizesConverter{}.Convert(context.Background(), conf)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || err.Error() != c.want):
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// TestQueueHoldsARequest: a queue counted in bytes must hold the largest request an OTLP receiver
// of its pipelines takes, since it takes each request whole; below that, the larger requests were
// refused every time ("sending queue is full") by a collector that started without a word.
func TestQueueHoldsARequest(t *testing.T) {
	conf := func(size any, protocols map[string]any, receivers ...any) *confmap.Conf {
		return confmap.NewFromStringMap(map[string]any{
			"receivers": map[string]any{"otlp": map[string]any{"protocols": protocols}, "otlp/b": map[string]any{"protocols": map[string]any{"grpc": nil}}},
			"exporters": map[string]any{"otlp_grpc": map[string]any{"sending_queue": map[string]any{"sizer": "bytes", "queue_size": size}}},
			"service": map[string]any{"pipelines": map[string]any{
				"traces":  map[string]any{"receivers": receivers, "exporters": []any{"otlp_grpc"}},
				"metrics": map[string]any{"receivers": []any{"itl_metrics"}, "exporters": []any{"otlp_grpc"}},
			}},
		})
	}
	grpc32 := map[string]any{"grpc": map[string]any{"max_recv_msg_size_mib": 32}}
	both := map[string]any{"grpc": map[string]any{"max_recv_msg_size_mib": 8}, "http": map[string]any{"max_request_body_size": 33554432}}
	key := "exporters::otlp_grpc::sending_queue::queue_size: "
	for _, c := range []struct {
		name string
		conf *confmap.Conf
		want string
	}{
		{"holds the largest", conf(33554432, grpc32, "otlp"), ""},
		{"below gRPC's limit", conf(16777216, grpc32, "otlp"), key + "16777216 bytes is less than one request the receiver otlp takes (receivers::otlp::protocols::grpc::max_recv_msg_size_mib: 33554432 bytes): the queue takes a request whole, so a larger one is refused every time (the client is told \"sending queue is full\"); give at least 33554432, or lower receivers::otlp::protocols::grpc::max_recv_msg_size_mib"},
		{"below HTTP's, the larger", conf(16777216, both, "otlp"), "(receivers::otlp::protocols::http::max_request_body_size: 33554432 bytes)"},
		{"defaults", conf(16777216, map[string]any{"grpc": nil, "http": nil}, "otlp"), "(receivers::otlp::protocols::http::max_request_body_size, 20 MiB by default: 20971520 bytes)"},
		{"gRPC's default", conf(1<<20, map[string]any{}, "otlp/b"), "the receiver otlp/b takes (receivers::otlp/b::protocols::grpc::max_recv_msg_size_mib, 4 by default: 4194304 bytes)"},
		{"fed by no OTLP receiver", conf(16777216, grpc32), ""},
		{"a queue in requests", confmap.NewFromStringMap(map[string]any{
			"receivers": map[string]any{"otlp": map[string]any{"protocols": grpc32}},
			"exporters": map[string]any{"otlp_grpc": map[string]any{"sending_queue": map[string]any{"queue_size": 10}}},
			"service":   map[string]any{"pipelines": map[string]any{"traces": map[string]any{"receivers": []any{"otlp"}, "exporters": []any{"otlp_grpc"}}}},
		}), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := queueSizesConverter{}.Convert(context.Background(), c.conf)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && err == nil:
				t.Errorf("passed, want %q", c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// TestValidateRefusesBadQueueBytes: validate refuses gateway.yaml and agent.yaml with an
// ITL_QUEUE_BYTES the collector could not take as a size in bytes, saying what to give and naming
// the variable, where it said "'queue_size' expected type 'int64', got unconvertible type
// 'string'" (10MB), "`queue_size` must be positive" (a number beyond int64) and "`min_size` must
// be less than or equal to `queue_size`" (1).
func TestValidateRefusesBadQueueBytes(t *testing.T) {
	setConfigEnv(t)
	for _, config := range []string{"gateway.yaml", "agent.yaml"} {
		exporter := map[string]string{"gateway.yaml": "otlp_http", "agent.yaml": "otlp_grpc"}[config]
		for _, c := range []struct{ value, want string }{
			{"10MB", `"10MB" is not a number: queue_size takes a whole number of bytes, without a unit (10 MiB is 10485760, 10 MB 10000000)`},
			{"99999999999999999999", `1e+20 is more than the most the collector takes`},
			// Beyond int64 but within uint64, YAML's parser gives a uint64, which the collector's
			// resolver refuses before any converter, naming no key: "unsupported type=uint64 for
			// retrieved config, ensure that values are wrapped in quotes".
			{"9999999999999999999", `9999999999999999999 is beyond the largest whole number the collector reads, 9223372036854775807; give a smaller one`},
			{"1", `1 is below the batch's smallest size`},
			{"-1", `-1 is not above 0`},
			{"-99999999999999999999", `-1e+20 is not above 0`},
			{"16777216", `16777216 bytes is less than one request the receiver otlp takes (receivers::otlp::protocols::grpc::max_recv_msg_size_mib: 33554432 bytes)`},
		} {
			out, code := otelcolItl(t, []string{"ITL_QUEUE_BYTES=" + c.value}, "validate", "--config", filepath.Join("..", "..", "exporter-config", config))
			if code != 1 {
				t.Errorf("%s, ITL_QUEUE_BYTES=%s: exit status %d, want 1\n%s", config, c.value, code, out)
				continue
			}
			for _, want := range []string{"exporters::" + exporter + "::sending_queue::queue_size: " + c.want, `ITL_QUEUE_BYTES="` + c.value + `"`} {
				if !strings.Contains(out, want) {
					t.Errorf("%s, ITL_QUEUE_BYTES=%s: the output lacks %q:\n%s", config, c.value, want, out)
				}
			}
		}
	}
}
