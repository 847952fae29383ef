#!/usr/bin/env bash
# Builds the distribution from exporter-config/builder-config.yaml with the OpenTelemetry Collector
# Builder (ocb) and validates every shipped config with the binary it built, so that the manifest
# cannot rot. Run from anywhere; needs only Go and the module proxy. The build runs with the
# workspace off: it is the generated module with its own go.mod, as a vendor would build it.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$PWD/.bin"
scripts/install-ocb.sh
mkdir -p dist
echo "building dist/otelcol-itl-ocb with ocb (about a minute or two)"
GOWORK=off "$BIN/builder" --config exporter-config/builder-config.yaml > dist/ocb.log 2>&1 || { cat dist/ocb.log; exit 1; }
bin=dist/otelcol-itl-ocb/otelcol-itl
# shellcheck source=scripts/config-env.sh
. scripts/config-env.sh
trap 'rm -rf "$tmp_env_dir"' EXIT
for f in exporter-config/*.yaml; do
  [ "$(basename "$f")" = builder-config.yaml ] && continue
  "$bin" validate --config "$f" || { echo "FAIL: $f does not validate with the ocb-built distribution"; exit 1; }
  echo "ok   $f validates with the ocb-built distribution"
done
# The requiredenvprovider (the "env" scheme with :?) is in: a config needing a secret refuses to start without it, naming it.
if out=$(env -u OTLP_TOKEN "$bin" validate --config exporter-config/otlp.yaml 2>&1); then
  echo "FAIL: exporter-config/otlp.yaml validates without OTLP_TOKEN"; exit 1
fi
grep -q "environment variable OTLP_TOKEN is unset" <<<"$out" || { echo "FAIL: without OTLP_TOKEN: $out"; exit 1; }
echo "ok   without OTLP_TOKEN the ocb-built distribution refuses exporter-config/otlp.yaml, naming it"
"$bin" components | grep -q itl_metrics || { echo "FAIL: the ocb-built distribution lacks itl_metrics"; exit 1; }
