"""`salttap jobs`, `salttap jobs show` and `salttap minions` against real OpenSearch 2.19,
OpenSearch 3.9 and Elasticsearch 7.17.

Each engine is loaded with every capture of both Salt releases through `salttap replay --ship`
(one stream, in recorded order, as one master saw them). What each command must print is
computed independently: from the documents `salttap replay --output documents` says the engine
ends up with (the final version of each _id), with plain Python predicates for each filter.

salttap binary: $SALTTAP_BIN, else $SALTTAP_BUILD_DIR/salttap, else build/dev/salttap (binaries.py).

Run: .cache/venv/tools/bin/python -m pytest tests/engines/test_history_engines.py -v
"""
from __future__ import annotations

import collections
import fnmatch
import json
import os
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest

from indexed import replay_config

PREFIX = "hist"
RISK_ORDER = ["none", "low", "medium", "high", "critical"]
ALL = 10000  # --limit that shows every job of the captures


@pytest.fixture(scope="module")
def replay_prefix() -> str:
    return PREFIX


@pytest.fixture(scope="module")
def documents(replayed_documents) -> dict[str, list[dict]]:
    """kind -> the sources the engine keeps (the highest external version, else the first write)."""
    docs = {kind: list(by_id.values()) for kind, by_id in replayed_documents.by_kind(PREFIX).items()}
    assert docs.get("jobs") and docs.get("returns"), sorted(docs)
    return docs


@pytest.fixture(scope="module")
def engine(replayed_engine):
    """An engine of each flavor holding every capture's documents under PREFIX; .config finds it."""
    return replayed_engine


