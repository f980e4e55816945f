#!/usr/bin/env python3
"""The house rules that a compiler does not check, checked on every test run
(ctest house-rules; docs/ARCHITECTURE.md explains them):

  1. Layering: each product folder includes only the folders ALLOWED names
     for it (the real dependency graph, data flow order); a top-level folder
     with C++ sources that ALLOWED does not know is a violation, so a new
     folder cannot slip past the rules.
  2. Internal headers: <folder>/internal/*.h is included only from <folder>/
     (and tests/, bench/), never from a public header (one at the top level
     of a folder). Conversely, a public header that no other product folder
     includes, directly or through a public header of its own folder that
     is, belongs in internal/: what a folder promises is what others use.
  3. Third-party libraries stay in the folder that owns them: CLI11 in cli/,
     libsystemd in daemon/, libcurl in http/; and the correlator, a
     transform, reaches no bus writer.
  4. Every source file of a library has its header: <folder>/[internal/]x.cpp
     comes with x.h beside it (app/main.cpp excepted).
  5. The repository stands alone: no absolute machine paths and no paths
     outside the repository in tracked text files.
  6. No product folder holds more than MAX_FOLDER_SHARE of the product's
     lines; and .clang-tidy's HeaderFilterRegex names exactly the folders.

scripts/check-house.py [ROOT]: ROOT defaults to this repository (the tests
in tests/house/ point it at planted violations). Exit status 1 with one line
per violation; 0 and a summary otherwise.
"""
import pathlib
import re
import subprocess
import sys

# folder -> folders it may include (besides itself). Upstream first.
ALLOWED = {
    "common": set(),
    "http": {"common"},
    "tap": {"common"},
    "jobcache": {"common", "tap"},
    "correlator": {"common", "tap"},
    "fleet": {"common", "tap", "correlator"},
    "indexer": {"common", "http", "tap", "correlator"},
    "alerting": {"common", "http", "tap", "correlator", "indexer"},
    "config": {"common", "http", "tap", "correlator", "fleet", "indexer", "alerting"},
    "pipeline": {"common", "tap", "correlator", "fleet", "indexer", "alerting", "config"},
    "recovery": {"common", "tap", "jobcache", "correlator", "indexer", "alerting", "config", "pipeline"},
    "history": {"common", "http", "correlator", "indexer"},
    "web": {"common", "http", "indexer", "history"},
    "dashboards": {"common", "http", "indexer"},
    "daemon": {"common", "http", "tap", "jobcache", "correlator", "fleet", "indexer", "alerting", "config", "pipeline",
               "recovery", "history", "web"},
    "cli": {"common", "http", "tap", "jobcache", "correlator", "fleet", "indexer", "alerting", "config", "pipeline",
            "recovery", "history", "web", "dashboards", "daemon"},
    "app": {"cli"},
}
# Folders with C++ that are not product libraries.
NOT_PRODUCT = {"tests", "bench"}
# Third-party include prefixes and the one folder that may use each.
OWNED = {r"^CLI/": "cli", r"^systemd/": "daemon", r"^curl/": "http"}
# (folder, include) pairs a folder must not use even though its layer allows the folder
FORBIDDEN = {
    "correlator": [r"^tap/event_firer\.h$", r"^tap/pull_framing_probe\.h$"],
}
MAX_FOLDER_SHARE = 0.22
LONE_SOURCE = pathlib.Path("app/main.cpp")  # main() needs no header
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]', re.M)
OUTSIDE_PATHS = re.compile(r"/work/|\.\./shared/|(?<![\w/])/root/|(?<![\w/])/home/\w")
TIDY_FILTER = re.compile(r"^HeaderFilterRegex:\s*'\(\^\|/\)\(([\w|]+)\)/", re.M)


def tracked_files(root):
    out = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout
    return [root / line for line in out.splitlines()]


def is_public_header(rel):
    return rel.suffix == ".h" and len(rel.parts) == 2 and rel.parts[0] in ALLOWED


