package itlprocessor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelitl/itl/collector/genaispan"
	"github.com/otelitl/itl/collector/internal/confcheck/confchecktest"
	"github.com/otelitl/itl/itlconv"
)

// TestLoadConfig reads every id of testdata/config.yaml, as the collector does (unmarshal onto the
// defaults, then confmap.Validate), and compares the whole struct, or the whole error.
func TestLoadConfig(t *testing.T) {
	require.NoError(t, componenttest.CheckConfigStruct(NewFactory().CreateDefaultConfig()))
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	custom := genaispan.DefaultConfig()
	custom.StallThreshold = 400 * time.Millisecond
	custom.ChunkEventNames = []string{itlconv.ChunkEventName, "my.chunk"}
	custom.MaxChunks = 50000
	custom.ExcludedScopes = []string{"opentelemetry.instrumentation.openai.v1", "@traceloop/instrumentation-openai"}
	oneScope := genaispan.DefaultConfig()
	oneScope.ExcludedScopes = []string{"@traceloop/instrumentation-openai"}
	tests := []struct {
		id               component.ID
		want             *Config
		wantErr          string
		wantUnmarshalErr string
	}{
		{id: component.NewID(Type), want: &Config{KeepClientFigures: true, Config: genaispan.DefaultConfig()}},
		{id: component.NewIDWithName(Type, "custom"), want: &Config{KeepClientFigures: true, Config: custom, CompactEvents: true}},
		{id: component.NewIDWithName(Type, "drop"), want: &Config{KeepClientFigures: true, Config: genaispan.DefaultConfig(), DropTimeline: true}},
		{id: component.NewIDWithName(Type, "recompute"), want: &Config{Config: genaispan.DefaultConfig()}},
		{id: component.NewIDWithName(Type, "bad_threshold"), wantErr: "stall_threshold: 0s is outside [1ms, 1h0m0s]; the default is 250ms"},
		{id: component.NewIDWithName(Type, "unitless_stall"), wantUnmarshalErr: "stall_threshold: 250 has no unit, and would be read as nanoseconds; write it with one, such as 250s or 250ms"},
		{id: component.NewIDWithName(Type, "misspelled"), wantUnmarshalErr: "drop_timelines: not a setting; did you mean drop_timeline?\nstall_treshold: not a setting; did you mean stall_threshold?"},
		{id: component.NewIDWithName(Type, "float_beyond_int"), wantUnmarshalErr: "max_chunks: 1e+20 is far beyond any value the setting takes; write a whole number in its range"},
		{id: component.NewIDWithName(Type, "quoted_max_chunks"), wantUnmarshalErr: `max_chunks: "100" is in quotes; write the number without them, as 100`},
		{id: component.NewIDWithName(Type, "quoted_stall"), wantUnmarshalErr: `stall_threshold: "250" has no unit; write it with one, such as 250s or 250ms`},
		{id: component.NewIDWithName(Type, "fractional_max_chunks"), wantUnmarshalErr: "max_chunks: 1.5 is not a whole number; write a whole number, such as 2"},
		{id: component.NewIDWithName(Type, "huge_max_chunks"), wantErr: "max_chunks: 100000000 is outside [1, 4194304]; the default is 262144"},
		{id: component.NewIDWithName(Type, "bad_names"), wantErr: `chunk_event_names[1]: "otelitl.chunk" is listed twice; list each name once, highest priority first`},
		{id: component.NewIDWithName(Type, "no_names"), wantErr: "chunk_event_names: must list at least one event name, such as otelitl.chunk"},
		{id: component.NewIDWithName(Type, "bad_max_chunks"), wantErr: "max_chunks: -1 is outside [1, 4194304]; the default is 262144"},
		{id: component.NewIDWithName(Type, "bad_scopes"), wantErr: "excluded_scopes[0]: a scope name must not be empty; write the instrumentation scope's name as its spans carry it, such as @traceloop/instrumentation-openai\n" +
			`excluded_scopes[1]: " ai" has spaces at an end, which no scope name has, so it would exclude nothing; write "ai"` + "\n" +
			`excluded_scopes[3]: "gen_ai" is listed twice; list each scope once`},
		// One name written without a list is a list of one, as the collector reads any list.
		{id: component.NewIDWithName(Type, "scope_string"), want: &Config{KeepClientFigures: true, Config: oneScope}},
		// A list YAML could not read, taken as text, would exclude nothing.
		{id: component.NewIDWithName(Type, "bracketed_scope"), wantErr: `excluded_scopes: "[@traceloop/instrumentation-openai]" is a list that YAML could not read (a name that begins with @ must be in quotes), taken as text, so it would exclude nothing; write ["@traceloop/instrumentation-openai"]`},
		{id: component.NewIDWithName(Type, "bracketed_scopes"), wantErr: `excluded_scopes: "[@traceloop/instrumentation-openai, com.anthropic.sdk.typescript]" is a list that YAML could not read (a name that begins with @ must be in quotes), taken as text, so it would exclude nothing; write ["@traceloop/instrumentation-openai", "com.anthropic.sdk.typescript"]`},
		{id: component.NewIDWithName(Type, "quoted_scopes"), wantErr: `excluded_scopes: "\"@traceloop/instrumentation-openai\",\"com.anthropic.sdk.typescript\"" has names in quotes outside a list's brackets, which stay part of each name, so it would exclude nothing; write ["@traceloop/instrumentation-openai", "com.anthropic.sdk.typescript"]`},
		{id: component.NewIDWithName(Type, "quoted_empty"), wantErr: `excluded_scopes: "\"\"" has names in quotes outside a list's brackets, which stay part of each name, so it would exclude nothing; write []`},
		// The version the debug exporter prints beside the name is no part of it; a name that
		// begins with @ or ends in .v1 is no version.
		{id: component.NewIDWithName(Type, "versioned_scopes"), wantErr: `excluded_scopes[0]: "@traceloop/instrumentation-openai 0.27.0" ends in a version, which the debug exporter prints beside the scope's name and is no part of it, so it would exclude nothing; write "@traceloop/instrumentation-openai"` + "\n" +
			`excluded_scopes[1]: "opentelemetry.instrumentation.openai_v2@2.4b0" ends in a version, which the debug exporter prints beside the scope's name and is no part of it, so it would exclude nothing; write "opentelemetry.instrumentation.openai_v2"`},
		{id: component.NewIDWithName(Type, "both"), wantErr: "compact_events and drop_timeline: set at most one; drop_timeline removes the timeline that compact_events would rewrite"},
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
