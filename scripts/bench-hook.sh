#!/bin/sh
# bench-hook.sh: the guard-layer performance figures in one run.
#   - IsEphemeral throughput (cmds/s) over the test corpus (target: at least
#     100,000 commands/s);
#   - flower-hook delegate per-invocation wall time (spawn + decide + report
#     to a live unix socket), p50/p99 over 500 runs, beside an empty Go
#     program measured in the same run (target: at most 1.2x), the same pair
#     through /bin/sh with the fail-closed wrapper, and a python3 hook.
# Usage: scripts/bench-hook.sh [runs]   (default 500)
set -eu
cd "$(dirname "$0")/.."
runs=${1:-500}
go test ./glance -run '^$' -bench 'IsEphemeral' -benchtime=2s
go test ./hooks -run '^$' -bench 'DelegateDecide' -benchtime=2s
go test ./hooks -run '^$' -bench 'HookSpawn' -benchtime="${runs}x" -timeout 60m