def check_includes(root, sources, problems):
    includes = {}  # product header or source -> the product files it includes
    for f in sources:
        rel = f.relative_to(root)
        folder = rel.parts[0]
        if len(rel.parts) == 1:
            continue
        if folder not in ALLOWED and folder not in NOT_PRODUCT:
            problems.append(f"{rel}: {folder}/ is not a known folder; add it to ALLOWED in scripts/check-house.py")
            continue
        incs = INCLUDE.findall(f.read_text(errors="replace"))
        includes[rel] = incs
        for inc in incs:
            target = inc.split("/")[0]
            if "/internal/" in inc and target != folder and folder not in NOT_PRODUCT:
                problems.append(f"{rel}: includes {inc}, internal to {target}/")
            if "/internal/" in inc and is_public_header(rel):
                problems.append(f"{rel}: a public header includes {inc}; split the public part out of it")
            if folder in ALLOWED and target in ALLOWED and target != folder and target not in ALLOWED[folder]:
                problems.append(f"{rel}: includes {inc}: {folder}/ may include only {sorted(ALLOWED[folder]) or 'nothing'}")
            for pattern, owner in OWNED.items():
                if re.search(pattern, inc) and folder != owner and folder not in NOT_PRODUCT:
                    problems.append(f"{rel}: includes {inc}, which only {owner}/ may use")
            for pattern in FORBIDDEN.get(folder, []):
                if re.search(pattern, inc):
                    problems.append(f"{rel}: includes {inc}, which {folder}/ must not use")
        if folder in ALLOWED and f.suffix == ".cpp" and rel != LONE_SOURCE and not f.with_suffix(".h").is_file():
            problems.append(f"{rel}: has no header {rel.with_suffix('.h')}")
    # Rule 2, the converse: a public header is one another folder uses.
    used = set()
    frontier = [pathlib.Path(inc) for rel, incs in includes.items() if rel.parts[0] in ALLOWED for inc in incs
                if inc.split("/")[0] in ALLOWED and inc.split("/")[0] != rel.parts[0]]
    while frontier:  # and what those headers bring in from their own folder
        h = frontier.pop()
        if h in used:
            continue
        used.add(h)
        frontier += [pathlib.Path(inc) for inc in includes.get(h, []) if inc.split("/")[0] == h.parts[0]]
    for rel in includes:
        if is_public_header(rel) and rel not in used:
            problems.append(f"{rel}: no other folder includes it; move it to {rel.parts[0]}/internal/")


def check_sizes(root, sources, problems):
    lines = {}
    for f in sources:
        rel = f.relative_to(root)
        if rel.parts[0] in ALLOWED:
            lines[rel.parts[0]] = lines.get(rel.parts[0], 0) + len(f.read_text(errors="replace").splitlines())
    total = sum(lines.values())
    for folder, n in sorted(lines.items()):
        if total and n / total > MAX_FOLDER_SHARE:
            problems.append(f"{folder}/: {n} of the product's {total} lines ({n / total:.0%}), more than "
                            f"{MAX_FOLDER_SHARE:.0%}: split it by what its parts do")


def check_tidy_filter(root, problems):
    tidy = root / ".clang-tidy"
    if not tidy.is_file():
        return
    m = TIDY_FILTER.search(tidy.read_text())
    named = set(m.group(1).split("|")) if m else set()
    if named != set(ALLOWED):
        problems.append(f".clang-tidy: HeaderFilterRegex names {sorted(named)}, the folders are {sorted(ALLOWED)}")


def check_paths(root, files, problems):
    this = pathlib.Path(__file__).resolve()
    for f in files:
        if f.resolve() == this or not f.is_file() or f.stat().st_size > 2_000_000:
            continue
        rel = f.relative_to(root)
        if rel.parts[:2] in (("tests", "captures"), ("tests", "golden")) or rel.parts[:3] == ("tests", "fuzz", "corpus"):
            continue  # recorded data (and what is derived from it), byte for byte
        try:
            text = f.read_text()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if OUTSIDE_PATHS.search(line):
                problems.append(f"{rel}:{n}: a path outside the repository: {line.strip()[:100]}")


def main(argv):
    root = pathlib.Path(argv[1]).resolve() if len(argv) > 1 else pathlib.Path(__file__).resolve().parent.parent
    problems = []
    files = tracked_files(root)
    sources = [f for f in files if f.suffix in (".h", ".cpp") and f.is_file()]
    check_includes(root, sources, problems)
    check_sizes(root, sources, problems)
    check_tidy_filter(root, problems)
    check_paths(root, files, problems)
    for p in problems:
        print(p)
    if problems:
        print(f"check-house: {len(problems)} violation(s)")
        return 1
    print(f"check-house: {len(sources)} sources and {len(files)} files follow the house rules")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
