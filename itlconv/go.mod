module github.com/otelitl/itl/itlconv

go 1.26.0

require go.opentelemetry.io/otel v1.47.0

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
)

// Every other module of this repository, from this checkout (scripts/modules.sh lists them).
replace (
	github.com/otelitl/itl/bench => ../bench
	github.com/otelitl/itl/cmd/otelcol-itl => ../cmd/otelcol-itl
	github.com/otelitl/itl/cmd/otelitl-proxy => ../cmd/otelitl-proxy
	github.com/otelitl/itl/collector => ../collector
	github.com/otelitl/itl/e2e => ../e2e
	github.com/otelitl/itl/examples => ../examples
	github.com/otelitl/itl/internal => ../internal
	github.com/otelitl/itl/otelitl => ../otelitl
	github.com/otelitl/itl/otelitl/anthropicitl => ../otelitl/anthropicitl
	github.com/otelitl/itl/otelitl/goopenaiitl => ../otelitl/goopenaiitl
	github.com/otelitl/itl/otelitl/openaiitl => ../otelitl/openaiitl
	github.com/otelitl/itl/otelitl/test => ../otelitl/test
)
