#!/usr/bin/env bash
# Record real claude stream-json output for each script in scripts/streams/
# into testdata/streams/<name>.jsonl, so stream parsers can be tested without
# a process. Needs scripts/setup.sh first. Usage: scripts/record-streams.sh [name…]
source "$(dirname "${BASH_SOURCE[0]}")/record-lib.sh"
names=("$@")
[ ${#names[@]} -gt 0 ] || names=($(yaml_names scripts/streams))
mkdir -p testdata/streams
for name in "${names[@]}"; do
  tmp=$(mktemp -d)
  serve_model "scripts/streams/$name.yaml" "$tmp"
  mkdir -p "$tmp/home" "$tmp/ws"
  # A script may ask for extra claude flags in a first line "# args: …".
  read -r -a extra <<<"$(sed -n '1s/^# args: //p' "scripts/streams/$name.yaml")"
  agents='{"worker":{"description":"does work","prompt":"You are a worker","tools":["Bash","Read"]}}'
  (cd "$tmp/ws" && env -i PATH="$PATH" HOME="$tmp/home" ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=sk-test \
     CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 CLAUDE_CODE_MAX_RETRIES=1 \
     "$claude" -p --output-format stream-json --verbose --agents "$agents" ${extra[@]+"${extra[@]}"} -- "record $name" \
     >"$root/testdata/streams/$name.jsonl" 2>"$tmp/stderr") || true
  stop_model
  # Temp paths differ per run; make them stable so the files diff cleanly.
  sed -i "s#$tmp#/tmp/REC#g" "$root/testdata/streams/$name.jsonl"
  echo "record: testdata/streams/$name.jsonl ($(wc -l <"$root/testdata/streams/$name.jsonl") lines)"
  rm -rf "$tmp"
done
