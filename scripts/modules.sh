#!/usr/bin/env bash
# Lists the repository's Go modules, one directory per line, dependencies first (the order `make`
# tests, vets and tidies them in). Every module's go.mod replaces each of the others with its
# directory, so that one checkout builds as a whole and each module also builds on its own.
set -euo pipefail
cd "$(dirname "$0")/.."
cat <<'LIST'
itlconv
otelitl
otelitl/openaiitl
otelitl/anthropicitl
otelitl/goopenaiitl
internal
collector
otelitl/test
examples
cmd/otelcol-itl
cmd/otelitl-proxy
e2e
bench
LIST
