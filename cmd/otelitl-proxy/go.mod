module github.com/otelitl/itl/cmd/otelitl-proxy

go 1.26.0

require (
	github.com/openai/openai-go/v3 v3.98.0
	github.com/otelitl/itl/examples v0.1.0
	github.com/otelitl/itl/internal v0.1.0
	github.com/otelitl/itl/otelitl v0.1.0
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/sdk v1.47.0
	go.opentelemetry.io/otel/trace v1.47.0
)

require (
	github.com/Azure/azure-sdk-for-go/sdk/azcore v1.23.3 // indirect
	github.com/Azure/azure-sdk-for-go/sdk/internal v1.13.0 // indirect
	github.com/cenkalti/backoff/v5 v5.0.3 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/coder/websocket v1.8.15 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.31.0 // indirect
	github.com/otelitl/itl/itlconv v0.1.0 // indirect
	github.com/tidwall/gjson v1.20.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace v1.47.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc v1.47.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp v1.47.0 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/proto/otlp v1.11.1 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260928230214-8a89bd6388cc // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260928230214-8a89bd6388cc // indirect
	google.golang.org/grpc v1.85.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

// Every other module of this repository, from this checkout (scripts/modules.sh lists them).
replace (
	github.com/otelitl/itl/bench => ../../bench
	github.com/otelitl/itl/cmd/otelcol-itl => ../otelcol-itl
	github.com/otelitl/itl/collector => ../../collector
	github.com/otelitl/itl/e2e => ../../e2e
	github.com/otelitl/itl/examples => ../../examples
	github.com/otelitl/itl/internal => ../../internal
	github.com/otelitl/itl/itlconv => ../../itlconv
	github.com/otelitl/itl/otelitl => ../../otelitl
	github.com/otelitl/itl/otelitl/anthropicitl => ../../otelitl/anthropicitl
	github.com/otelitl/itl/otelitl/goopenaiitl => ../../otelitl/goopenaiitl
	github.com/otelitl/itl/otelitl/openaiitl => ../../otelitl/openaiitl
	github.com/otelitl/itl/otelitl/test => ../../otelitl/test
)
