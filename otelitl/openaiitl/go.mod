module github.com/otelitl/itl/otelitl/openaiitl

go 1.26.0

require (
	github.com/openai/openai-go/v3 v3.98.0
	github.com/otelitl/itl/itlconv v0.1.0
	github.com/otelitl/itl/otelitl v0.1.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/coder/websocket v1.8.15 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/tidwall/gjson v1.20.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
)

// Every other module of this repository, from this checkout (scripts/modules.sh lists them).
replace (
	github.com/otelitl/itl/bench => ../../bench
	github.com/otelitl/itl/cmd/otelcol-itl => ../../cmd/otelcol-itl
	github.com/otelitl/itl/cmd/otelitl-proxy => ../../cmd/otelitl-proxy
	github.com/otelitl/itl/collector => ../../collector
	github.com/otelitl/itl/e2e => ../../e2e
	github.com/otelitl/itl/examples => ../../examples
	github.com/otelitl/itl/internal => ../../internal
	github.com/otelitl/itl/itlconv => ../../itlconv
	github.com/otelitl/itl/otelitl => ..
	github.com/otelitl/itl/otelitl/anthropicitl => ../anthropicitl
	github.com/otelitl/itl/otelitl/goopenaiitl => ../goopenaiitl
	github.com/otelitl/itl/otelitl/test => ../test
)
