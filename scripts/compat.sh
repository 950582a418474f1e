#!/usr/bin/env bash
# Run the tests against another Claude Code CLI than the pinned one:
#   scripts/compat.sh [VERSION|latest] [go test arguments…]
# installs @anthropic-ai/claude-code@VERSION (default latest, as npm names
# it) into a temp folder, removed at the end, and runs `go test` with
# FLOWER_CLAUDE pointing at it (the test bed's claude; FLOWER_REQUIRE_CLAUDE=1,
# so nothing skips for want of it). Without test arguments it runs every
# package: `scripts/compat.sh latest -run E2E ./cmd/flower ./acceptance ./hooks` runs a
# subset. Tests that check the pin itself (flower doctor's version line)
# expect the "untested version" warning then.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

die() { echo "compat: $*" >&2; exit 1; }
say() { echo "compat: $*"; }

want=${1:-latest}
[ $# -gt 0 ] && shift
command -v npm >/dev/null 2>&1 || die "npm is not on PATH: it installs the CLI under test"
version=$want
if [ "$want" = latest ]; then
  version=$(npm view @anthropic-ai/claude-code version 2>/dev/null) || die "npm view @anthropic-ai/claude-code version failed: is the npm registry reachable?"
fi
case "$version" in
  [0-9]*.[0-9]*.[0-9]*) ;;
  *) die "'$want' is not a version (want e.g. 2.1.332, or latest)" ;;
esac
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) platform=linux-x64 ;;
  Linux-aarch64 | Linux-arm64) platform=linux-arm64 ;;
  Darwin-arm64) platform=darwin-arm64 ;;
  Darwin-x86_64) platform=darwin-x64 ;;
  *) die "no Claude Code native package for $(uname -s)-$(uname -m)" ;;
esac

dir=$(mktemp -d "${TMPDIR:-/tmp}/flower-compat-$version.XXXXXX")
trap 'rm -rf "$dir"' EXIT
say "installing @anthropic-ai/claude-code@$version into $dir"
echo '{"name":"flower-compat","private":true}' > "$dir/package.json"
if ! npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@anthropic-ai/claude-code@$version" >"$dir/npm.log" 2>&1; then
  tail -20 "$dir/npm.log" >&2
  die "npm could not install @anthropic-ai/claude-code@$version"
fi
claude="$dir/node_modules/@anthropic-ai/claude-code-$platform/claude"
[ -x "$claude" ] || die "the native claude is missing at $claude"
say "testing against $("$claude" --version | head -1) ($claude)"

[ $# -gt 0 ] || set -- ./...
FLOWER_CLAUDE="$claude" FLOWER_REQUIRE_CLAUDE=1 go test -count=1 -timeout 60m "$@"
