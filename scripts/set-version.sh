#!/usr/bin/env bash
# Sets the release version everywhere it is written: the requirements between the repository's
# modules (every go.mod), the instrumentation versions reported in scopes, the distribution's
# version (otelcol-itl --version), and the ocb manifest with the README's copy of it. Usage:
#   scripts/set-version.sh v0.2.0
set -euo pipefail
cd "$(dirname "$0")/.."
v=${1:?usage: scripts/set-version.sh vX.Y.Z}
[[ $v =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || { echo "set-version: $v is not a semantic version such as v0.2.0" >&2; exit 2; }
mods=$(scripts/modules.sh)
for m in $mods; do
  edits=()
  for d in $mods; do
    if grep -q "^[[:space:]]*github.com/otelitl/itl/$d v" "$m/go.mod"; then
      edits+=("-require=github.com/otelitl/itl/$d@$v")
    fi
  done
  if [ ${#edits[@]} -gt 0 ]; then (cd "$m" && go mod edit "${edits[@]}"); fi
done
plain=${v#v}
# replace EXPR FILE...: sed -E in place, written out so that it runs alike with GNU and BSD sed
# (macOS), whose -i differ.
replace() {
  local expr=$1; shift
  for f in "$@"; do sed -E "$expr" "$f" > "$f.set-version" && mv "$f.set-version" "$f"; done
}
replace "s/^const Version = \".*\"/const Version = \"$plain\"/" otelitl/version.go collector/itlmetricsconnector/factory.go cmd/otelcol-itl/main.go
replace "s/(BuildInfo: component.BuildInfo\{.*Version: \")[^\"]*/\1$plain/" bench/floorcol/main.go
# The ocb manifest and the README's copy of it: the collector module's gomod lines, and the
# distribution's own version.
replace "s#(gomod: github.com/otelitl/itl/[a-z/]+) v[0-9][^ ]*#\1 $v#" exporter-config/builder-config.yaml README.md
replace "s/^(  version: )[0-9][^ ]*$/\1$plain/" exporter-config/builder-config.yaml
# The README's go get for an application built against a checkout.
replace "s#(go get github.com/otelitl/itl/[a-z/]+)@v[0-9][^ ]*#\1@$v#" README.md
left=$(grep -nE "github.com/otelitl/itl/[a-z/]+[ @]v[0-9]" exporter-config/builder-config.yaml README.md | grep -vE "[ @]${v//./\\.}( |$)" || true)
[ -z "$left" ] || { echo "set-version: these still name another version:" >&2; echo "$left" >&2; exit 1; }
echo "set $v in every go.mod, otelitl/version.go, the itl_metrics connector, otelcol-itl's Version, the ocb manifest, the README's copy of it and its go get; now run make check"
