#!/usr/bin/env bash
# Record what the real claude prints for each API fault in scripts/faults/
# into testdata/faults/<name>.jsonl (stdout, stream-json) and
# testdata/faults/<name>.exit (its exit code), so harness.Classify is tested
# against recorded reality. claude runs the way the Runtime runs it:
# stream-json in and out, the prompt as a user line on stdin, stdin open until
# the result; CLAUDE_CODE_MAX_RETRIES=0 so each fault is one failed request.
# A script may say in its first lines "# args: …" (extra claude flags),
# "# env: K=V …" (extra environment) and "# base: refused" (point claude at a
# loopback port nobody listens on). Needs scripts/setup.sh first.
# Usage: scripts/record-faults.sh [name…]
source "$(dirname "${BASH_SOURCE[0]}")/record-lib.sh"
names=("$@")
[ ${#names[@]} -gt 0 ] || names=($(yaml_names scripts/faults))
mkdir -p testdata/faults
header() { sed -n "s/^# $1: //p" "scripts/faults/$2.yaml" | head -1; }
for name in "${names[@]}"; do
  tmp=$(mktemp -d)
  serve_model "scripts/faults/$name.yaml" "$tmp"
  if [ "$(header base "$name")" = refused ]; then
    # A port that was just free: bind, note, release.
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    url="http://127.0.0.1:$port"
  fi
  read -r -a extra <<<"$(header args "$name")"
  read -r -a extraenv <<<"$(header env "$name")"
  mkdir -p "$tmp/home" "$tmp/ws"
  out="$root/testdata/faults/$name.jsonl"
  user='{"type":"user","message":{"role":"user","content":"record '"$name"'"},"parent_tool_use_id":null,"session_id":""}'
  set +e
  # stdin stays open until a result line arrives (or 120 s pass), as in the Runtime.
  { echo "$user"; for _ in $(seq 600); do grep -q '"type":"result"' "$out" 2>/dev/null && break; sleep 0.2; done; } |
    (cd "$tmp/ws" && env -i PATH="$PATH" HOME="$tmp/home" ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=sk-test \
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 CLAUDE_CODE_MAX_RETRIES=0 ${extraenv[@]+"${extraenv[@]}"} \
      "$claude" -p --output-format stream-json --verbose --input-format stream-json ${extra[@]+"${extra[@]}"} \
      >"$out" 2>"$tmp/stderr")
  code=$?
  set -e
  echo "$code" >"$root/testdata/faults/$name.exit"
  stop_model
  # Temp paths and ports differ per run; make them stable so the files diff cleanly.
  sed -i -e "s#$tmp#/tmp/REC#g" -e "s#127\.0\.0\.1:[0-9]*#127.0.0.1:PORT#g" "$out"
  echo "record: testdata/faults/$name.jsonl ($(wc -l <"$out") lines, exit $code)"
  rm -rf "$tmp"
done
