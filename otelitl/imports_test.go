package otelitl_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsOnlyTheAPI keeps the package free of the OpenTelemetry SDK and the collector: an
// application that imports otelitl chooses its own SDK, and must not get ours.
func TestImportsOnlyTheAPI(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	// The API's own dependencies (logr for the global error handler, xxhash for attribute sets, and
	// auto/sdk, which the trace API links for eBPF auto-instrumentation) are allowed; nothing else is.
	allowed := []string{
		"github.com/otelitl/itl/otelitl",
		"github.com/otelitl/itl/itlconv",
		"go.opentelemetry.io/otel",
		"go.opentelemetry.io/auto/sdk",
		"github.com/go-logr/",
		"github.com/cespare/xxhash/v2",
	}
	denied := []string{"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters", "go.opentelemetry.io/collector"}
	deps := strings.Fields(string(out))
	if len(deps) < 5 {
		t.Fatalf("go list returned too few packages to be real: %q", deps)
	}
	for _, p := range deps {
		for _, d := range denied {
			if p == d || strings.HasPrefix(p, d+"/") {
				t.Errorf("otelitl depends on %s; it must import only the OpenTelemetry API", p)
			}
		}
		ok := false
		for _, a := range allowed {
			if p == a || strings.HasPrefix(p, strings.TrimSuffix(a, "/")+"/") || (strings.HasSuffix(a, "/") && strings.HasPrefix(p, a)) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("otelitl depends on %s, which is not on the allow-list of API dependencies", p)
		}
	}
}
