package otelitl

// ScopeName is the instrumentation scope of the tracer and meter this package uses.
const ScopeName = "github.com/otelitl/itl/otelitl"

// Version is the version of this instrumentation, reported in the instrumentation scope.
const Version = "0.1.0"
