#!/usr/bin/env bash
# Run every test: unit tests, and end-to-end tests on the pinned real claude
# against the scripted model. Extra arguments go to `go test` (e.g. -v, -run X).
# Run scripts/setup.sh first; with FLOWER_REQUIRE_CLAUDE=1 a missing claude
# fails the e2e tests instead of skipping them.
#
# What only the tests need is ensured here, not in the set-up: PostgreSQL
# (testkit/pgtest starts throwaway clusters with initdb/postgres; Debian
# keeps them in /usr/lib/postgresql/<ver>/bin, off PATH), tmux (the
# terminal tests of `flower claude`) and Chromium (the `flower ui` tests
# drive a headless one; a CJK font makes their screenshots readable). As
# root with apt they are installed; otherwise a missing one is a warning
# (those tests skip loudly), or an error under FLOWER_REQUIRE_POSTGRES=1
# (PostgreSQL) or FLOWER_REQUIRE_CLAUDE=1 (Chromium).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

say() { echo "test: $*"; }
began=$(date +%s)
die() { echo "test: $*" >&2; exit 1; }

can_apt() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }

# apt_install PKG…: install Debian packages when we are root with apt.
apt_install() {
  can_apt || return 1
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1 || \
    { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1; }
}

pg_bin() {
  if command -v initdb >/dev/null 2>&1 && command -v postgres >/dev/null 2>&1; then
    dirname "$(command -v initdb)"; return 0
  fi
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/postgres" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
  done
  return 1
}
cjk_font() { command -v fc-list >/dev/null 2>&1 && [ -n "$(fc-list :lang=zh 2>/dev/null)" ]; }

