// Package e2e holds the end-to-end tests that run the built otelcol-itl distribution against real
// backends. They need processes and packages a unit test run does not have, so they run only when
// OTELITL_E2E=1, which `make e2e` (part of `make test`) sets after installing what they need. The
// few that need neither (TestRedirectHopNotAGeneration) run in every `go test`.
package e2e
