#!/bin/sh
# bench-hook.sh: the guard-layer performance figures in one run.
#   - IsEphemeral throughput (cmds/s) over the test corpus;
#   - flower-hook delegate per-invocation wall time (spawn + decide + report
#     to a live unix socket), p50/p99 over 500 runs, beside an equivalent
#     python3 hook.
# Usage: scripts/bench-hook.sh [runs]   (default 500)
set -eu
cd "$(dirname "$0")/.."
runs=${1:-500}
go test ./hooks -run '^$' -bench 'IsEphemeral|DelegateDecide' -benchtime=2s
go test ./hooks -run '^$' -bench 'HookSpawn' -benchtime="${runs}x" -timeout 60m
