package itlauthextension

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
)

// TestLoadConfig reads every id of testdata/config.yaml, as the collector does (unmarshal onto the
// defaults, then confmap.Validate), and compares the whole struct, or the whole error.
func TestLoadConfig(t *testing.T) {
	require.NoError(t, componenttest.CheckConfigStruct(NewFactory().CreateDefaultConfig()))
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	clients := component.MustNewIDWithName("bearertokenauth", "clients")
	tests := []struct {
		id               component.ID
		want             *Config
		wantErr          string
		wantUnmarshalErr string
	}{
		{id: component.NewID(Type), want: &Config{Authenticator: clients, LogInterval: time.Minute}},
		{id: component.NewIDWithName(Type, "custom"), want: &Config{
			Authenticator: component.MustNewID("bearertokenauth"), LogInterval: 10 * time.Second,
			Hint: "set the agent's OTLP_TOKEN to the gateway's GATEWAY_TOKEN",
		}},
		{id: component.NewIDWithName(Type, "none"), wantErr: "authenticator: not set; name the server authenticator whose refusals to count, such as bearertokenauth/clients, an extension of the service too"},
		{id: component.NewIDWithName(Type, "itself"), wantErr: "authenticator: itl_auth/other is an itl_auth extension; name the authenticator that checks the token, such as bearertokenauth/clients"},
		{id: component.NewIDWithName(Type, "fast"), wantErr: "log_interval: 100ms is outside [1s, 24h0m0s]; the default is 1m0s"},
		{id: component.NewIDWithName(Type, "unitless"), wantUnmarshalErr: "log_interval: 60 has no unit, and would be read as nanoseconds; write it with one, such as 60s or 60ms"},
		{id: component.NewIDWithName(Type, "misspelled"), wantUnmarshalErr: "log_intervall: not a setting; did you mean log_interval?"},
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
