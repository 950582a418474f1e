# shellcheck shell=bash
# Sourced by scripts/record-*.sh: the checkout root as the working folder,
# the pinned claude ($claude; the path is internal/pinned.ClaudeRelPath, a
# test holds the two in step), and a scripted model to record against.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
claude="${FLOWER_CLAUDE:-$root/.claude-cli/node_modules/@anthropic-ai/claude-code-linux-x64/claude}"
[ -x "$claude" ] || { echo "record: no claude at $claude — run scripts/setup.sh" >&2; exit 1; }
[ -x bin/flower ] || { echo "record: no bin/flower — run scripts/setup.sh" >&2; exit 1; }

# yaml_names DIR: the names of the scripts in DIR (DIR/<name>.yaml).
yaml_names() { (cd "$1" && ls -- *.yaml | sed 's/\.yaml$//'); }

# serve_model SCRIPT TMP: starts `flower model serve` on SCRIPT, logging to
# TMP/serve.out; sets $pid and $url once it listens.
serve_model() {
  bin/flower model serve --script "$1" >"$2/serve.out" 2>&1 &
  pid=$!
  for _ in $(seq 50); do grep -q listening "$2/serve.out" && break; sleep 0.1; done
  url=$(sed -n 's/.*listening on //p' "$2/serve.out")
}

# stop_model: ends the model serve_model started.
stop_model() {
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
