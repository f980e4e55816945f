"""Unit tests of deploy/salt/returners/salttap.py, loaded by Salt's own loader.

Each test runs drive_returner.py with a Salt virtualenv's python
(`salt.loader.returners(opts, {})`, returner_dirs pointing at deploy/) against
a fake engine in this process (fake_engine.py), or a closed port for an engine
that is down. SALTTAP_RETURNER_SALT picks the Salt versions (default: 3006.30
and 3008.5, whose local_cache differ; a missing venv fails, never skips).

Run:  .cache/venv/tools/bin/python -m pytest tests/returner -q
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from fake_engine import FakeEngine  # beside this file
from http_calls import free_port

HERE = Path(__file__).resolve().parent

REPO = HERE.parents[1]
RETURNER_DIR = REPO / "deploy" / "salt" / "returners"
VERSIONS = [v for v in re.split(r"[\s,]+", os.environ.get("SALTTAP_RETURNER_SALT", "3006.30 3008.5")) if v]
MASTER = "m1"


@pytest.fixture(params=VERSIONS, ids=lambda v: f"salt-{v}")
def salt_python(request) -> Path:
    py = REPO / ".cache" / "venv" / f"salt-{request.param}" / "bin" / "python"
    if not py.exists():
        pytest.fail(f"no Salt {request.param} virtualenv at {py.parent.parent} "
                    f"(tests/salt/install-salt.sh {request.param})", pytrace=False)
    return py


@pytest.fixture
def engine():
    eng = FakeEngine().start()
    yield eng
    eng.stop()


@pytest.fixture
def run(salt_python, tmp_path):
    """run(calls, **opts) -> (results, log lines): the calls through Salt's loader."""
    def go(calls, **opts):
        base = {"cachedir": str(tmp_path / "cache"), "returner_dirs": [str(RETURNER_DIR)],
                "id": MASTER, "hash_type": "sha256", "keep_jobs_seconds": 86400}
        base.update(opts)
        r = subprocess.run([str(salt_python), str(HERE / "drive_returner.py"), json.dumps(base),
                            json.dumps(calls)], capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
        assert r.returncode == 0, r.stderr[-3000:]
        got = json.loads(r.stdout.strip().splitlines()[-1])
        return got["results"], got["log"]
    return go


def es(url: str) -> dict:
    return {"elasticsearch": {"hosts": [url]}}


def closed_port() -> int:
    """A port nothing listens on: an engine that is down."""
    return free_port()


JID = "20261201101010123456"
LOAD = {"jid": JID, "fun": "test.arg", "arg": ["a", {"__kwarg__": True, "k": 1}], "tgt": "*",
        "tgt_type": "glob", "user": "root"}


def job_doc(jid, fun="test.ping", master=MASTER, **extra):
    doc = {"master": master, "jid": jid, "kind": "job", "fun": fun, "args": [], "tgt": "*",
           "tgt_type": "glob", "user": "root", "minions": {"expected": ["a", "b"]},
           "counts": {"expected": 2}, "status": "succeeded",
           "settled_at": "2026-12-01T10:10:11.500000Z"}
    doc.update(extra)
    return doc


def ret_doc(jid, minion, ret=True, fun="test.ping", status="succeeded", master=MASTER, **extra):
    doc = {"master": master, "jid": jid, "minion": minion, "fun": fun, "status": status,
           "return": ret, "retcode": 0, "success": True}
    doc.update(extra)
    return doc


def ok(results):
    for r in results:
        assert "error" not in r, r
    return [r["ok"] for r in results]


# ---------------------------------------------------------------------------


def test_writes_go_to_local_cache_and_local_answers_first(run, engine, tmp_path):
    calls = [["salttap", "prep_jid", [False, JID]],
             ["salttap", "save_load", [JID, LOAD, ["a", "b"]]],
             ["salttap", "returner", [{"jid": JID, "id": "a", "return": "x", "retcode": 0,
                                       "success": True, "fun": "test.arg"}]],
             ["salttap", "update_endtime", [JID, "2026, Dec 01 10:10:12.000000"]],
             ["salttap", "get_load", [JID]], ["local_cache", "get_load", [JID]],
             ["salttap", "get_jid", [JID]], ["local_cache", "get_jid", [JID]],
             ["salttap", "get_endtime", [JID]], ["local_cache", "get_endtime", [JID]]]
    results, log = run(calls, **es(engine.url))
    got = ok(results)
    assert got[4] == got[5] and got[4]["Minions"] == ["a", "b"] and got[4]["fun"] == "test.arg"
    assert got[6] == got[7] == {"a": {"return": "x", "retcode": 0, "success": True}}
    assert got[8] == got[9] == "2026, Dec 01 10:10:12.000000"
    assert list((tmp_path / "cache" / "jobs").rglob(".load.p")), "nothing written to local_cache"
    assert engine.searches() == [], "the engine was asked although local_cache had the job"
    assert log == []


def test_a_return_load_does_not_replace_the_published_load(run):
    # what the master's store_job sends a job cache other than local_cache
    ret_load = {"jid": JID, "id": "a", "fun": "test.arg", "return": "x", "retcode": 0}
    runner = "20261201101010999999"
    runner_load = {"jid": runner, "id": MASTER, "tgt": MASTER, "fun": "runner.test.arg",
                   "return": {"fun": "runner.test.arg"}, "user": "root"}
    results, _ = run([["salttap", "save_load", [JID, LOAD, ["a"]]], ["salttap", "save_load", [JID, ret_load]],
                      ["salttap", "save_load", [runner, runner_load, []]], ["salttap", "get_load", [JID]],
                      ["salttap", "get_load", [runner]]], elasticsearch={"hosts": ["127.0.0.1:9"]})
    got = ok(results)
    assert got[3] == dict(LOAD, Minions=["a"])
    assert got[4] == runner_load  # the first load of a runner is its return load


def test_the_indices_answer_in_local_cache_shapes(run, engine):
    engine.add("salt-jobs-2026.12.01",
               job_doc(JID, fun="state.apply", args=["fail", {"__kwarg__": True, "test": True}]),
               job_doc(JID, fun="other.fun", master="another-master"))
    engine.add("salt-returns-2026.12.01",
               ret_doc(JID, "a", {"s": {"result": False}}, fun="state.apply", retcode=2, success=False),
               ret_doc(JID, "b", None, fun="state.apply", status="missing"),
               ret_doc(JID, "c", "not mine", master="another-master"))
    results, log = run([["salttap", "get_load", [JID]], ["salttap", "get_jid", [JID]],
                        ["salttap", "get_endtime", [JID]]], **es(engine.url))
    load, returns, endtime = ok(results)
    assert load == {"jid": JID, "fun": "state.apply", "arg": ["fail", {"__kwarg__": True, "test": True}],
                    "tgt": "*", "tgt_type": "glob", "user": "root", "Minions": ["a", "b"]}
    # the missing minion has no return; another master's documents are not this master's
    assert returns == {"a": {"return": {"s": {"result": False}}, "retcode": 2, "success": False,
                             "out": "highstate"}}
    assert endtime == "2026, Dec 01 10:10:11.500000"
    assert log == []
    for req in engine.searches():
        # this master's documents, or (a job's) those of its fleet, which is this master by default
        assert str(req["body"]["query"]["bool"]["filter"]).count(repr(MASTER)) >= 1, req


def test_a_list_target_comes_back_as_a_list(run, engine):
    engine.add("salt-jobs-2026.12.01", job_doc(JID, tgt="a,b", tgt_type="list"))
    results, _ = run([["salttap", "get_load", [JID]], ["salttap", "get_jids", []]], **es(engine.url))
    load, jids = ok(results)
    assert load["tgt"] == ["a", "b"] and jids[JID]["Target"] == ["a", "b"]


def test_a_runner_comes_back_as_the_master_stored_it(run, engine):
    data = {"fun": "runner.test.arg", "fun_args": ["x"], "jid": JID, "return": {"args": ["x"]},
            "success": True, "user": "root", "_stamp": "2026-12-01T10:10:10.200000"}
    engine.add("salt-jobs-2026.12.01", job_doc(JID, fun="runner.test.arg", kind="runner", tgt="", tgt_type=""))
    engine.add("salt-events-2026.12.01", {"master": MASTER, "tag": f"salt/run/{JID}/ret",
                                          "@timestamp": "2026-12-01T10:10:10.2Z", "data": data})
    results, _ = run([["salttap", "get_load", [JID]], ["salttap", "get_jid", [JID]]], **es(engine.url))
    load, returns = ok(results)
    assert load == {"jid": JID, "id": MASTER, "tgt": MASTER, "fun": "runner.test.arg", "user": "root"}
    assert returns == {MASTER: {"return": data}}


def test_get_jids_pages_through_every_job(run, engine):
    jids = [f"202612011010{i:08d}" for i in range(2500)]
    engine.add("salt-jobs-2026.12.01", *[job_doc(j) for j in jids])
    results, log = run([["salttap", "get_jids", []]], **es(engine.url))
    got, = ok(results)
    assert sorted(got) == jids
    assert got[jids[0]] == {"Function": "test.ping", "Arguments": [], "Target": "*", "Target-type": "glob",
                            "User": "root", "StartTime": "2026, Dec 01 10:10:00.000000"}
    pages = engine.searches()
    assert len(pages) == 3 and all(p["body"]["size"] == 1000 for p in pages), [p["body"] for p in pages]
    assert "search_after" not in pages[0]["body"] and pages[2]["body"]["search_after"] == [jids[1999]]


def test_get_jids_merges_local_and_indexed_jobs(run, engine):
    old = "20261101000000000001"
    engine.add("salt-jobs-2026.11.01", job_doc(old))
    engine.add("salt-jobs-2026.12.01", job_doc(JID, fun="indexed.version"))
    results, _ = run([["salttap", "save_load", [JID, LOAD, ["a"]]], ["salttap", "get_jids", []],
                      ["salttap", "get_jids_filter", [1]], ["salttap", "get_jids_filter", [5]]],
                     **es(engine.url))
    _, jids, newest, five = ok(results)
    assert sorted(jids) == [old, JID]
    assert jids[JID]["Function"] == "test.arg"  # local_cache wins while it has the job
    assert [j["JID"] for j in newest] == [JID]
    assert [j["JID"] for j in five] == [old, JID]
    assert five[0]["Function"] == "test.ping"
    # The engine is asked only for jobs older than the cache's oldest one.
    listing = [r["body"] for r in engine.searches() if r["body"].get("sort") == [{"jid": "asc"}]]
    assert listing and all({"range": {"jid": {"lt": JID}}} in b["query"]["bool"]["filter"] for b in listing)


def test_get_jids_filter_leaves_find_job_out(run, engine):
    engine.add("salt-jobs-2026.12.01", job_doc("20261201000000000001"),
               job_doc("20261201000000000002", fun="saltutil.find_job"))
    results, _ = run([["salttap", "get_jids_filter", [10]], ["salttap", "get_jids_filter", [10, False]]],
                     **es(engine.url))
    filtered, everything = ok(results)
    assert [j["Function"] for j in filtered] == ["test.ping"]
    assert [j["Function"] for j in everything] == ["test.ping", "saltutil.find_job"]


def test_a_job_of_several_masters_of_the_fleet_is_merged(run, engine):
    """docs/masters.md: m1 published to a and b; b's return reached m2 only (an
    orphan there). Salt's tools on m1 see one job: both minions expected, both
    returns. A job of the same jid with other arguments (the collision guard)
    and another fleet's document stay out."""
    engine.add("salt-jobs-2026.12.01",
               job_doc(JID, fleet="f1", args=["x"], args_text='["x"]', started_at="2026-12-01T10:10:10.1Z",
                       minions={"expected": ["a", "b"]}),
               job_doc(JID, master="m2", fleet="f1", kind="orphan", user="", args=["x"], args_text='["x"]',
                       started_at="2026-12-01T10:10:10.3Z", minions={"expected": []}, counts={"expected": 0},
                       settled_at="2026-12-01T10:10:21.000000Z"),
               job_doc(JID, master="m3", fleet="f1", args=["y"], args_text='["y"]',
                       minions={"expected": ["c"]}, counts={"expected": 1}),
               job_doc(JID, master="m4", fleet="f2", minions={"expected": ["d"]}, counts={"expected": 1}))
    engine.add("salt-returns-2026.12.01",
               ret_doc(JID, "a", "from m1"), ret_doc(JID, "b", None, status="missing"),
               ret_doc(JID, "a", "from m2", master="m2"), ret_doc(JID, "b", "from m2", master="m2"),
               ret_doc(JID, "c", "m3's own job", master="m3"), ret_doc(JID, "d", "f2's", master="m4"))
    results, log = run([["salttap", "get_load", [JID]], ["salttap", "get_jid", [JID]],
                        ["salttap", "get_endtime", [JID]]], salttap={"fleet_id": "f1"}, **es(engine.url))
    load, returns, endtime = ok(results)
    assert load["Minions"] == ["a", "b"] and load["arg"] == ["x"] and load["user"] == "root", load
    assert sorted(returns) == ["a", "b"], returns
    assert returns["b"]["return"] == "from m2"
    assert returns["a"]["return"] in ("from m1", "from m2")
    assert endtime == "2026, Dec 01 10:10:21.000000", "the last master to settle it"
    assert log == []


def test_capped_minion_lists_are_read_from_the_returns(run, engine):
    engine.add("salt-jobs-2026.12.01", job_doc(JID, minions={"expected": ["m0", "m1"]}, counts={"expected": 3}))
    engine.add("salt-returns-2026.12.01", ret_doc(JID, "m0"), ret_doc(JID, "m1"),
               ret_doc(JID, "m2", None, status="missing"))
    results, _ = run([["salttap", "get_load", [JID]]], **es(engine.url))
    load, = ok(results)
    assert load["Minions"] == ["m0", "m1", "m2"]


def test_get_fun_and_get_minions(run, engine):
    engine.add("salt-returns-2026.12.01",
               ret_doc("20261201000000000001", "a"), ret_doc("20261201000000000002", "a"),
               ret_doc("20261201000000000001", "b"), ret_doc("20261201000000000003", "c", fun="cmd.run"),
               ret_doc("20261201000000000004", "d", None, status="missing"))
    results, _ = run([["salttap", "get_fun", ["test.ping"]], ["salttap", "get_fun", ["cmd.*"]],
                      ["salttap", "get_minions", []]], **es(engine.url), )
    ping, cmd, minions = ok(results)
    assert ping == {"a": "20261201000000000002", "b": "20261201000000000001"}
    assert cmd == {"c": "20261201000000000003"}
    assert minions == ["a", "b", "c"]


def test_engine_down_falls_back_with_one_log_line(run, tmp_path):
    calls = [["salttap", "save_load", [JID, LOAD, ["a"]]],
             ["salttap", "get_load", ["20261101000000000001"]], ["salttap", "get_jid", ["20261101000000000001"]],
             ["salttap", "get_jids", []], ["salttap", "get_jids_filter", [5]],
             ["salttap", "get_fun", ["test.ping"]], ["salttap", "get_minions", []],
             ["salttap", "get_endtime", ["20261101000000000001"]],
             ["new-loader", "", []], ["salttap", "get_load", ["20261101000000000001"]]]
    results, log = run(calls, **es(f"127.0.0.1:{closed_port()}"))
    got = ok(results)
    assert got[1] == {} and got[2] == {} and list(got[3]) == [JID] and [j["JID"] for j in got[4]] == [JID]
    assert got[5] == {} and got[6] == [] and got[7] is False and got[9] == {}
    # one line for the whole outage, even across loaders (each loads the module anew)
    assert len(log) == 1 and "cannot answer" in log[0], log


@pytest.mark.parametrize("status,raw", [(500, None), (404, None), (200, b"<html>not json"),
                                        (200, b'{"hits": 3}'), (200, b'[]')])
def test_bad_engine_answers_fall_back(run, engine, status, raw):
    engine.status, engine.raw_answer = status, raw
    results, log = run([["salttap", "get_load", [JID]], ["salttap", "get_jid", [JID]],
                        ["salttap", "get_jids", []]], **es(engine.url))
    assert ok(results) == [{}, {}, {}]
    assert len(log) == 1, log


def test_the_engine_back_is_logged_once(run, engine):
    engine.add("salt-jobs-2026.12.01", job_doc(JID))
    engine.fail_next = 2  # the first two reads fail, the third is answered
    calls = [["salttap", "get_load", [JID]]] * 4
    results, log = run(calls, **es(engine.url))
    got = ok(results)
    assert got[:2] == [{}, {}] and got[2]["fun"] == got[3]["fun"] == "test.ping"
    assert len(log) == 2 and "cannot answer" in log[0] and "answers again" in log[1], log


def test_salttap_config_file_hosts_prefix_and_auth(run, engine, tmp_path):
    secret = tmp_path / "pw"
    secret.write_text("s3cret\n")
    conf = tmp_path / "salttap.yaml"
    conf.write_text(f"master_id: tapped\nindexer:\n  hosts: [\"{engine.url}\"]\n  index_prefix: audit\n"
                    f"  auth: {{username: reader, password_file: {secret}}}\n")
    engine.add("audit-jobs-2026.12.01", job_doc(JID, master="tapped"))
    engine.add("salt-jobs-2026.12.01", job_doc(JID, fun="wrong.prefix", master="tapped"))
    results, _ = run([["salttap", "get_load", [JID]]], salttap={"config": str(conf)},
                     elasticsearch={"hosts": ["127.0.0.1:9"]})
    load, = ok(results)
    assert load["fun"] == "test.ping"
    req = engine.searches()[0]
    assert req["path"].startswith("/audit-jobs-*/_search"), req["path"]
    assert req["headers"]["Authorization"] == "Basic cmVhZGVyOnMzY3JldA==", req["headers"]


def test_returner_block_api_key_and_failover(run, engine):
    engine.add("salt-jobs-2026.12.01", job_doc(JID))
    results, log = run([["salttap", "get_load", [JID]]],
                       elasticsearch={"hosts": [f"127.0.0.1:{closed_port()}", engine.url], "api_key": "aWQ6a2V5"})
    load, = ok(results)
    assert load["fun"] == "test.ping" and log == []
    assert engine.searches()[0]["headers"]["Authorization"] == "ApiKey aWQ6a2V5"
