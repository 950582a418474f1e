#!/usr/bin/env bash
# Set up flower on a fresh machine: check the toolchain, install the pinned
# Claude Code CLI into the checkout, build flower and flower-hook into bin/.
# Idempotent: safe to re-run; it only redoes what is missing or stale.
set -euo pipefail

CLAUDE_VERSION=2.1.328
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

die() { echo "setup: $*" >&2; exit 1; }
say() { echo "setup: $*"; }

command -v go >/dev/null 2>&1 || die "Go is not on PATH (need Go 1.26+; on this machine it lives in /usr/local/go/bin)"
command -v gcc >/dev/null 2>&1 || die "gcc is not on PATH: the SQLite session store needs cgo (apt-get install gcc)"
command -v npm >/dev/null 2>&1 || die "npm is not on PATH: it installs the pinned Claude Code CLI (apt-get install npm, or install Node.js)"
command -v git >/dev/null 2>&1 || die "git is not on PATH: worktree isolation needs it (apt-get install git)"

# tmux drives the terminal tests of `flower claude`; install it where we can.
if ! command -v tmux >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing tmux (for the terminal tests)"
    (apt-get install -y -qq tmux >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq tmux >/dev/null 2>&1; }) \
      || die "could not install tmux with apt-get (the terminal tests need it)"
  else
    echo "setup: warning: tmux is missing; the terminal tests of 'flower claude' will not run" >&2
  fi
fi

# PostgreSQL: the session store's second backend; its tests start a
# throwaway cluster with initdb/postgres (Debian keeps them in
# /usr/lib/postgresql/<ver>/bin, off PATH).
pg_bin() {
  if command -v initdb >/dev/null 2>&1 && command -v postgres >/dev/null 2>&1; then
    dirname "$(command -v initdb)"; return 0
  fi
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/postgres" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
  done
  return 1
}
if ! pg_bin >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing postgresql (for the PostgreSQL session store tests)"
    (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null 2>&1 || \
      { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null 2>&1; }) \
      || die "could not install postgresql with apt-get (the session store tests need initdb and postgres; install them, or run as root with apt reachable)"
  else
    die "PostgreSQL is missing (no initdb/postgres on PATH or in /usr/lib/postgresql/*/bin): install it (apt-get install postgresql) — the session store tests need it"
  fi
  pg_bin >/dev/null || die "postgresql installed, but initdb/postgres are not in /usr/lib/postgresql/*/bin"
fi
pgdir=$(pg_bin)

cli_dir="$root/.claude-cli"
claude="$cli_dir/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
installed=""
if [ -f "$cli_dir/node_modules/@anthropic-ai/claude-code/package.json" ]; then
  installed=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$cli_dir/node_modules/@anthropic-ai/claude-code/package.json" | head -1)
fi
if [ "$installed" != "$CLAUDE_VERSION" ] || [ ! -x "$claude" ]; then
  say "installing @anthropic-ai/claude-code@$CLAUDE_VERSION into $cli_dir"
  mkdir -p "$cli_dir"
  [ -f "$cli_dir/package.json" ] || echo '{"name":"flower-claude-cli","private":true}' > "$cli_dir/package.json"
  if ! npm install --prefix "$cli_dir" --no-audit --no-fund --loglevel=error \
      "@anthropic-ai/claude-code@$CLAUDE_VERSION" >"$cli_dir/npm.log" 2>&1; then
    tail -20 "$cli_dir/npm.log" >&2
    die "npm could not install @anthropic-ai/claude-code@$CLAUDE_VERSION — is the npm registry reachable? (log: $cli_dir/npm.log)"
  fi
fi
[ -x "$claude" ] || die "the native claude binary is missing at $claude (the npm package's linux-x64 part did not install)"
version=$("$claude" --version 2>/dev/null | head -1 || true)
case "$version" in
  "$CLAUDE_VERSION"*) ;;
  *) die "claude at $claude reports '$version', want $CLAUDE_VERSION" ;;
esac

# build OUT PKG [VAR=value…]: go build with a heartbeat, so a cold build
# (SQLite compiles for about a minute) is not a silent minute.
build() {
  local out=$1 pkg=$2
  shift 2
  say "building $out"
  env "$@" go build -o "$out" "$pkg" &
  local pid=$! s=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    s=$((s + 1))
    if [ $((s % 10)) = 0 ] && kill -0 "$pid" 2>/dev/null; then say "  still building $out (${s}s; the first build compiles SQLite)"; fi
  done
  wait "$pid"
}

mkdir -p bin
build bin/flower ./cmd/flower
if [ -d cmd/flower-hook ]; then
  # flower-hook runs on every tool call: static, no cgo.
  build bin/flower-hook ./cmd/flower-hook CGO_ENABLED=0
  if [ -d plugin ]; then
    mkdir -p plugin/bin
    cp bin/flower-hook plugin/bin/flower-hook
  fi
fi

cat <<MSG
setup: done
  claude       $claude ($version)
  postgresql   $pgdir (test clusters: internal/pgtest)
  flower       $root/bin/flower
$( [ -x bin/flower-hook ] && echo "  flower-hook  $root/bin/flower-hook" )
$( [ -x plugin/bin/flower-hook ] && echo "  plugin       $root/plugin   (claude --plugin-dir $root/plugin)" )
  tests        scripts/test.sh
MSG
