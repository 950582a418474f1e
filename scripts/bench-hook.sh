#!/bin/sh
# bench-hook.sh: the guard-layer performance figures in one run.
#   - IsEphemeral throughput (cmds/s) over the test corpus (target: at least
#     100,000 commands/s);
#   - flower-hook delegate per-invocation wall time (spawn + decide + report
#     to a live unix socket), p50/p99 and CPU time, interleaved with the floor
#     any Go hook can reach (read stdin, answer, one socket line: syscalls
#     only), an empty Go program, /bin/true, the same through /bin/sh with the
#     fail-closed wrapper, and a python3 hook; then the ratios (target:
#     flower-hook-lite, what a step's PreToolUse guards run, <= 1.15x the
#     floor, wall p50; flower-hook itself beside it) and, with valgrind
#     installed, the instruction counts (load-independent);
#   - the decision server's share of a flower-hook-lite call (Answer: its
#     CPU per call here, its wall time in the spawn benchmark's line).
# Usage: scripts/bench-hook.sh [runs]   (default 500)
set -eu
cd "$(dirname "$0")/.."
runs=${1:-500}
go test ./glance -run '^$' -bench 'IsEphemeral' -benchtime=2s
go test ./hooks -run '^$' -bench 'DelegateDecide|Answer' -benchtime=2s
go test ./hooks -run '^$' -bench 'HookSpawn' -benchtime="${runs}x" -timeout 60m
