#!/usr/bin/env bash
# Run every test: unit tests, and end-to-end tests on the pinned real claude
# against the scripted model. Extra arguments go to `go test` (e.g. -v, -run X).
# Run scripts/setup.sh first; with FLOWER_REQUIRE_CLAUDE=1 a missing claude
# fails the e2e tests instead of skipping them.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
go vet ./...
go test -count=1 -timeout 60m "$@" ./...
