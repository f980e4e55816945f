# What every bench/run-* driver does before it measures, sourced by each:
#   . "$(dirname "$0")/lib/prepare.sh"
# It turns on strict mode and moves to the repository's root. Then, as a driver needs them:
#   prepare_deps                  the C++ build's Debian packages (scripts/install-deps --no-salt)
#   prepare_salt VERSION...       each Salt release's virtualenv, installed when missing
#   salt_python VERSION           prints the python of that virtualenv
#   prepare_engines               the test search engines (tests/engines/install.sh)
#   build_salttap                 salttap of the dev preset (build/dev), or of the build directory
#                                 $SALTTAP_BENCH_BUILD; sets SALTTAP to the binary
#   build_salttap_at REVISION     salttap at another git revision, in a detached worktree under
#                                 build/ (a before/after comparison); sets BASELINE_SALTTAP
#   build_bench TARGET...         targets of the bench preset (build/bench)
#   make_streams DIR ARGS...      bench/make_stream.py ARGS into DIR, once
#   prepare_returner_client SALT VERSION   the elasticsearch client VERSION for Salt's returner
#                                 in that Salt's virtualenv, beside it; sets RETURNER_CLIENT_DIR
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

salt_python() {
  echo ".cache/venv/salt-$1/bin/python"
}

prepare_deps() {
  scripts/install-deps --no-salt
}

prepare_salt() {
  local v
  for v in "$@"; do
    [ -x "$(salt_python "$v")" ] || tests/salt/install-salt.sh "$v"
  done
}

prepare_engines() {
  tests/engines/install.sh > /dev/null
}

build_salttap() {
  local build=${SALTTAP_BENCH_BUILD:-build/dev}
  if [ "$build" = build/dev ]; then
    cmake --preset dev > /dev/null
  else
    cmake --preset dev -B "$build" -DSALTTAP_BUILD_TESTS=OFF > /dev/null
  fi
  cmake --build "$build" --target salttap -j2 > /dev/null
  SALTTAP=$build/salttap
}

build_salttap_at() {
  local rev src
  rev=$(git rev-parse --short "$1")
  src=build/baseline-src-$rev
  [ -d "$src" ] || git worktree add -q --detach "$src" "$rev"
  cmake -S "$src" -B "$src/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSALTTAP_BUILD_TESTS=OFF > /dev/null
  cmake --build "$src/build" --target salttap -j2 > /dev/null
  BASELINE_SALTTAP=$src/build/salttap
}

build_bench() {
  cmake --preset bench > /dev/null
  cmake --build --preset bench -j2 --target "$@" > /dev/null
}

# The streams come from real 3006.25 captures re-encoded by Salt 3006.25's msgpack. A manifest
# without the jobs and returns counts the benchmarks check against is from an older
# make_stream.py, and one without a stream asked for (--NAME-events N) from an older
# call: the streams are made again.
make_streams() {
  local dir=$1
  shift
  prepare_salt 3006.25
  if ! python3 -c 'import json, re, sys
files = json.load(open(sys.argv[1]))["files"]
args = sys.argv[2:]
wanted = [re.fullmatch("--(.+)-events", a).group(1) for a, n in zip(args, args[1:] + [""])
          if re.fullmatch("--(.+)-events", a) and n.isdigit() and int(n) > 0]
sys.exit(0 if files and all("returns" in f for f in files.values())
         and all(f"{w}.plain.raw" in files for w in wanted) else 1)' "$dir/manifest.json" "$@" 2> /dev/null; then
    rm -f "$dir/manifest.json"
    "$(salt_python 3006.25)" bench/make_stream.py --out "$dir" "$@" > /dev/null
  fi
}

# The `elasticsearch` client from PyPI that Salt's elasticsearch returner needs (a Salt
# virtualenv does not carry it), installed once into build/returner-client/es-VERSION with
# that virtualenv's pip, and put on PYTHONPATH by the benchmark alone: the virtualenv is
# left as tests/salt/install-salt.sh made it. 7.17 for Elasticsearch 7.17; 7.13 for
# OpenSearch, the last 7.x client that does not refuse a server that is not Elasticsearch.
# Sets RETURNER_CLIENT_DIR.
prepare_returner_client() {
  local salt=$1 version=$2
  RETURNER_CLIENT_DIR=build/returner-client/es-$version
  if ! PYTHONPATH=$RETURNER_CLIENT_DIR "$(salt_python "$salt")" -c 'import elasticsearch' 2> /dev/null; then
    rm -rf "$RETURNER_CLIENT_DIR"
    "$(salt_python "$salt")" -m pip install --quiet --disable-pip-version-check \
      --target "$RETURNER_CLIENT_DIR" "elasticsearch~=$version.0" > /dev/null
  fi
}
