package otelitl

import "github.com/otelitl/itl/itlconv"

// ScopeName is the instrumentation scope of the tracer and meter this package uses.
const ScopeName = itlconv.ClientScope

// Version is the version of this instrumentation, reported in the instrumentation scope.
const Version = "0.1.0"
