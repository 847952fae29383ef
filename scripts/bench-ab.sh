#!/usr/bin/env bash
# Compares the collector components' benchmarks at a git ref (the "before") with the working tree
# ("after"), side by side in one run: both are built first, then run interleaved, COUNT rounds, and
# benchstat compares them. The machines here are shared and noisy; interleaving gives both sides the
# same noise. Usage:
#   scripts/bench-ab.sh [REF]          # REF defaults to fc64235, the code before the issue-14 work
#   COUNT=10 BENCH='ProcessSpan' scripts/bench-ab.sh
# Writes bench-ab-before.txt and bench-ab-after.txt at the repository root (the package lines are
# left out: the packages moved, and benchstat pairs benchmarks by name).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# benchstat runs only at the end, after the rounds: check for it before them, not 15 minutes in.
[ -x "$root/.bin/benchstat" ] || { echo "bench-ab: no .bin/benchstat; run \`make tools\` first" >&2; exit 1; }
ref=${1:-fc64235}
count=${COUNT:-6}
bench=${BENCH:-ProcessSpan|ConsumeTraces|PerSpan}
benchtime=${BENCHTIME:-1s}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/before" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp/before" "$ref" >/dev/null

# The packages to compare: the processor, the connector, and the bench module's comparison with
# spanmetrics, wherever each one lives at that ref.
pkgdir() { # pkgdir TREE NAME
  find "$1" -type d -name "$2" -not -path '*/testdata/*' -not -path '*/.git/*' -not -path '*/node_modules/*' | head -1
}
build() { # build TREE SIDE
  for name in itlprocessor itlmetricsconnector bench; do
    dir=$(pkgdir "$1" "$name")
    [ -n "$dir" ] || { echo "no package $name in $1" >&2; exit 1; }
    echo "building $2 $name ($dir)" >&2
    (cd "$dir" && GOWORK=off go test -c -o "$tmp/$2-$name.test" . >/dev/null)
    echo "$dir" > "$tmp/$2-$name.dir"
  done
}
# The processor's benchmark copies its spans in turn from 256 different replies (one reply timed
# again and again lets the branch predictor learn the selection by heart) and collects the copies'
# garbage with the timer stopped (see its comment). A ref whose benchmark predates that gets the same
# harness, so that both sides measure the processor alone, on the same input.
for f in $(grep -rl --include=bench_test.go 'src.CopyTo(s)' "$tmp/before" || true); do
  perl -0pi -e '
    s/src := benchspans\.Traces\(1, 200, enc\.compact\)(\.ResourceSpans\(\)\.At\(0\)\.ScopeSpans\(\)\.At\(0\)\.Spans\(\))\.At\(0\)/srcs, next := benchspans.Traces(256, 200, enc.compact)$1, 0/;
    s/(\t+)src\.CopyTo\(s\)\n(\t+\}\n)/$1srcs.At(next % srcs.Len()).CopyTo(s)\n$1next++\n$2$1runtime.GC()\n/;
    s/import \(\n/import (\n\t"runtime"\n/ unless /"runtime"/;' "$f"
  gofmt -w "$f"
  echo "patched $f: 256 source replies copied in turn, runtime.GC() after the copies, as in the working tree" >&2
done
build "$tmp/before" before
build "$root" after

: > "$root/bench-ab-before.txt"
: > "$root/bench-ab-after.txt"
for round in $(seq "$count"); do
  echo "round $round of $count" >&2
  for side in before after; do
    for name in itlprocessor itlmetricsconnector bench; do
      # The code before the move read the reference spans from ../shared/golden; point it at the
      # repository's copy.
      (cd "$(cat "$tmp/$side-$name.dir")" && OTELITL_GOLDEN_DIR="$root/testdata/golden" \
        "$tmp/$side-$name.test" -test.run '^$' -test.bench "$bench" -test.benchmem -test.benchtime "$benchtime") \
        | { grep -E '^(Benchmark|goos|goarch|cpu)' || true; } >> "$root/bench-ab-$side.txt" # none: BENCH matched nothing there
    done
  done
done
"$root/.bin/benchstat" "$root/bench-ab-before.txt" "$root/bench-ab-after.txt"
