#!/usr/bin/env bash
# Makes a Prometheus 3 server binary available to the end-to-end tests as .bin/prometheus, in this
# order: PROMETHEUS_BIN when set; the pinned build already in .bin (instant); the `prometheus` on
# PATH when it says it is version 3 or later (Debian's is 2.x: it is not taken); else a build from
# source at the pinned version with `go install` (no root needed; minutes on two cores the first
# time, then kept in .bin as prometheus-<module version> and in the Go caches). The e2e tests
# themselves refuse a Prometheus 2.
set -euo pipefail
cd "$(dirname "$0")/.."
PROM_MODULE_VERSION=v0.316.0 # Prometheus 3.16.0
PROM_VERSION=3.16.0           # stamped into the build, so that `prometheus --version` tells
BIN="$PWD/.bin"
mkdir -p "$BIN"
want="$BIN/prometheus-$PROM_MODULE_VERSION"

if [ -n "${PROMETHEUS_BIN:-}" ]; then
  ln -sf "$PROMETHEUS_BIN" "$BIN/prometheus"
  echo "using PROMETHEUS_BIN=$PROMETHEUS_BIN"
  exit 0
fi
if [ -x "$want" ]; then
  ln -sf "$want" "$BIN/prometheus"
  exit 0
fi
if found=$(command -v prometheus 2>/dev/null) && [ "$found" != "$BIN/prometheus" ]; then
  major=$("$found" --version 2>&1 | sed -n 's/^prometheus, version \([0-9]*\)\..*/\1/p' | head -1)
  if [ -n "$major" ] && [ "$major" -ge 3 ]; then
    ln -sf "$found" "$BIN/prometheus"
    echo "using $found (Prometheus $major.x)"
    exit 0
  fi
  echo "the prometheus on PATH ($found) is not version 3 or later: building Prometheus 3 instead"
fi
echo "building Prometheus 3 (github.com/prometheus/prometheus $PROM_MODULE_VERSION) into .bin with go install: about four minutes, once"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && GOWORK=off GOFLAGS=-mod=mod GOBIN="$tmp" go install \
  -ldflags "-X github.com/prometheus/common/version.Version=$PROM_VERSION -X github.com/prometheus/common/version.Branch=module" \
  "github.com/prometheus/prometheus/cmd/prometheus@$PROM_MODULE_VERSION")
mv "$tmp/prometheus" "$want"
ln -sf "$want" "$BIN/prometheus"
echo "built $want"
