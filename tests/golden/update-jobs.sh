#!/usr/bin/env bash
# Regenerates tests/golden/jobs/<salt>/<scenario>.jsonl from the captures with
# `salttap replay --output jobs`. Review the diff by hand before committing:
# these files are the correlator's expected verdicts.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
captures=${SALTTAP_CAPTURES_DIR:-$root/tests/captures}
for raw in "$captures"/*/*.raw; do
  version=$(basename "$(dirname "$raw")")
  mkdir -p "$root/tests/golden/jobs/$version"
  "$root/build/dev/salttap" replay --output jobs "$raw" 2>/dev/null > "$root/tests/golden/jobs/$version/$(basename "${raw%.raw}").jsonl"
done
