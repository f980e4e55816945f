#!/usr/bin/env python3
"""scripts/check-house.py against planted violations: each rule, once
broken in a small repository of its own, must be reported (and a clean one
must pass). Run by ctest (house-rules-checker); plain unittest, no venv."""
import pathlib
import subprocess
import sys
import tempfile
import unittest

CHECKER = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check-house.py"
FOLDERS = ["common", "http", "tap", "jobcache", "correlator", "fleet", "indexer", "alerting", "config", "pipeline",
           "recovery", "history", "web", "dashboards", "daemon", "cli", "app"]


class House:
    """A git repository with one small, rule-abiding library per folder."""

    def __init__(self, root: pathlib.Path):
        self.root = root
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        filter_ = "|".join(FOLDERS)
        self.write(".clang-tidy", f"HeaderFilterRegex: '(^|/)({filter_})/(internal/)?[^/]+\\.h$'\n")
        for folder in FOLDERS:
            if folder == "app":
                continue  # main.cpp alone
            self.write(f"{folder}/{folder}.h", "#pragma once\n" + "int f();\n" * 20)
            self.write(f"{folder}/{folder}.cpp", f'#include "{folder}/{folder}.h"\n' + "int f() { return 0; }\n" * 20)
        # every public header is used by a folder downstream
        self.write("cli/cli.cpp", "".join(f'#include "{f}/{f}.h"\n' for f in FOLDERS if f not in ("cli", "app"))
                   + '#include "cli/cli.h"\n')
        self.write("app/main.cpp", '#include "cli/cli.h"\n')

    def write(self, rel: str, text: str) -> None:
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)

    def check(self) -> tuple[int, str]:
        subprocess.run(["git", "add", "-A"], cwd=self.root, check=True)
        r = subprocess.run([sys.executable, str(CHECKER), str(self.root)], capture_output=True, text=True)
        return r.returncode, r.stdout


# Each rule, broken once: what is written into a clean house, and what the
# report must say of it.
VIOLATIONS = {
    "an upstream folder including a downstream one": (
        {"tap/tap.cpp": '#include "tap/tap.h"\n#include "indexer/indexer.h"\n'},
        "tap/tap.cpp: includes indexer/indexer.h: tap/ may include only"),
    "an unknown folder": (
        {"newroom/thing.h": "#pragma once\n"},
        "newroom/ is not a known folder"),
    "an internal header used from outside": (
        {"tap/internal/secret.h": "#pragma once\n",
         "tap/tap.cpp": '#include "tap/tap.h"\n#include "tap/internal/secret.h"\n',
         "indexer/indexer.cpp": '#include "indexer/indexer.h"\n#include "tap/internal/secret.h"\n'},
        "indexer/indexer.cpp: includes tap/internal/secret.h, internal to tap/"),
    "a public header including an internal one": (
        {"tap/internal/secret.h": "#pragma once\n",
         "tap/tap.h": '#pragma once\n#include "tap/internal/secret.h"\n'},
        "tap/tap.h: a public header includes tap/internal/secret.h"),
    "a public header no other folder uses": (
        {"tap/lonely.h": "#pragma once\n"},
        "tap/lonely.h: no other folder includes it; move it to tap/internal/"),
    "a third-party library outside its owner": (
        {"web/web.cpp": '#include "web/web.h"\n#include <CLI/CLI.hpp>\n'},
        "web/web.cpp: includes CLI/CLI.hpp, which only cli/ may use"),
    "a source without its header": (
        {"tap/orphan.cpp": '#include "tap/tap.h"\n'},
        "tap/orphan.cpp: has no header tap/orphan.h"),
    "a path outside the repository": (
        {"docs/notes.md": "see " + "/ho" + "me/someone/salttap\n"},  # split: this file is checked too
        "docs/notes.md:1: a path outside the repository"),
    "a folder holding too much of the product": (
        {"indexer/big.cpp": '#include "indexer/indexer.h"\n' + "int g();\n" * 2000,
         "indexer/big.h": "#pragma once\n",
         "alerting/alerting.cpp": '#include "alerting/alerting.h"\n#include "indexer/big.h"\n'},
        "indexer/: "),
    "a tidy filter that misses a folder": (
        {".clang-tidy": "HeaderFilterRegex: '(^|/)(common|tap)/(internal/)?[^/]+\\.h$'\n"},
        ".clang-tidy: HeaderFilterRegex names"),
}


class CheckHouse(unittest.TestCase):
    def test_a_clean_house_passes(self):
        with tempfile.TemporaryDirectory() as tmp:
            code, out = House(pathlib.Path(tmp)).check()
            self.assertEqual(code, 0, out)

    def test_each_broken_rule_is_reported(self):
        for name, (files, fragment) in VIOLATIONS.items():
            with self.subTest(name), tempfile.TemporaryDirectory() as tmp:
                house = House(pathlib.Path(tmp))
                for rel, text in files.items():
                    house.write(rel, text)
                code, out = house.check()
                self.assertEqual(code, 1, out)
                self.assertIn(fragment, out)


if __name__ == "__main__":
    unittest.main()
