#!/usr/bin/env bash
# Installs the OpenTelemetry Collector Builder (ocb) at the collector release the project pins into
# .bin/builder, unless it is there already.
set -euo pipefail
cd "$(dirname "$0")/.."
OCB_VERSION=v0.165.0
BIN="$PWD/.bin"
if [ ! -x "$BIN/builder" ] || ! "$BIN/builder" version 2>&1 | grep -q "$OCB_VERSION"; then
  echo "installing ocb $OCB_VERSION into .bin"
  GOWORK=off GOBIN="$BIN" go install "go.opentelemetry.io/collector/cmd/builder@$OCB_VERSION"
fi
