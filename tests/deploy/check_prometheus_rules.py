#!/usr/bin/env python3
"""The Prometheus alerting rules (deploy/prometheus/salttap-rules.yml):

  - `promtool check rules` accepts them;
  - `promtool test rules` passes their unit tests (salttap-rules.test.yml);
  - every salttap metric an expression names is in the metric catalog
    (common/metric_catalog.cpp): a renamed metric must not leave a rule that
    silently never fires;
  - every alert has a `for:`, a severity (critical or warning), a summary and a
    description, and its unit tests see it both firing and not firing.

Exit 1 on any problem, a missing promtool among them (Debian's `prometheus`
package ships it; scripts/install-deps installs it).
  check_prometheus_rules.py SOURCE_DIR
"""
import pathlib
import re
import shutil
import subprocess
import sys

import yaml

RULES = "deploy/prometheus/salttap-rules.yml"
TESTS = "deploy/prometheus/salttap-rules.test.yml"
SEVERITIES = {"critical", "warning"}


def catalog_names(source):
    text = (source / "common/metric_catalog.cpp").read_text()
    return set(re.findall(r'"(salttap_[a-z0-9_]+)"', text))


def rule_problems(rules, catalog):
    problems = []
    for group in rules["groups"]:
        for rule in group["rules"]:
            name = rule.get("alert")
            if not name:
                problems.append(f"group {group['name']}: a rule that is not an alert: {rule}")
                continue
            if "for" not in rule:
                problems.append(f"{name}: no for:")
            if rule.get("labels", {}).get("severity") not in SEVERITIES:
                problems.append(f"{name}: severity is not one of {sorted(SEVERITIES)}")
            for key in ("summary", "description"):
                if not rule.get("annotations", {}).get(key):
                    problems.append(f"{name}: no {key} annotation")
            for metric in set(re.findall(r"\bsalttap_[a-z0-9_]+", rule["expr"])):
                # a summary's or histogram's samples carry a suffix on the family's name
                family = re.sub(r"_(sum|count|bucket)$", "", metric)
                if metric not in catalog and family not in catalog:
                    problems.append(f"{name}: {metric} is not in common/metric_catalog.cpp")
    return problems


def coverage_problems(rules, tests):
    fired, quiet = set(), set()
    for test in tests["tests"]:
        for case in test.get("alert_rule_test", []):
            (fired if case.get("exp_alerts") else quiet).add(case["alertname"])
    problems = []
    for group in rules["groups"]:
        for rule in group["rules"]:
            name = rule.get("alert")
            if name and name not in fired:
                problems.append(f"{name}: no unit test sees it fire")
            if name and name not in quiet:
                problems.append(f"{name}: no unit test sees it stay quiet")
    return problems


def run(argv):
    r = subprocess.run(argv, capture_output=True, text=True)
    print(f"$ {' '.join(argv)}\n{r.stdout}{r.stderr}", end="")
    return [] if r.returncode == 0 else [f"{' '.join(argv[:3])} failed ({r.returncode})"]


def main():
    source = pathlib.Path(sys.argv[1])
    rules_path, tests_path = source / RULES, source / TESTS
    rules = yaml.safe_load(rules_path.read_text())
    tests = yaml.safe_load(tests_path.read_text())
    problems = rule_problems(rules, catalog_names(source)) + coverage_problems(rules, tests)
    promtool = shutil.which("promtool")
    if promtool is None:
        problems.append("promtool not found: install Debian's prometheus package (scripts/install-deps)")
    else:
        problems += run([promtool, "check", "rules", str(rules_path)])
        problems += run([promtool, "test", "rules", str(tests_path)])
    if problems:
        print("\n".join(problems))
        return 1
    count = sum(len(g["rules"]) for g in rules["groups"])
    print(f"{count} alerting rules: checked, each seen firing and quiet by promtool's unit tests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
