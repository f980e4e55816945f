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
FOLDERS = ["common", "http", "tap", "jobcache", "correlator", "indexer", "alerting", "config", "pipeline",
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


class CheckHouse(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.house = House(pathlib.Path(self.tmp.name))

    def tearDown(self):
        self.tmp.cleanup()

    def assert_reported(self, fragment: str):
        code, out = self.house.check()
        self.assertEqual(code, 1, out)
        self.assertIn(fragment, out)

    def test_a_clean_house_passes(self):
        code, out = self.house.check()
        self.assertEqual(code, 0, out)

    def test_an_upstream_folder_including_a_downstream_one(self):
        self.house.write("tap/tap.cpp", '#include "tap/tap.h"\n#include "indexer/indexer.h"\n')
        self.assert_reported("tap/tap.cpp: includes indexer/indexer.h: tap/ may include only")

    def test_an_unknown_folder(self):
        self.house.write("newroom/thing.h", "#pragma once\n")
        self.assert_reported("newroom/ is not a known folder")

    def test_an_internal_header_used_from_outside(self):
        self.house.write("tap/internal/secret.h", "#pragma once\n")
        self.house.write("tap/tap.cpp", '#include "tap/tap.h"\n#include "tap/internal/secret.h"\n')
        self.house.write("indexer/indexer.cpp", '#include "indexer/indexer.h"\n#include "tap/internal/secret.h"\n')
        self.assert_reported("indexer/indexer.cpp: includes tap/internal/secret.h, internal to tap/")

    def test_a_public_header_including_an_internal_one(self):
        self.house.write("tap/internal/secret.h", "#pragma once\n")
        self.house.write("tap/tap.h", '#pragma once\n#include "tap/internal/secret.h"\n')
        self.assert_reported("tap/tap.h: a public header includes tap/internal/secret.h")

    def test_a_public_header_no_other_folder_uses(self):
        self.house.write("tap/lonely.h", "#pragma once\n")
        self.assert_reported("tap/lonely.h: no other folder includes it; move it to tap/internal/")

    def test_a_third_party_library_outside_its_owner(self):
        self.house.write("web/web.cpp", '#include "web/web.h"\n#include <CLI/CLI.hpp>\n')
        self.assert_reported("web/web.cpp: includes CLI/CLI.hpp, which only cli/ may use")

    def test_a_source_without_its_header(self):
        self.house.write("tap/orphan.cpp", '#include "tap/tap.h"\n')
        self.assert_reported("tap/orphan.cpp: has no header tap/orphan.h")

    def test_a_path_outside_the_repository(self):
        self.house.write("docs/notes.md", "see " + "/ho" + "me/someone/salttap\n")  # split: this file is checked too
        self.assert_reported("docs/notes.md:1: a path outside the repository")

    def test_a_folder_holding_too_much_of_the_product(self):
        self.house.write("indexer/big.cpp", '#include "indexer/indexer.h"\n' + "int g();\n" * 2000)
        self.house.write("indexer/big.h", "#pragma once\n")
        self.house.write("alerting/alerting.cpp", '#include "alerting/alerting.h"\n#include "indexer/big.h"\n')
        self.assert_reported("indexer/: ")

    def test_a_tidy_filter_that_misses_a_folder(self):
        self.house.write(".clang-tidy", "HeaderFilterRegex: '(^|/)(common|tap)/(internal/)?[^/]+\\.h$'\n")
        self.assert_reported(".clang-tidy: HeaderFilterRegex names")


if __name__ == "__main__":
    unittest.main()
