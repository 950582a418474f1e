#!/usr/bin/env bash
# Record real claude stream-json output for each script in scripts/streams/
# into testdata/streams/<name>.jsonl, so stream parsers can be tested without
# a process. Needs scripts/setup.sh first. Usage: scripts/record-streams.sh [name…]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
claude="${FLOWER_CLAUDE:-$root/.claude-cli/node_modules/@anthropic-ai/claude-code-linux-x64/claude}"
[ -x "$claude" ] || { echo "record: no claude at $claude — run scripts/setup.sh" >&2; exit 1; }
[ -x bin/flower ] || { echo "record: no bin/flower — run scripts/setup.sh" >&2; exit 1; }
names=("$@")
[ ${#names[@]} -gt 0 ] || names=($(cd scripts/streams && ls *.yaml | sed 's/\.yaml$//'))
mkdir -p testdata/streams
for name in "${names[@]}"; do
  tmp=$(mktemp -d)
  bin/flower model serve --script "scripts/streams/$name.yaml" >"$tmp/serve.out" 2>&1 &
  pid=$!
  for _ in $(seq 50); do grep -q listening "$tmp/serve.out" && break; sleep 0.1; done
  url=$(sed -n 's/.*listening on //p' "$tmp/serve.out")
  mkdir -p "$tmp/home" "$tmp/ws"
  # A script may ask for extra claude flags in a first line "# args: …".
  read -r -a extra <<<"$(sed -n '1s/^# args: //p' "scripts/streams/$name.yaml")"
  agents='{"worker":{"description":"does work","prompt":"You are a worker","tools":["Bash","Read"]}}'
  (cd "$tmp/ws" && env -i PATH="$PATH" HOME="$tmp/home" ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=sk-test \
     CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 CLAUDE_CODE_MAX_RETRIES=1 \
     "$claude" -p --output-format stream-json --verbose --agents "$agents" ${extra[@]+"${extra[@]}"} -- "record $name" \
     >"$root/testdata/streams/$name.jsonl" 2>"$tmp/stderr") || true
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  # Temp paths differ per run; make them stable so the files diff cleanly.
  sed -i "s#$tmp#/tmp/REC#g" "$root/testdata/streams/$name.jsonl"
  echo "record: testdata/streams/$name.jsonl ($(wc -l <"$root/testdata/streams/$name.jsonl") lines)"
  rm -rf "$tmp"
done
