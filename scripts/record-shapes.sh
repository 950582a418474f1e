#!/usr/bin/env bash
# Re-record hooks/testdata/shapes (the PostToolUse inputs of the bulky tools,
# which hooks/spill_test.go checks the spill guard against) from the pinned,
# real claude against the scripted model. Needs scripts/setup.sh first.
# Review the diff (git diff hooks/testdata/shapes) before committing it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec go run ./scripts/recordshapes "$@"
