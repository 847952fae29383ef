package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gateConfig is the connector README's layout, the one pdata.useProtoPooling breaks: the batch
// processor before the connector and an exporter.
const gateConfig = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
processors:
  itl:
  batch:
connectors:
  itl_metrics:
exporters:
  debug:
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [itl, batch]
      exporters: [itl_metrics, debug]
    metrics:
      receivers: [itl_metrics]
      exporters: [debug]
`

// poolingWarning is the start of collector/internal/poolgate's warning, which this module cannot
// import.
const poolingWarning = "the pdata.useProtoPooling feature gate is on: in collector v0.165 it loses spans"

// TestProtoPoolingGateWarns starts the built collector with pdata's alpha proto pooling on and off:
// on, the processor and the connector log the warning that the layout loses spans once (not once
// each); off, never. The gate is set from the command line before any component is made, which is
// what the warning relies on.
func TestProtoPoolingGateWarns(t *testing.T) {
	requireE2E(t)
	bin := buildCollector(t)
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint("gate=", on), func(t *testing.T) {
			otlp := freePort(t)
			cfg := filepath.Join(t.TempDir(), "gate.yaml")
			if err := os.WriteFile(cfg, fmt.Appendf(nil, gateConfig, otlp), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"--config", cfg}
			if on {
				args = append(args, "--feature-gates=pdata.useProtoPooling")
			}
			col := start(t, "otelcol-itl", nil, bin, args...)
			var log string
			if !waitFor(30*time.Second, func() bool {
				b, _ := os.ReadFile(col.log)
				log = string(b)
				return strings.Contains(log, "Everything is ready")
			}) {
				t.Fatalf("the collector did not start:\n%s", tail([]byte(log), 3000))
			}
			want := 0
			if on {
				want = 1
			}
			if n := strings.Count(log, poolingWarning); n != want {
				t.Errorf("the warning was logged %d times, want %d:\n%s", n, want, tail([]byte(log), 3000))
			}
		})
	}
}
