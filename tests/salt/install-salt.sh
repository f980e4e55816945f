#!/usr/bin/env bash
# Install one Salt release from PyPI into a project-local virtualenv:
#   tests/salt/install-salt.sh 3006.25   ->  .cache/venv/salt-3006.25/bin/salt-master
# Idempotent: an existing, working venv is kept.
#
# The newest releases (3006.30, 3007.17, 3008.5) pin certifi to a version newer
# than the package index here serves. When the plain install fails, salt itself
# is installed with --no-deps and its declared requirements are installed with
# version pins relaxed only for the packages the index cannot satisfy. The
# relaxed packages are printed, so the deviation is visible in every log.
set -euo pipefail
version=${1:?usage: install-salt.sh VERSION}
root=$(cd "$(dirname "$0")/../.." && pwd)
venv="$root/.cache/venv/salt-$version"
if [ -x "$venv/bin/salt-master" ] && "$venv/bin/python" -c 'import salt.version' 2>/dev/null; then
  exit 0
fi
rm -rf "$venv"
python3 -m venv "$venv"
pip=("$venv/bin/pip" --disable-pip-version-check -q)
"${pip[@]}" install --upgrade pip setuptools wheel packaging
if ! "${pip[@]}" install "salt==$version" 2>"$venv/pip-error.log"; then
  echo "salt==$version: plain install failed ($(grep -m1 'No matching distribution' "$venv/pip-error.log" || tail -n1 "$venv/pip-error.log")); relaxing unsatisfiable pins" >&2
  "${pip[@]}" install --no-deps "salt==$version"
  "$venv/bin/python" - "$venv" <<'PY'
import importlib.metadata as md, subprocess, sys
from packaging.requirements import Requirement
venv = sys.argv[1]
reqs = []
for line in md.requires("salt") or []:
    r = Requirement(line)
    if r.marker and not r.marker.evaluate({"extra": ""}):
        continue
    reqs.append(r)
pip = [f"{venv}/bin/pip", "--disable-pip-version-check", "-q", "install"]
relaxed = []
for r in reqs:
    spec = f"{r.name}{'[' + ','.join(sorted(r.extras)) + ']' if r.extras else ''}{r.specifier}"
    if subprocess.run(pip + ["--dry-run", spec], capture_output=True).returncode != 0:
        relaxed.append(f"{r.name}{r.specifier}")
        spec = r.name
    subprocess.run(pip + [spec], check=True)
print("relaxed pins:", ", ".join(relaxed) or "none", file=sys.stderr)
PY
fi
"$venv/bin/python" -c 'import salt.version; print("salt", salt.version.__version__)'