def run(salttap: Path, config: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    return subprocess.run([str(salttap), *args, "--config", str(config)], capture_output=True, text=True,
                          timeout=60, env=env)


def json_lines(r: subprocess.CompletedProcess) -> list[dict]:
    assert r.returncode == 0, f"rc={r.returncode}\n{r.stderr[-3000:]}"
    return [json.loads(line) for line in r.stdout.splitlines()]


def jobs(salttap, engine, *args: str) -> list[dict]:
    return json_lines(run(salttap, engine.config, "jobs", "--format", "json", "--limit", str(ALL), *args))


def as_list(v) -> list:
    return v if isinstance(v, list) else [] if v is None else [v]


def micros(stamp: str) -> int:
    t = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return int(t.timestamp()) * 1_000_000 + t.microsecond


def newest_first(found: list[dict]) -> list[int]:
    return [micros(j["started_at"]) for j in found]


# ---------------------------------------------------------------- jobs

def test_jobs_lists_every_job_newest_first_as_stored(salttap, engine, documents):
    found = jobs(salttap, engine)
    assert sorted(j["jid"] for j in found) == sorted(j["jid"] for j in documents["jobs"])
    starts = newest_first(found)
    assert starts == sorted(starts, reverse=True)
    by_jid = {j["jid"]: j for j in documents["jobs"]}
    assert all(j == by_jid[j["jid"]] for j in found), "a document differs from what replay built"


def test_jobs_limit_is_the_newest(salttap, engine, documents):
    found = json_lines(run(salttap, engine.config, "jobs", "--format", "json", "--limit", "3"))
    newest = sorted(documents["jobs"], key=lambda j: micros(j["started_at"]), reverse=True)[:3]
    assert [j["jid"] for j in found] == [j["jid"] for j in newest]


FILTERS = {
    "status-failed": (["--status", "failed"], lambda j: j["status"] == "failed"),
    "status-missing": (["--status", "missing"], lambda j: j["status"] == "missing"),
    "status-succeeded": (["--status", "succeeded"], lambda j: j["status"] == "succeeded"),
    "fun-glob": (["--fun", "state.*"], lambda j: any(fnmatch.fnmatchcase(f, "state.*") for f in as_list(j["fun"]))),
    "fun-exact": (["--fun", "test.ping"], lambda j: "test.ping" in as_list(j["fun"])),
    "tgt-glob": (["--tgt", "*minion*"], lambda j: any(fnmatch.fnmatchcase(t, "*minion*") for t in as_list(j.get("tgt")))),
    "user": (["--user", "root"], lambda j: j.get("user") == "root"),
    "risk-high": (["--risk", "high"],
                  lambda j: RISK_ORDER.index(j["risk"]["level"]) >= RISK_ORDER.index("high")),
}


@pytest.mark.parametrize("name", list(FILTERS))
def test_jobs_filter_finds_exactly_the_matching_jobs(salttap, engine, documents, name):
    args, wanted = FILTERS[name]
    expected = sorted(j["jid"] for j in documents["jobs"] if wanted(j))
    assert expected, f"{name}: the captures hold no such job; the test would prove nothing"
    assert len(expected) < len(documents["jobs"]), f"{name}: every job matches; the filter is not tested"
    assert sorted(j["jid"] for j in jobs(salttap, engine, *args)) == expected


def test_jobs_minion_matches_jobs_that_expected_or_heard_from_it(salttap, engine, documents):
    lists = ("expected", "succeeded", "failed", "missing", "late")
    # Runner and wheel jobs have no minion lists.
    named = lambda j: {m for k in lists for m in j.get("minions", {}).get(k, [])}
    minion, _ = collections.Counter(m for j in documents["jobs"] for m in named(j)).most_common(1)[0]
    expected = sorted(j["jid"] for j in documents["jobs"] if minion in named(j))
    assert 0 < len(expected) < len(documents["jobs"])
    assert sorted(j["jid"] for j in jobs(salttap, engine, "--minion", minion)) == expected


def test_jobs_since_until_is_the_start_window(salttap, engine, documents):
    starts = sorted(micros(j["started_at"]) for j in documents["jobs"])
    # Whole seconds between the first and last quarter of the jobs.
    since = starts[len(starts) // 4] // 1_000_000 * 1_000_000
    until = starts[3 * len(starts) // 4] // 1_000_000 * 1_000_000
    iso = lambda t: datetime.fromtimestamp(t / 1e6, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    expected = sorted(j["jid"] for j in documents["jobs"] if since <= micros(j["started_at"]) < until)
    assert 0 < len(expected) < len(documents["jobs"])
    assert sorted(j["jid"] for j in jobs(salttap, engine, "--since", iso(since), "--until", iso(until))) == expected


def test_jobs_table_fits_100_columns_without_colour(salttap, engine, documents):
    r = run(salttap, engine.config, "jobs", "--limit", "20")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("STARTED (UTC)") and len(lines) == 21, r.stdout
    assert all(len(line) <= 100 for line in lines), r.stdout
    assert "\033[" not in r.stdout, "colour without a terminal"
    newest = max(documents["jobs"], key=lambda j: micros(j["started_at"]))
    assert newest["jid"] in lines[1]


# ---------------------------------------------------------------- jobs show

def failed_state_job(documents) -> dict:
    candidates = [j for j in documents["jobs"] if j["status"] == "failed" and j.get("failed_states")]
    assert candidates, "no failed state run in the captures"
    return candidates[0]


def test_jobs_show_a_failed_state_run(salttap, engine, documents):
    job = failed_state_job(documents)
    shown = json_lines(run(salttap, engine.config, "jobs", "show", job["jid"], "--format", "json"))
    assert len(shown) == 1
    got = shown[0]
    returns = sorted((r for r in documents["returns"] if r["jid"] == job["jid"]), key=lambda r: r["minion"])
    # One master's job: its document as stored, and who saw it (docs/masters.md).
    assert {k: v for k, v in got.items() if k not in ("returns", "seen_by", "publisher")} == job
    assert got["seen_by"] == [job["master"]] and got["publisher"] == job["master"]
    assert [(r["minion"], r["status"]) for r in got["returns"]] == [(r["minion"], r["status"]) for r in returns]
    for r, want in zip(got["returns"], returns):
        assert r.get("reason") == want.get("reason") and r.get("return_text") == want.get("return_text")
        ids = sorted(s["id"] for s in r["failed_states"])
        assert ids == sorted(s["id"] for s in job["failed_states"] if s["minion"] == r["minion"])
    assert any(r["status"] == "failed" and r["failed_states"] for r in got["returns"])

    table = run(salttap, engine.config, "jobs", "show", job["jid"])
    assert table.returncode == 0, table.stderr
    for s in job["failed_states"]:
        assert s["id"] in table.stdout, table.stdout
    for r in returns:
        assert r["minion"] in table.stdout


def test_jobs_show_unknown_jid_is_exit_5(salttap, engine):
    r = run(salttap, engine.config, "jobs", "show", "19990101000000000000")
    assert r.returncode == 5 and "no job 19990101000000000000" in r.stderr, r.stderr


# ---------------------------------------------------------------- minions

def test_minions_counts_every_minions_returns_flaky_first(salttap, engine, documents):
    got = json_lines(run(salttap, engine.config, "minions", "--since", "2000-01-01", "--format", "json"))
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for r in documents["returns"]:
        counts[r["minion"]]["jobs"] += 1
        counts[r["minion"]][r["status"]] += 1
    assert {m["minion"]: (m["jobs"], m["succeeded"], m["failed"], m["missing"]) for m in got} == {
        m: (c["jobs"], c["succeeded"], c["failed"], c["missing"]) for m, c in counts.items()}
    flaky = [m["failed"] + m["missing"] for m in got]
    assert flaky == sorted(flaky, reverse=True)
    for m in got:
        answered = [micros(r["@timestamp"]) // 1000 for r in documents["returns"]
                    if r["minion"] == m["minion"] and r["status"] != "missing"]
        if answered:
            assert micros(m["last_seen"]) // 1000 == max(answered), m
        else:
            assert m["last_seen"] is None, m


def test_minions_window_after_every_job_is_empty(salttap, engine):
    r = run(salttap, engine.config, "minions", "--since", "1m", "--format", "json")
    assert r.returncode == 0 and r.stdout == "", r.stdout + r.stderr


# ---------------------------------------------------------------- errors

def test_no_indices_is_exit_4(salttap, engine, tmp_path):
    config = replay_config(tmp_path / "other.yaml", engine.url, tmp_path / "spool", "nothing")
    for args in (["jobs"], ["minions"], ["jobs", "show", "1"]):
        r = run(salttap, config, *args)
        assert r.returncode == 4 and "no salttap indices" in r.stderr, (args, r.stderr)


def test_the_master_configs_returner_block_finds_the_engine(salttap, engine, tmp_path):
    """No salttap config: the master config's elasticsearch: block, as for `run` (prefix salt: none there)."""
    master = tmp_path / "master"
    master.write_text(f"elasticsearch:\n  hosts: [\"{engine.url}\"]\n")
    r = subprocess.run([str(salttap), "jobs", "--master-config", str(master)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 4 and engine.url in r.stderr and "no salttap indices" in r.stderr, r.stderr


def test_undated_index_missing_is_the_engines_404(salttap, engine, tmp_path):
    config = tmp_path / "undated.yaml"
    config.write_text(f"indexer:\n  hosts: [\"{engine.url}\"]\n  index_prefix: {PREFIX}\n  index_date: false\n"
                      f"  spool: {{dir: {tmp_path / 'spool'}}}\n")
    r = run(salttap, config, "jobs")
    assert r.returncode == 4 and f"no such index [{PREFIX}-jobs]" in r.stderr, r.stderr


def test_unreachable_engine_is_exit_3(salttap, tmp_path):
    config = replay_config(tmp_path / "down.yaml", "http://127.0.0.1:9", tmp_path / "spool", PREFIX)
    r = run(salttap, config, "jobs")
    assert r.returncode == 3 and "cannot reach the engine" in r.stderr, r.stderr
    assert len([line for line in r.stderr.splitlines() if "ERROR" in line]) == 1


def test_bad_options_are_exit_2(salttap, engine):
    for args in (["jobs", "--since", "last tuesday"], ["jobs", "--status", "odd"], ["jobs", "--risk", "extreme"],
                 ["minions", "--since", "soon"], ["jobs", "--limit", "many"], ["jobs", "show"],
                 ["minions", "--format", "yaml"]):
        r = run(salttap, engine.config, *args)
        assert r.returncode == 2, (args, r.returncode, r.stderr)
