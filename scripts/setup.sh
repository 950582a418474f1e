#!/usr/bin/env bash
# Set up flower on a fresh machine: check the toolchain, install the pinned
# Claude Code CLI into the checkout, build flower and flower-hook into bin/.
# Only what running flower needs (bubblewrap too, installed as root with
# apt): what the tests need besides (PostgreSQL,
# tmux) is scripts/test.sh's to ensure. Idempotent: safe to re-run; it only
# redoes what is missing or stale.
set -euo pipefail

CLAUDE_VERSION=2.1.328
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

die() { echo "setup: $*" >&2; exit 1; }
say() { echo "setup: $*"; }

command -v go >/dev/null 2>&1 || die "Go is not on PATH (need Go 1.26+; on this machine it lives in /usr/local/go/bin)"
command -v gcc >/dev/null 2>&1 || die "gcc is not on PATH: the SQLite session store needs cgo (apt-get install gcc; on macOS xcode-select --install)"
command -v npm >/dev/null 2>&1 || die "npm is not on PATH: it installs the pinned Claude Code CLI (apt-get install npm, or install Node.js)"
command -v git >/dev/null 2>&1 || die "git is not on PATH: worktree isolation needs it (apt-get install git)"

# bubblewrap: the read-only sandbox every glance of a read-only role runs
# in (Linux; macOS has sandbox-exec). Needed to run flower, not only to test
# it: without it look-only rests on the classifier alone.
if [ "$(uname -s)" = Linux ] && ! command -v bwrap >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing bubblewrap (the read-only sandbox for glances)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null 2>&1 || \
      { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null 2>&1; } || \
      die "apt-get could not install bubblewrap; install it yourself: apt-get install -y bubblewrap"
  else
    say "WARNING: bubblewrap (bwrap) is missing and this is no root with apt: install it (apt-get install -y bubblewrap, dnf install bubblewrap); without it flower warns that look-only rests on the classifier alone, and --sandbox=require refuses"
  fi
fi

cli_dir="$root/.claude-cli"
claude="$cli_dir/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
installed=""
if [ -f "$cli_dir/node_modules/@anthropic-ai/claude-code/package.json" ]; then
  installed=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$cli_dir/node_modules/@anthropic-ai/claude-code/package.json" | head -1)
fi
# npm waits on the network for about a minute: it runs in the background
# while Go compiles flower below, and is waited for after the builds.
npm_pid=""
if [ "$installed" != "$CLAUDE_VERSION" ] || [ ! -x "$claude" ]; then
  say "installing @anthropic-ai/claude-code@$CLAUDE_VERSION into $cli_dir (in the background, while flower builds)"
  mkdir -p "$cli_dir"
  [ -f "$cli_dir/package.json" ] || echo '{"name":"flower-claude-cli","private":true}' > "$cli_dir/package.json"
  npm install --prefix "$cli_dir" --no-audit --no-fund --loglevel=error \
      "@anthropic-ai/claude-code@$CLAUDE_VERSION" >"$cli_dir/npm.log" 2>&1 &
  npm_pid=$!
  npm_start=$(date +%s)
fi

# await_npm: wait for the background npm install, a heartbeat every 10 s.
await_npm() {
  [ -n "$npm_pid" ] || return 0
  local s=0
  while kill -0 "$npm_pid" 2>/dev/null; do
    sleep 1
    s=$((s + 1))
    if [ $((s % 10)) = 0 ] && kill -0 "$npm_pid" 2>/dev/null; then say "  still installing claude ($(( $(date +%s) - npm_start ))s; about a minute)"; fi
  done
  if ! wait "$npm_pid"; then
    tail -20 "$cli_dir/npm.log" >&2
    die "npm could not install @anthropic-ai/claude-code@$CLAUDE_VERSION — is the npm registry reachable? (log: $cli_dir/npm.log)"
  fi
  say "  installed claude in $(( $(date +%s) - npm_start ))s"
  npm_pid=""
}

# The commit goes into the binaries with -X as well: `flower version` falls
# back to it when the toolchain stamps no VCS info (no git at build time,
# -buildvcs=false, a copied tree).
commit=$(git rev-parse HEAD 2>/dev/null || true)
ldflags=""
if [ -n "$commit" ]; then
  ldflags="-X main.buildCommit=$commit"
  git diff --quiet HEAD -- 2>/dev/null || ldflags="$ldflags -X main.buildModified=true"
fi

# build OUT PKG [VAR=value…]: go build with a heartbeat and the time it
# took. A first build compiles SQLite's C code with cgo: 2-5 minutes on a
# small machine; later builds come from Go's cache in seconds.
build() {
  local out=$1 pkg=$2
  shift 2
  say "building $out"
  env "$@" go build -ldflags "$ldflags" -o "$out" "$pkg" &
  local pid=$! s=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    s=$((s + 1))
    if [ $((s % 15)) = 0 ] && kill -0 "$pid" 2>/dev/null; then say "  still building $out (${s}s; a first build compiles SQLite, 2-5 minutes)"; fi
  done
  wait "$pid"
  say "  built $out in ${s}s"
}

mkdir -p bin
build bin/flower ./cmd/flower
if [ -d cmd/flower-hook ]; then
  # flower-hook runs on every tool call: static, no cgo, and without the
  # Green Tea garbage collector where the toolchain still offers that (a
  # hook never collects; Green Tea's per-span mark bits cost each start
  # page faults): docs/performance.md. testbed.HookBuildEnv builds it the
  # same way.
  experiment=""
  if GOEXPERIMENT=nogreenteagc go env GOEXPERIMENT >/dev/null 2>&1; then experiment=GOEXPERIMENT=nogreenteagc; fi
  build bin/flower-hook ./cmd/flower-hook CGO_ENABLED=0 $experiment
  # flower-hook-lite fronts the PreToolUse guards of flower's own steps
  # (it asks the flower process, else execs flower-hook beside it).
  build bin/flower-hook-lite ./cmd/flower-hook-lite CGO_ENABLED=0 $experiment
  if [ -d plugin ]; then
    mkdir -p plugin/bin
    cp bin/flower-hook plugin/bin/flower-hook
  fi
fi

await_npm
[ -x "$claude" ] || die "the native claude binary is missing at $claude (the npm package's linux-x64 part did not install)"
version=$("$claude" --version 2>/dev/null | head -1 || true)
case "$version" in
  "$CLAUDE_VERSION"*) ;;
  *) die "claude at $claude reports '$version', want $CLAUDE_VERSION" ;;
esac

cat <<MSG
setup: done
  claude       $claude ($version)
  flower       $root/bin/flower
$( [ -x bin/flower-hook ] && echo "  flower-hook  $root/bin/flower-hook" )
$( [ -x plugin/bin/flower-hook ] && echo "  plugin       $root/plugin   (claude --plugin-dir $root/plugin)" )
  tests        scripts/test.sh (it also makes sure of PostgreSQL and tmux, which only the tests need)
MSG
