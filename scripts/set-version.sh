#!/usr/bin/env bash
# Sets the release version everywhere it is written: the requirements between the repository's
# modules (every go.mod) and the instrumentation versions reported in scopes. Usage:
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
sed -i "s/^const Version = \".*\"/const Version = \"$plain\"/" otelitl/version.go collector/itlmetricsconnector/factory.go
echo "set $v in every go.mod, otelitl/version.go and the itl_metrics connector; now run make check"
