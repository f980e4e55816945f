#!/usr/bin/env python3
"""The house rules that a compiler does not check, checked on every test run
(ctest house-rules; docs/ARCHITECTURE.md explains them):

  1. Layering: each folder includes only the folders upstream of it in the
     data flow (common <- tap <- jobcache <- correlator <- indexer <- alerting
     <- service <- app); the correlator, a transform, reaches no sink I/O (libcurl, the
     bus firer).
  2. Internal headers: <folder>/internal/*.h is included only from <folder>/
     and from tests/ and bench/, and never from a public header (one at the
     top level of a folder): what a folder promises must not depend on what
     it keeps to itself.
  3. The repository stands alone: no absolute machine paths and no paths
     outside the repository in tracked text files.
  4. Every source file of a library has its header: <folder>/[internal/]x.cpp
     comes with x.h beside it (app/main.cpp excepted).

Exit status 1 with one line per violation; 0 and a summary otherwise.
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# folder -> folders it may include (besides itself)
ALLOWED = {
    "common": set(),
    "tap": {"common"},
    "jobcache": {"common", "tap"},
    "correlator": {"common", "tap", "jobcache"},
    "indexer": {"common", "tap", "jobcache", "correlator"},
    "alerting": {"common", "tap", "jobcache", "correlator", "indexer"},
    "service": {"common", "tap", "jobcache", "correlator", "indexer", "alerting"},
    "app": {"service"},
}
# (folder, include) pairs a folder must not use even though its layer allows the folder
FORBIDDEN = {
    "correlator": [r"^curl/", r"^tap/event_firer\.h$", r"^tap/pull_framing_probe\.h$"],
    "tap": [r"^curl/"],
    "jobcache": [r"^curl/"],
    "common": [r"^curl/"],
}
LONE_SOURCE = pathlib.Path("app/main.cpp")  # main() needs no header
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]', re.M)
OUTSIDE_PATHS = re.compile(r"/work/|\.\./shared/|(?<![\w/])/root/|(?<![\w/])/home/\w")


def tracked_files():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / line for line in out.splitlines()]


def main():
    problems = []
    files = tracked_files()
    sources = [f for f in files if f.suffix in (".h", ".cpp")]
    for f in sources:
        rel = f.relative_to(ROOT)
        folder = rel.parts[0]
        text = f.read_text(errors="replace")
        for inc in INCLUDE.findall(text):
            target = inc.split("/")[0]
            if "/internal/" in inc and target != folder and folder not in ("tests", "bench"):
                problems.append(f"{rel}: includes {inc}, internal to {target}/")
            if "/internal/" in inc and folder in ALLOWED and f.suffix == ".h" and len(rel.parts) == 2:
                problems.append(f"{rel}: a public header includes {inc}; split the public part out of it")
            if folder in ALLOWED and target in ALLOWED and target != folder and target not in ALLOWED[folder]:
                problems.append(f"{rel}: includes {inc}: {folder}/ may include only {sorted(ALLOWED[folder]) or 'nothing'}")
            for pattern in FORBIDDEN.get(folder, []):
                if re.search(pattern, inc):
                    problems.append(f"{rel}: includes {inc}, which {folder}/ must not use")
        if folder in ALLOWED and f.suffix == ".cpp" and rel != LONE_SOURCE and not f.with_suffix(".h").is_file():
            problems.append(f"{rel}: has no header {rel.with_suffix('.h')}")
    this = pathlib.Path(__file__).resolve()
    for f in files:
        if f.resolve() == this or not f.is_file() or f.stat().st_size > 2_000_000:
            continue
        rel = f.relative_to(ROOT)
        if rel.parts[:2] in (("tests", "captures"), ("tests", "golden")) or rel.parts[:3] == ("tests", "fuzz", "corpus"):
            continue  # recorded data (and what is derived from it), byte for byte
        try:
            text = f.read_text()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if OUTSIDE_PATHS.search(line):
                problems.append(f"{rel}:{n}: a path outside the repository: {line.strip()[:100]}")
    for p in problems:
        print(p)
    if problems:
        print(f"check-house: {len(problems)} violation(s)")
        return 1
    print(f"check-house: {len(sources)} sources and {len(files)} files follow the house rules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
