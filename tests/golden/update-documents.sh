#!/usr/bin/env bash
# Regenerates tests/golden/ndjson/<salt>/<scenario>.ndjson from the captures
# with `salttap replay --output documents`: the exact bulk NDJSON the indexer
# spools. Review the diff by hand before committing; the mapping contract test
# checks every field of these files against mappings/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
captures=${SALTTAP_CAPTURES_DIR:-$root/tests/captures}
for raw in "$captures"/*/*.raw; do
  # large_return: 2 MB of NDJSON, checked by assertions instead (golden_documents_test.cpp).
  [ "$(basename "$raw")" = large_return.raw ] && continue
  version=$(basename "$(dirname "$raw")")
  mkdir -p "$root/tests/golden/ndjson/$version"
  "$root/build/dev/salttap" replay --output documents --config "$root/tests/golden/documents.yaml" "$raw" 2>/dev/null \
    > "$root/tests/golden/ndjson/$version/$(basename "${raw%.raw}").ndjson"
done
