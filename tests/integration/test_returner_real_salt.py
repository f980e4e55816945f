"""The salttap returner as a real master's job cache, against a real OpenSearch 2.19.

The newest Salt of SALTTAP_SALT_VERSIONS; with SALTTAP_RETURNER_SERIES=all, the
newest of each series (3006.x, 3007.x, 3008.x):

1. The lab's master gets `master_job_cache: salttap` (deploy/salt/returners) in
   master.d and is restarted; `salttap run` indexes its bus into OpenSearch
   under a prefix of its own.
2. Jobs: a ping, a `cmd.run`, a job on a list target, a failing state run, an `--async` job with
   keyword arguments, a runner, a ping with minion-b stopped.
3. Salt's `jobs` runner is asked (in-process through Salt's runner loader,
   which is what `salt-run` runs): `lookup_jid` (also `missing=True`),
   `list_job`, `print_job`, `exit_success` for each job, `list_jobs` with
   `search_function`, `search_target`, `start_time` and `end_time`,
   `list_jobs_filter`, `last_run`; once through the returner and once through
   the stock `local_cache` (the same answers: writes and reads go there while
   it holds the jobs).
4. The master's job cache is purged: the returner gives the same answers as
   the stock cache gave, now from the indices; `salt-run jobs.lookup_jid`
   on the command line too.
5. The engine down: answers come from local_cache (a job run after the purge
   is found, a purged one is not), with one log line for all the calls.

Run:  .cache/venv/tools/bin/python -m pytest tests/integration/test_returner_real_salt.py -v
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import pytest

import saltlab
from http_calls import free_port, search, wait_until
from salt_suite import SERIES
from salttap_process import SalttapRun, indexer_yaml, wait_following

RETURNER_DIR = saltlab.REPO_ROOT / "deploy" / "salt" / "returners"
QUERIES = Path(__file__).resolve().parent / "returner_queries.py"
MINIONS = sorted(saltlab.DEFAULT_MINIONS)
MISSING_AFTER = 6       # correlator.missing_after_seconds
SEARCH_TIMEOUT = 90     # until documents are searchable (a busy 2-core box)
# The functions of the test's jobs: the CLI's own saltutil.find_job polls are
# in local_cache but not indexed (salttap's functions_blacklist).
OUR_FUNS = "test.*,cmd.*,state.*,runner.*"

# About 3 minutes a version on a loaded 2-core machine (two master restarts, a
# real OpenSearch): the newest version by default, every series with
# SALTTAP_RETURNER_SERIES=all.
RETURNER_VERSIONS = SERIES if os.environ.get("SALTTAP_RETURNER_SERIES") == "all" else SERIES[-1:]
pytestmark = [pytest.mark.parametrize("salt_lab", RETURNER_VERSIONS, indirect=True, ids=lambda v: f"salt-{v}"),
              pytest.mark.usefixtures("salttap_only")]


def ask(lab: saltlab.SaltLab, queries: list, overrides: dict | None = None) -> dict:
    """Salt's jobs runner in the lab's venv: {"results": [...], "log": [...]}."""
    r = subprocess.run([str(lab.bin / "python"), str(QUERIES), str(lab.master_conf_dir / "master"),
                        json.dumps(overrides or {}), json.dumps(queries)],
                       capture_output=True, text=True, timeout=180, env=lab.env,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, f"returner_queries exited {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    got = json.loads(r.stdout.strip().splitlines()[-1])
    for q, res in zip(queries, got["results"]):
        assert "error" not in res, (q, res, r.stderr[-3000:])
    return got


def runner_stamp_blanked(answer):
    """The answer with a runner return's `_stamp` blanked (checked present): the
    master stores the return with the stamp of an earlier moment than its `ret`
    event, which is what the indices keep (docs/returner.md)."""
    if isinstance(answer, dict):
        out = {k: runner_stamp_blanked(v) for k, v in answer.items()}
        if str(answer.get("fun", "")).startswith("runner.") and "return" in answer:
            assert re.match(r"\d{4}-\d\d-\d\dT", str(answer.get("_stamp", ""))), answer
            out["_stamp"] = "<stamp>"
        return out
    if isinstance(answer, list):
        return [runner_stamp_blanked(v) for v in answer]
    return answer


def salt_time(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S")


def test_jobs_runner_answers_from_the_indices(lab, salttap_bin, opensearch, tmp_path, request):
    url = opensearch.url
    prefix = "rt" + re.sub(r"\D", "", lab.version)  # indices of this version alone
    config = tmp_path / "salttap.yaml"
    config.write_text(
        f"correlator: {{missing_after_seconds: {MISSING_AFTER}}}\n"
        + indexer_yaml(url, tmp_path / "spool", index_prefix=prefix))
    dropin = lab.master_conf_dir / "master.d" / "salttap-returner.conf"
    dropin.parent.mkdir(exist_ok=True)
    dropin.write_text(json.dumps({
        "master_job_cache": "salttap",
        "returner_dirs": [str(RETURNER_DIR)],
        "salttap": {"config": str(config)},
    }) + "\n")
    run = SalttapRun.beside(lab, salttap_bin, config, f"salttap-run-returner-{lab.version}", drain_seconds=5)
    request.node._watchers = run.taps
    try:
        lab.restart_master()
        run.start()
        # salttap demonstrably follows the bus: an event fired now reaches the engine
        wait_following(lab, url, f"{prefix}-events-*", timeout=SEARCH_TIMEOUT)
        start = datetime.now()  # jobs before this (the restart's pings) are not indexed

        # ---- 2. the jobs
        ping = lab.salt_jid(["*", "test.ping"], t=10)
        echo = lab.salt_jid(["*", "cmd.run", "echo hello"], t=10)
        listed = lab.salt_jid(["-L", "minion-a,minion-b", "test.echo", "listed"], t=10)
        failed_state = lab.salt_jid(["minion-a", "state.apply", "fail"], t=30)
        asynced = lab.salt_async(["*", "test.arg", "one", "two", "colour=blue"])
        runner_out = lab.salt_run(["--out=json", "test.arg", "first", "flavour=plain"])
        assert "first" in runner_out.stdout, runner_out.stdout
        lab.stop_minion("minion-b")
        missing = lab.salt_jid(["*", "test.ping"], t=3)
        end = datetime.now() + timedelta(seconds=1)

        # ---- every job settled in the engine, the runner's return event there too
        jids = {ping: 2, echo: 2, listed: 2, failed_state: 1, asynced: 2, missing: 2}

        def indexed():
            docs = {d["jid"]: d for d in search(url, f"{prefix}-jobs-*", {"match_all": {}}, size=100)}
            rets = search(url, f"{prefix}-returns-*", {"terms": {"jid": list(jids)}}, size=100)
            runners = [d for d in docs.values() if d.get("fun") == "runner.test.arg"]
            if not runners or runners[0].get("status") == "running":
                return None
            events = search(url, f"{prefix}-events-*",
                            {"term": {"tag": f"salt/run/{runners[0]['jid']}/ret"}})
            settled = all(docs.get(j, {}).get("settled_at") for j in jids)
            counted = all(sum(1 for d in rets if d["jid"] == j) == n for j, n in jids.items())
            return runners[0]["jid"] if settled and counted and events else None
        runner = wait_until(indexed, SEARCH_TIMEOUT, "every job, return and the runner's return "
                            "event in the engine", run.diagnostics)
        jobs = [ping, echo, listed, failed_state, asynced, runner, missing]

        queries = []
        for jid in jobs:
            queries += [["jobs.lookup_jid", [jid], {}], ["jobs.list_job", [jid], {}],
                        ["jobs.print_job", [jid], {}], ["jobs.exit_success", [jid], {}]]
        queries += [
            ["jobs.lookup_jid", [missing], {"missing": True}],
            ["jobs.list_jobs", [], {"search_function": OUR_FUNS, "start_time": salt_time(start)}],
            ["jobs.list_jobs", [], {"search_function": "test.ping", "start_time": salt_time(start)}],
            ["jobs.list_jobs", [], {"search_target": "minion-a", "search_function": OUR_FUNS,
                                    "start_time": salt_time(start), "end_time": salt_time(end)}],
            ["jobs.list_jobs", [], {"search_function": "runner.*", "start_time": salt_time(start)}],
            ["jobs.list_jobs_filter", [len(jobs)], {}],
            ["jobs.last_run", [], {"function": "cmd.run"}],
            ["jobs.last_run", [], {"function": "test.ping", "target": "*"}],
        ]

        # the asynchronous job's returns are in local_cache too (the engine saw them first)
        def async_cached():
            got = ask(lab, [["jobs.list_job", [asynced], {}]])["results"][0]["ok"]
            return got if sorted(got.get("Result", {})) == MINIONS else None
        wait_until(async_cached, 60, f"both returns of {asynced} in the job cache")

        # ---- 3. through the returner and through the stock cache: the same answers
        through_returner = ask(lab, queries)
        stock = ask(lab, queries, {"master_job_cache": "local_cache"})
        assert through_returner["results"] == stock["results"]
        assert through_returner["log"] == [], through_returner["log"]
        answers = dict(zip(range(len(queries)), stock["results"]))
        # the answers are about these jobs, not empty shells
        lookup = {jid: answers[4 * i]["ok"] for i, jid in enumerate(jobs)}
        assert lookup[echo] == {"minion-a": "hello", "minion-b": "hello"}, lookup[echo]
        assert lookup[failed_state]["outputter"] == "highstate", lookup[failed_state]
        assert lookup[missing] == {"minion-a": True}, lookup[missing]
        assert answers[4 * len(jobs)]["ok"] == {"minion-a": True, "minion-b": "Minion did not return"}
        found = answers[4 * len(jobs) + 1]["ok"]
        assert set(jobs) <= set(found), sorted(found)
        assert answers[4 * jobs.index(failed_state) + 3]["ok"] == {"minion-a": True}  # a return
        assert answers[4 * jobs.index(missing) + 3]["ok"] == {"minion-a": True, "minion-b": False}

        # ---- 4. the master's job cache purged: the indices answer, as the stock cache did
        # The master keeps writing into its cache (late returns, the runner jobs
        # these queries start), so the purge moves the directory away in one
        # rename before deleting it: a writer never sees a half-removed tree.
        job_dir = Path(lab.master_opts["cachedir"]) / "jobs"
        purged = job_dir.with_name("jobs.purged")
        job_dir.rename(purged)
        job_dir.mkdir(exist_ok=True)
        shutil.rmtree(purged, ignore_errors=True)
        gone = ask(lab, [["jobs.list_job", [ping], {}]], {"master_job_cache": "local_cache"})
        assert gone["results"][0]["ok"].get("Result") == {}, gone  # purged indeed
        from_indices = ask(lab, queries)
        for q, want, got in zip(queries, stock["results"], from_indices["results"]):
            want, got = runner_stamp_blanked(want), runner_stamp_blanked(got)
            assert got == want, f"{q}:\n  stock local_cache: {want}\n  from the indices:  {got}"
        assert from_indices["log"] == [], from_indices["log"]
        # salt-run itself (this stores a runner job of its own, so it comes last)
        cli = lab.salt_run(["--out=json", "jobs.lookup_jid", echo])
        assert json.loads(cli.stdout) == lookup[echo], cli.stdout

        # ---- 5. the engine down: local_cache answers, one log line for all the calls
        dead_port = free_port()
        dead = tmp_path / "dead-engine.yaml"
        dead.write_text(f"indexer: {{hosts: [\"http://127.0.0.1:{dead_port}\"], index_prefix: {prefix}}}\n")
        fresh = lab.salt_jid(["minion-a", "test.ping"], t=10)
        down = ask(lab, [["jobs.lookup_jid", [fresh], {}], ["jobs.lookup_jid", [ping], {}],
                         ["jobs.list_job", [echo], {}],
                         ["jobs.list_jobs", [], {"search_function": OUR_FUNS, "start_time": salt_time(start)}]],
                   {"salttap": {"config": str(dead)}})
        assert down["results"][0]["ok"] == {"minion-a": True}, down
        assert down["results"][1]["ok"] == {}, down
        assert down["results"][2]["ok"]["Result"] == {}, down
        assert ping not in down["results"][3]["ok"] and fresh in down["results"][3]["ok"], down
        assert len(down["log"]) == 1 and "cannot answer" in down["log"][0], down["log"]
    finally:
        dropin.unlink(missing_ok=True)
        run.stop()
        if not lab.minions["minion-b"].running():
            lab.start_minion("minion-b", wait=False)
        lab.restart_master()  # the default job cache again, for the tests after this one
