#!/bin/sh
# bench-store.sh: the session store's resume path on a generated 20,000-entry,
# ~50 MB transcript (load + expire + trim + prune + repair + materialize, in a
# fresh process: wall time, CPU time, peak RSS), beside a plain Python
# json.loads loop over the same JSONL. Targets: ≤ 0.5 s, peak RSS ≤ 2× the
# file. Then the same transcript on both backends in one run: append (entry
# by entry, and one Import) and resume load on SQLite and on PostgreSQL (a
# throwaway cluster, see testkit/pgtest), PostgreSQL as a ratio of SQLite
# (target: resume load ≤ 2×). The figures are benchmarks (BenchmarkStoreResume
# in sessionstore/bench_test.go, BenchmarkStoreBackends in
# bench_backends_test.go), best of 5 runs each; `go test -bench Materialize
# ./sessionstore/` gives the in-process figure.
set -eu
cd "$(dirname "$0")/.."
exec go test -count=1 -timeout 30m -run '^$' -bench '^(BenchmarkStoreResume|BenchmarkStoreBackends)$' -benchtime=5x ./sessionstore/
