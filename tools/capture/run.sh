#!/usr/bin/env bash
# Captures the spans that real LLM instrumentation packages (npm) write around streamed replies of
# fakellm, and the client-side truth, as fixtures in testdata/captured/ (see README.md).
#
#   tools/capture/run.sh                 # every scenario
#   tools/capture/run.sh vercel7-chat    # only the named ones
#
# Needs Node (20 or later) with npm, Go, and the npm registry (npm ci). Without Node it prints
# "skipped" and exits 0.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(git -C "$here" rev-parse --show-toplevel)"
out="${CAPTURE_OUT:-$root/testdata/captured}"

all_scenarios=(
  vercel7-chat
  vercel7-agent
  vercel7-legacy-text
  vercel6-text
  vercel6-object
  openllmetry-openai
  openllmetry-anthropic
  openllmetry-langchain
  openllmetry-langchain-openai
  edot-openai
  edot-openai-nousage
  openinference-openai
  openinference-langchain
  openinference-vercel
  openinference-anthropic
  langfuse-openai
  openlit-openai
  otel-openai
  otel-openai-nousage
  mastra-chat
  mastra-agent
  strands-chat
  strands-agent
  strands-graph
  langsmith-chain
  langsmith-llm
  langsmith-agent
  adk-chat
  adk-agent
  adk-workflow
  bedrock-converse
  bedrock-invoke
)

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "capture: node and npm are needed (Node 20 or later); skipped"
  exit 0
fi
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  echo "capture: Node $(node --version) is too old (20 or later is needed); skipped"
  exit 0
fi

if [ "$#" -gt 0 ]; then
  scenarios=("$@")
else
  scenarios=("${all_scenarios[@]}")
fi
for s in "${scenarios[@]}"; do
  if [ ! -e "$here/scenarios/$s.mjs" ] && [ ! -e "$here/scenarios/$s.cjs" ]; then
    echo "capture: no scenario $s (have: ${all_scenarios[*]})" >&2
    exit 2
  fi
done

echo "capture: npm ci in $here"
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)

tmp="$(mktemp -d)"
fakellm_pid=""
cleanup() {
  if [ -n "$fakellm_pid" ]; then
    kill "$fakellm_pid" 2>/dev/null || true
    wait "$fakellm_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "capture: building fakellm"
(cd "$root" && go build -o "$tmp/fakellm" ./examples/fakellm)

port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
models="$(printf 'cap-%s,' vercel7-chat vercel7-agent vercel7-legacy-text vercel6-text vercel6-object openllmetry openllmetry-anthropic openllmetry-langchain openllmetry-langchain-openai edot-openai edot-openai-nousage openinference openinference-langchain openinference-vercel openinference-anthropic langfuse openlit otel-openai otel-openai-nousage mastra-chat mastra-agent strands-chat strands-agent strands-graph langsmith-chain langsmith-llm langsmith-agent adk-chat adk-agent adk-workflow)"
"$tmp/fakellm" -addr "127.0.0.1:$port" -models "${models%,}" >"$tmp/fakellm.log" 2>&1 &
fakellm_pid=$!
url="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
  if node -e 'fetch(process.argv[1]+"/healthz").then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "$url"; then
    break
  fi
  if ! kill -0 "$fakellm_pid" 2>/dev/null; then
    cat "$tmp/fakellm.log" >&2
    echo "capture: fakellm did not start" >&2
    exit 1
  fi
  sleep 0.1
done

mkdir -p "$out"
for s in "${scenarios[@]}"; do
  file="$here/scenarios/$s.mjs"
  [ -e "$file" ] || file="$here/scenarios/$s.cjs"
  echo "capture: $s"
  (cd "$here" && FAKELLM_URL="$url" CAPTURE_OUT="$out" node "$file")
done

echo "capture: checking the fixtures load with ptrace.JSONUnmarshaler"
(cd "$here/verify" && GOWORK=off go run . "$out")
