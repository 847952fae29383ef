package itlmetricsconnector

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelitl/itl/collector/internal/confcheck/confchecktest"
)

// TestLoadConfig reads every id of testdata/config.yaml, as the collector does (unmarshal onto the
// defaults, then confmap.Validate), and compares the whole struct, or the whole error.
func TestLoadConfig(t *testing.T) {
	require.NoError(t, componenttest.CheckConfigStruct(NewFactory().CreateDefaultConfig()))
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	def := func(edit func(*Config)) *Config {
		cfg := createDefaultConfig().(*Config)
		edit(cfg)
		return cfg
	}
	unknown := "unknown"
	tests := []struct {
		id               component.ID
		want             *Config
		wantErr          string
		wantUnmarshalErr string
	}{
		{id: component.NewID(Type), want: def(func(*Config) {})},
		{id: component.NewIDWithName(Type, "custom"), want: def(func(c *Config) {
			c.Dimensions = []Dimension{{Name: "gen_ai.request.model"}, {Name: "deployment.environment", Default: &unknown}}
			c.AggregationTemporality = "delta"
			c.MetricsFlushInterval = 5 * time.Second
			c.MetricsExpiration = 0
			c.AggregationCardinalityLimit = 500
			c.AddInstanceID = true
			c.Exemplars.Enabled = false
			c.Histogram.Explicit.Buckets.TimePerOutputChunk = []float64{0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1}
			c.StallThreshold = 500 * time.Millisecond
		})},
		{id: component.NewIDWithName(Type, "exponential"), want: def(func(c *Config) { c.Histogram.Exponential.MaxSize = 80 })},
		{id: component.NewIDWithName(Type, "contrib_delta"), want: def(func(c *Config) { c.AggregationTemporality = "AGGREGATION_TEMPORALITY_DELTA" })},
		{id: component.NewIDWithName(Type, "contrib_cumulative"), want: def(func(c *Config) { c.AggregationTemporality = "AGGREGATION_TEMPORALITY_CUMULATIVE" })},
		{id: component.NewIDWithName(Type, "bad_temporality"), wantErr: `aggregation_temporality: "deltas" is not known; use cumulative or delta (or AGGREGATION_TEMPORALITY_CUMULATIVE / AGGREGATION_TEMPORALITY_DELTA)`},
		{id: component.NewIDWithName(Type, "bad_buckets"), wantErr: "histogram.explicit.buckets.time_to_first_chunk: boundaries must increase strictly; 0.5 follows 1"},
		{id: component.NewIDWithName(Type, "bad_exclude"), wantErr: `exclude_dimensions[0]: "gen_ai.system" is not a dimension; the dimensions are service.name, gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model, gen_ai.response.model, server.address`},
		{id: component.NewIDWithName(Type, "both_histograms"), wantErr: "histogram: set either explicit.buckets or exponential.max_size, not both"},
		{id: component.NewIDWithName(Type, "no_limit"), wantErr: "aggregation_cardinality_limit: 0 is outside [1, 1000000]; the default is 10000"},
		{id: component.NewIDWithName(Type, "limit_huge"), wantErr: "aggregation_cardinality_limit: 100000000 is outside [1, 1000000]; the default is 10000"},
		{id: component.NewIDWithName(Type, "bad_stall"), wantErr: "stall_threshold: -1s is outside [1ms, 1h0m0s]; the default is 250ms"},
		{id: component.NewIDWithName(Type, "unitless_stall"), wantUnmarshalErr: "stall_threshold: 250 has no unit, and would be read as nanoseconds; write it with one, such as 250s or 250ms"},
		{id: component.NewIDWithName(Type, "unitless_flush"), wantUnmarshalErr: "metrics_flush_interval: 15 has no unit, and would be read as nanoseconds; write it with one, such as 15s or 15ms"},
		{id: component.NewIDWithName(Type, "misspelled_dimension"), wantUnmarshalErr: "dimensions[1].defualt: not a setting; did you mean dimensions[1].default?\ndimensions[1].nam: not a setting; did you mean dimensions[1].name?"},
		{id: component.NewIDWithName(Type, "misspelled_nested"), wantUnmarshalErr: "histogram.exponential.maxsize: not a setting; did you mean histogram.exponential.max_size?"},
		{id: component.NewIDWithName(Type, "dotted"), wantUnmarshalErr: "histogram.exponential.max_size: not a setting as written; write it nested, one key a level (histogram: exponential: max_size:)"},
		{id: component.NewIDWithName(Type, "unknown"), wantUnmarshalErr: "bogus: not a setting; the settings here are add_instance_id, aggregation_cardinality_limit, aggregation_temporality, chunk_event_names, deduplicate, dimension_value_max_length, dimensions, exclude_dimensions, excluded_operations, excluded_scopes, exemplars, histogram, max_chunks, metrics_expiration, metrics_flush_interval, stall_threshold"},
		{id: component.NewIDWithName(Type, "quoted_flush"), wantUnmarshalErr: `metrics_flush_interval: " 15 " has no unit; write it with one, such as 15s or 15ms`},
		{id: component.NewIDWithName(Type, "fractional_limit"), wantUnmarshalErr: "aggregation_cardinality_limit: 0.5 is not a whole number; write a whole number, such as 1"},
		{id: component.NewIDWithName(Type, "fractional_exemplars"), wantUnmarshalErr: "exemplars.max_per_data_point: 2.5 is not a whole number; write a whole number, such as 3"},
		{id: component.NewIDWithName(Type, "fractional_expo"), wantUnmarshalErr: "histogram.exponential.max_size: 160.4 is not a whole number; write a whole number, such as 160"},
		{id: component.NewIDWithName(Type, "flush_1ns"), wantErr: "metrics_flush_interval: 1ns is outside [100ms, 1h0m0s]; the default is 15s"},
		{id: component.NewIDWithName(Type, "negative_expiration"), wantErr: "metrics_expiration: -1s is outside [0s, 24h0m0s]; the default is 5m0s, or 0 to keep series forever"},
		{id: component.NewIDWithName(Type, "nan_boundary"), wantErr: "histogram.explicit.buckets.time_per_output_chunk: boundary 2 of 3 is NaN; boundaries must be finite numbers"},
		{id: component.NewIDWithName(Type, "inf_boundary"), wantErr: "histogram.explicit.buckets.duration: boundary 2 of 2 is +Inf; boundaries must be finite numbers"},
		{id: component.NewIDWithName(Type, "expo_1"), wantErr: "histogram.exponential.max_size: 1 is outside [2, 16384]; 160 buckets is the usual size, and 0, the default, keeps explicit buckets"},
		{id: component.NewIDWithName(Type, "expo_2e9"), wantErr: "histogram.exponential.max_size: 2000000000 is outside [2, 16384]; 160 buckets is the usual size, and 0, the default, keeps explicit buckets"},
		{id: component.NewIDWithName(Type, "expo_huge"), wantErr: "histogram.exponential.max_size: 9999999999 is outside [2, 16384]; 160 buckets is the usual size, and 0, the default, keeps explicit buckets"},
		{id: component.NewIDWithName(Type, "exemplars_100000"), wantErr: "exemplars.max_per_data_point: 100000 is outside [1, 100]; the default is 5"},
		{id: component.NewIDWithName(Type, "exemplars_off_1000"), wantErr: "exemplars.max_per_data_point: 1000 is outside [1, 100]; the default is 5"},
		{id: component.NewIDWithName(Type, "own_dimension"), wantErr: `dimensions[0].name: "error.type" is an attribute the connector sets itself (the error of a failed generation, on the duration's points); remove it from dimensions`},
		{id: component.NewIDWithName(Type, "bare_dimension"), wantUnmarshalErr: "dimensions[0]: gen_ai.request.model is not a dimension; write each as a map with its name (and a default, if you want one), such as - name: gen_ai.request.model\ndimensions[2]: 42 is not a dimension"},
		{id: component.NewIDWithName(Type, "long_default"), wantErr: "dimensions[0].default: 24 bytes, longer than dimension_value_max_length (16), so every series would carry it cut; shorten it or raise dimension_value_max_length"},
		{id: component.NewIDWithName(Type, "value_length_0"), wantErr: "dimension_value_max_length: 0 is outside [16, 4096]; the default is 256"},
		{id: component.NewIDWithName(Type, "deduplicate"), want: def(func(c *Config) { c.Deduplicate.MaxSpans = 100_000 })},
		{id: component.NewIDWithName(Type, "dedup_negative"), wantErr: "deduplicate.max_spans: -1 is negative; set 0 (the default) to count every span each time it comes, or the number of recent spans to remember, such as 100000"},
		{id: component.NewIDWithName(Type, "dedup_huge"), wantErr: "deduplicate.max_spans: 20000000 would hold up to 1221 MiB of span IDs (64 bytes a span); at most 10000000 (610 MiB), and 100000 covers the retries of a client's queue many times over"},
		// A section written to turn deduplication on, which turned nothing on.
		{id: component.NewIDWithName(Type, "dedup_empty"), wantUnmarshalErr: "deduplicate: the section sets no max_spans, so every span would count each time it comes, as without it; set it, such as deduplicate: {max_spans: 100000}, or leave the section out"},
		{id: component.NewIDWithName(Type, "dedup_null"), wantUnmarshalErr: "deduplicate: the section sets no max_spans, so every span would count each time it comes, as without it; set it, such as deduplicate: {max_spans: 100000}, or leave the section out"},
		{id: component.NewIDWithName(Type, "dedup_value_null"), wantUnmarshalErr: "deduplicate: the section sets no max_spans, so every span would count each time it comes, as without it; set it, such as deduplicate: {max_spans: 100000}, or leave the section out"},
		// max_spans read as a number of attempts: it would remember the last 2 model calls.
		{id: component.NewIDWithName(Type, "dedup_5"), wantErr: "deduplicate.max_spans: 5 is too few to catch a retry: a span is remembered while fewer than max_spans/2 model calls come after it, and an OTel SDK sends up to 512 spans a request by default, so below 1024 a request's own model calls can push its first ones out before it comes again; set at least 1024, such as 100000, or 0 (the default) to count every span each time it comes"},
		{id: component.NewIDWithName(Type, "dedup_1023"), wantErr: "deduplicate.max_spans: 1023 is too few to catch a retry: a span is remembered while fewer than max_spans/2 model calls come after it, and an OTel SDK sends up to 512 spans a request by default, so below 1024 a request's own model calls can push its first ones out before it comes again; set at least 1024, such as 100000, or 0 (the default) to count every span each time it comes"},
		{id: component.NewIDWithName(Type, "dedup_1024"), want: def(func(c *Config) { c.Deduplicate.MaxSpans = 1024 })},
		// 64 bytes a span of that many is 2^49 MiB, where the product wrapped around and said -0 MiB.
		{id: component.NewIDWithName(Type, "dedup_maxint"), wantErr: "deduplicate.max_spans: 9223372036854775807 would hold up to 562949953421312 MiB of span IDs (64 bytes a span); at most 10000000 (610 MiB), and 100000 covers the retries of a client's queue many times over"},
		{id: component.NewIDWithName(Type, "dedup_fraction"), wantUnmarshalErr: "deduplicate.max_spans: 1000.5 is not a whole number; write a whole number, such as 1001"},
		{id: component.NewIDWithName(Type, "dedup_flat"), wantUnmarshalErr: "dedup_max_spans: not a setting; the settings here are add_instance_id, aggregation_cardinality_limit, aggregation_temporality, chunk_event_names, deduplicate,"},
		{id: component.NewIDWithName(Type, "dedup_true"), wantUnmarshalErr: "deduplicate: true is not a section; write its settings under it, such as deduplicate: {max_spans: 100000}"},
		{id: component.NewIDWithName(Type, "dedup_number"), wantUnmarshalErr: "deduplicate: 100000 is not a section; write its settings under it, such as deduplicate: {max_spans: 100000}"},
		{id: component.NewIDWithName(Type, "exemplars_true"), wantUnmarshalErr: "exemplars: true is not a section; write its settings under it, such as exemplars: {enabled: true}"},
		{id: component.NewIDWithName(Type, "exponential_number"), wantUnmarshalErr: "histogram.exponential: 160 is not a section; write its settings under it, such as histogram: {exponential: {max_size: 160}}"},
		{id: component.NewIDWithName(Type, "buckets_list"), wantUnmarshalErr: "histogram.explicit.buckets: [0.1 0.5 1] is not a section; write its settings under it, such as histogram: {explicit: {buckets: {duration: [0.5, 1, 2, 5]}}}"},
		{id: component.NewIDWithName(Type, "histogram_list"), wantUnmarshalErr: "histogram: [exponential] is not a section; write its settings under it, such as histogram: {exponential: {max_size: 160}}"},
		{id: component.NewIDWithName(Type, "scopes"), want: def(func(c *Config) { c.ExcludedScopes = []string{"opentelemetry.instrumentation.openai.v1"} })},
		{id: component.NewIDWithName(Type, "scopes_many"), wantErr: "excluded_scopes: 65 names, more than 64; list the instrumentation scopes whose spans another instrumentation already records"},
		{id: component.NewIDWithName(Type, "excluded_empty"), wantErr: "excluded_operations[1]: an operation name must not be empty; the default is [invoke_agent invoke_workflow create_agent agent_step execute_tool execute_node agent_handoff guardrail_check plan retrieval fetch_response create_memory_store delete_memory_store create_memory update_memory upsert_memory search_memory delete_memory]"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.id.String()] = true
		t.Run(tt.id.String(), func(t *testing.T) {
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			cfg := NewFactory().CreateDefaultConfig().(*Config)
			if tt.wantUnmarshalErr != "" {
				err := sub.Unmarshal(cfg)
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantUnmarshalErr)
				return
			}
			require.NoError(t, sub.Unmarshal(cfg))
			err = confmap.Validate(cfg)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantErr, err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
	for id := range cm.ToStringMap() {
		assert.Truef(t, seen[id], "testdata/config.yaml has %s, which no test case reads", id)
	}
}

// TestEverySectionHasAnExample: every setting that is a section of its own has the example
// bareSections gives, so that one added later is not refused with the decoder's Go words alone.
func TestEverySectionHasAnExample(t *testing.T) {
	var check func(typ reflect.Type, prefix string)
	check = func(typ reflect.Type, prefix string) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
			if f.Type.Kind() != reflect.Struct || opts == "squash" || name == "" {
				continue
			}
			if _, ok := sectionExamples[prefix+name]; !ok {
				t.Errorf("the section %s has no example in sectionExamples", prefix+name)
			}
			check(f.Type, prefix+name+".")
		}
	}
	check(reflect.TypeFor[Config](), "")
	for name := range sectionExamples {
		if !strings.Contains(sectionExample(name), name[strings.LastIndex(name, ".")+1:]+": {") {
			t.Errorf("the example of %s does not hold it: %s", name, sectionExample(name))
		}
	}
}

// TestEveryCountAndDurationChecked: every setting of an integer type refuses a fraction, and every
// duration a number without its unit, naming the setting; zero needs no unit.
func TestEveryCountAndDurationChecked(t *testing.T) {
	confchecktest.EveryCountAndDuration(t, func() any { return NewFactory().CreateDefaultConfig() })
}

// TestSettingsFromVariables: the same checks hold when a setting's value, or the whole map above
// it, comes from an environment variable, and a misspelled key inside such a map is named.
func TestSettingsFromVariables(t *testing.T) {
	confchecktest.FromVariables(t, func() any { return NewFactory().CreateDefaultConfig() })
}