# What is missing is installed in the background: apt waits on the network
# and the disk, while the checks and the unit loop below, which need none
# of it, keep the processor busy (on a fresh machine Chromium alone takes
# about a minute). The e2e pass waits for it.
missing=()
pg_bin >/dev/null || missing+=(postgresql)
if [ "$(uname -s)" = Linux ] && ! command -v bwrap >/dev/null 2>&1; then missing+=(bubblewrap); fi
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
cjk_font || missing+=(fonts-wqy-microhei)
install_pid=
if [ ${#missing[@]} -gt 0 ] && can_apt; then
  say "installing ${missing[*]} in the background (the e2e tests need them)"
  # One apt call for all; if it fails, one call each, so that one missing
  # package does not keep the others out.
  ( apt_install "${missing[@]}" || for p in "${missing[@]}"; do apt_install "$p" || true; done ) &
  install_pid=$!
fi

# need: wait for the background install, then fail or warn for what is
# still missing, as each test group needs.
need() {
  if [ -n "$install_pid" ]; then
    local s=0
    while kill -0 "$install_pid" 2>/dev/null; do
      sleep 1
      s=$((s + 1))
      if [ $((s % 15)) = 0 ]; then say "  still installing ${missing[*]} (${s}s)"; fi
    done
    wait "$install_pid" || true
    install_pid=
  fi
  if ! pg_bin >/dev/null; then
    msg="PostgreSQL is missing (no initdb/postgres on PATH or in /usr/lib/postgresql/*/bin): install it (apt-get install postgresql); the PostgreSQL session store tests need it"
    [ "${FLOWER_REQUIRE_POSTGRES:-}" = 1 ] && die "$msg"
    echo "test: warning: $msg — they will skip" >&2
  fi
  if [ "$(uname -s)" = Linux ] && ! command -v bwrap >/dev/null 2>&1; then
    echo "test: warning: bubblewrap is missing; the read-only sandbox tests will skip (fail under FLOWER_REQUIRE_CLAUDE=1)" >&2
  fi
  command -v tmux >/dev/null 2>&1 || echo "test: warning: tmux is missing; the terminal tests of 'flower claude' will skip" >&2
  if ! command -v chromium >/dev/null 2>&1; then
    msg="chromium is missing: install it (apt-get install chromium); the flower ui tests drive a headless one"
    [ "${FLOWER_REQUIRE_CLAUDE:-}" = 1 ] && die "$msg"
    echo "test: warning: $msg — they will skip" >&2
  fi
  if command -v fc-list >/dev/null 2>&1 && ! cjk_font; then echo "test: warning: no CJK font (apt-get install fonts-wqy-microhei): the flower ui screenshots show boxes for Chinese text" >&2; fi
}

# go.mod is tidy (direct and indirect requirements apart): fail when tidy would change it.
go mod tidy -diff
go vet ./...
# macOS: every package vets, and the static flower-hook builds, for
# darwin/arm64 without cgo (nothing darwin runs here; see docs/install.md).
# In the background beside the unit loop: a first run compiles the standard
# library and every dependency for darwin (~130 s of processor time, a
# minute of wall), which nothing else shares, while the unit loop's tests
# leave a core idle as they wait; the e2e pass waits for it.
darwin_log=$(mktemp)
( GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 go vet ./... && \
  GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 go build -o /dev/null ./cmd/flower-hook ) >"$darwin_log" 2>&1 &
darwin_pid=$!
darwin_ok() {
  if ! wait "$darwin_pid"; then
    cat "$darwin_log" >&2
    die "go vet or the flower-hook build failed for darwin/arm64 (above)"
  fi
  rm -f "$darwin_log"
}
# go test's output goes through scripts/testreport: each package line as the
# package ends, the output of a failing test, a line at least every 30 s
# naming the tests still running, and a closing "test: N passed, N failed"
# line (with -v: every line as go test -v prints it).
report=$(mktemp)
trap 'rm -f "$report" "$darwin_log"' EXIT
go build -o "$report" ./scripts/testreport
# -v is the reporter's (print every line), never go test's: with -json,
# go test -v makes the test binaries print plain -v output, whose subtests'
# results come only when their parent ends, instead of test2json's framed
# events, which report each test's end as it happens.
verbose=
args=()
for a in "$@"; do
  if [ "$a" = -v ]; then verbose=-v; else args+=("$a"); fi
done
# The unit loop first, as a developer runs it: no claude and no PostgreSQL
# within reach (a bare PATH: Debian keeps initdb off it; FLOWER_CLAUDE
# pointing nowhere), so that a unit test that quietly needs either fails here.
start=$(date +%s)
say "unit loop (go test -short ./..., no claude, no PostgreSQL)"
env -u FLOWER_REQUIRE_CLAUDE -u FLOWER_REQUIRE_POSTGRES \
  PATH="$(dirname "$(command -v go)"):/usr/bin:/bin" FLOWER_CLAUDE=/nonexistent/claude \
  go test -json -short -count=1 ./... 2>&1 | "$report" || die "the unit loop (go test -short ./...) failed"
say "unit loop: ok in $(( $(date +%s) - start )) s"
darwin_ok
need
# The e2e run is CPU-bound on a 2-core machine, and most of its processor
# time is claude's, whose cost per process grows with how many run at once
# (claude -p alone, 3 runs per copy: 1.35 s of CPU each with one copy at a
# time, 1.52 s with two, 1.70 s with four, 1.81 s with six; the most runs
# per second with two). go test starts packages in the order given, two at
# a time (-p 2): the two long scenario packages first, whose own waiting
# tests (outages, paused workers) overlap their computing, then the two
# whose tests mostly wait (fleet's leases and outages, internal/child's
# deadlines), then harness and hooks, then the rest. Measured back to back
# on this kind of machine, the e2e pass alone: 1149 s at -p 2, 1219 s at
# -p 3 (earlier, set-up included: 731 s at -p 4, 671 s at -p 3; see
# docs/testing.md).
first="./acceptance ./cmd/flower ./fleet ./internal/child ./harness ./hooks"
rest=$(go list ./... | sed "s|^$(go list -m)|.|" | grep -vxF $(printf -- '-e %s ' $first))
# shellcheck disable=SC2086 # package lists split on purpose
status=0
go test -json -count=1 -p 2 -timeout 60m ${args[@]+"${args[@]}"} $first $rest 2>&1 | "$report" $verbose || status=$?
say "the whole test command took $(( $(date +%s) - began )) s"
exit "$status"
