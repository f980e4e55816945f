"""`salttap watch --jobs` (job correlation and alerts) against real Salt masters.

One lab per Salt version (conftest.py). Every test asserts on salttap's own output:
the JSON job lines of `watch --jobs --format json`, the webhook POSTs it makes, or
the alert events it fires into the master bus (and the lab master's reactor
answering them).

Run:  .cache/venv/tools/bin/python -m pytest tests/integration -v -k jobs
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import saltlab
from held_job import HeldJob
from http_calls import wait_until
from salt_suite import WATCHER_MODE

MINIONS = sorted(saltlab.DEFAULT_MINIONS)
LINE_TIMEOUT = 60  # generous: a busy 2-core box
SYNC_JOB = ("-L", "minion-a", "test.ping")  # the job a new watcher waits for


@pytest.fixture(autouse=True)
def _needs_salttap():
    if WATCHER_MODE != "salttap":
        pytest.skip(f"SALTTAP_WATCHER={WATCHER_MODE}: job lines need the salttap binary")


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

def parse_job_line(line: str) -> dict:
    obj = json.loads(line)
    if not isinstance(obj, dict) or "jid" not in obj:
        raise ValueError("not a job line")
    return obj


class JobWatcher(saltlab.EventWatcher):
    """`salttap watch --jobs --format json ...`: .events are the job lines, in order."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self._stopped = False

    def lines(self, jid: str) -> list[dict]:
        with self._cond:
            return [e for e in self.events if e["jid"] == jid]

    def wait_line(self, jid: str, pred=lambda e: True, timeout: float = LINE_TIMEOUT,
                  what: str = "") -> dict:
        return self.wait_for(lambda e: e["jid"] == jid and pred(e), timeout,
                             f"a job line for {jid} {what}".rstrip())

    def sync(self, lab: saltlab.SaltLab, timeout: float = 60,
             job: tuple[str, ...] = SYNC_JOB) -> None:
        """Return once the tap demonstrably follows jobs: a real `salt <job>` (one
        its filters select) until its job line shows up."""
        self.until_seen(lambda: lab.salt_jid(list(job), t=10), lambda jid: self.wait_line(jid, timeout=10), timeout)

    def diagnostics(self, n: int = 20) -> str:
        with self._cond:
            last = [json.dumps({k: v for k, v in e.items() if k != "_received"})[:600]
                    for e in self.events[-n:]]
        return (f"  argv: {' '.join(self.argv)}\n  pid={self.proc.pid} rc={self.proc.poll()}\n"
                f"  {len(self.events)} job lines, last:\n    " + "\n    ".join(last) +
                f"\n  unparsed stdout (last 10): {self.noise[-10:]}\n"
                f"  stderr (last 60 lines):\n    " + "\n    ".join(self.stderr_lines[-60:]))

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            super().stop()


@pytest.fixture
def start_jobs(lab, request, start_watcher, tmp_path):
    """start_jobs(missing_after=None, config=None, filters=(), sync_job=SYNC_JOB) -> a
    synced JobWatcher running `salttap watch --jobs --format json --sock-dir <sock_dir> [...]`.
    config: YAML text, written to a file and checked with `salttap check-config`.
    filters: more watch options (--minion, --fun, ...); sync_job must be a job they select."""
    mine: list[JobWatcher] = []
    # start_watcher made request.node._watchers: failure reports show ours too
    shared = request.node._watchers
    counter = [0]

    def start(missing_after: float | None = None, config: str | None = None,
              sync: bool = True, filters: tuple[str, ...] = (),
              sync_job: tuple[str, ...] = SYNC_JOB) -> JobWatcher:
        salttap_bin = request.getfixturevalue("salttap_bin")
        counter[0] += 1
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{request.node.name}-jobs-{counter[0]}")
        argv = [str(salttap_bin), "watch", "--jobs", "--format", "json",
                "--sock-dir", str(lab.sock_dir)]
        if missing_after is not None:
            argv += ["--missing-after", str(missing_after)]
        if config is not None:
            f = tmp_path / f"salttap-{counter[0]}.yaml"
            f.write_text(config)
            r = lab.run([str(salttap_bin), "check-config", str(f)], check=False, timeout=30)
            assert r.returncode == 0, f"check-config {f}: rc={r.returncode}\n{config}\n" \
                                      f"{r.stdout}\n{r.stderr}"
            argv += ["--config", str(f)]
        argv += filters
        w = JobWatcher(argv, name=name, parse=parse_job_line, log_dir=lab.log_dir)
        mine.append(w)
        shared.append(w)
        if sync:
            w.sync(lab, job=sync_job)
        return w

    yield start
    for w in mine:
        w.stop()


def ts(s: str) -> float:
    """salttap's UTC timestamps (2026-11-29T20:24:41.443300Z) as epoch seconds."""
    return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def assert_failed_state_run(line: dict) -> None:
    """The job line (or alert) of `salt '*' state.apply fail` (saltlab.SLS_FILES['fail.sls'])."""
    fs = line["failed_states"]
    for m in MINIONS:
        ids = {f["id"]: f for f in fs if f["minion"] == m}
        assert set(ids) == {"will_fail", "needs_fail"}, (m, fs)
        assert ids["will_fail"]["function"] == "test.fail_without_changes", fs
        assert ids["needs_fail"]["function"] == "test.succeed_without_changes", fs
        assert "requisite" in ids["needs_fail"]["comment"].lower(), fs


# --------------------------------------------------------------------------
# job lines
# --------------------------------------------------------------------------

def test_failing_state_run(lab, start_jobs):
    tap = start_jobs()
    jid = lab.salt_jid(["*", "state.apply", "fail"])
    line = tap.wait_line(jid)
    assert line["kind"] == "job" and line["fun"] == "state.apply", line
    assert line["args"] == ["fail"], line
    assert line["tgt"] == "*" and line["tgt_type"] == "glob", line
    assert line["status"] == "failed", line
    mins = line["minions"]
    assert sorted(mins["expected"]) == MINIONS, line
    assert sorted(mins["failed"]) == MINIONS, line
    assert mins["succeeded"] == [] and mins["missing"] == [] and mins["late"] == [], line
    assert line["counts"]["failed"] == 2 and line["counts"]["missing"] == 0, line
    assert sorted(f["minion"] for f in line["failures"]) == MINIONS, line
    st = line["states"]
    assert st["total"] == 4 and st["failed"] == 4 and st["succeeded"] == 0, st
    assert_failed_state_run(line)
    for f in line["failed_states"]:
        assert {"minion", "id", "name", "function", "comment", "run_num"} <= set(f), f
    will = [f for f in line["failed_states"] if f["id"] == "will_fail"]
    assert all(f["name"] == "this fails" and f["run_num"] == 0 for f in will), will
    assert "late_updates" not in line, line


def test_stopped_minion_is_missing(lab, start_jobs):
    """minion-b is stopped: targeted (its key is accepted) but never returns."""
    tap = start_jobs(missing_after=10)
    lab.stop_minion("minion-b")
    restarted = False
    try:
        # also a failing job on the same two minions: failed wins over missing
        fjid = lab.salt_async(["*", "state.apply", "fail"])
        jid = lab.salt_jid(["*", "test.ping"], t=3)
        # A publish is not queued for a minion that is down: start minion-b again
        # now (it cannot answer either job) and let it come up while we wait.
        lab.start_minion("minion-b", wait=False)
        restarted = True

        line = tap.wait_line(jid)
        assert line["status"] == "missing", line
        assert line["minions"]["missing"] == ["minion-b"], line
        assert line["minions"]["succeeded"] == ["minion-a"], line
        assert line["minions"]["failed"] == [], line
        assert sorted(line["minions"]["expected"]) == MINIONS, line
        assert line["counts"]["missing"] == 1 and line["counts"]["succeeded"] == 1, line
        # missing only once the deadline (started_at + --missing-after 10) has passed
        waited = ts(line["settled_at"]) - ts(line["started_at"])
        assert waited >= 10 - 1e-3, f"settled after {waited:.3f}s < --missing-after 10: {line}"

        fline = tap.wait_line(fjid)
        assert fline["status"] == "failed", f"failed must win over missing: {fline}"
        assert fline["minions"]["failed"] == ["minion-a"], fline
        assert fline["minions"]["missing"] == ["minion-b"], fline
        assert fline["minions"]["succeeded"] == [], fline
    finally:
        if not restarted:
            lab.start_minion("minion-b", wait=False)
        lab.wait_minions(["minion-b"])  # later tests need two minions


def test_filters_select_whole_jobs(lab, start_jobs):
    """--minion and --fun select settled jobs; the correlator still sees every event,
    so a job selected by one of its minions keeps its fun, user, target and every
    minion's outcome (no orphan made of returns whose `new` was filtered away)."""
    by_minion = start_jobs(filters=("--minion", "minion-a"))
    by_fun = start_jobs(filters=("--fun", "test.echo"),
                        sync_job=("-L", "minion-a", "test.echo", "sync"))
    word = f"hello-{uuid.uuid4().hex[:8]}"
    ping = lab.salt_jid(["*", "test.ping"])
    only_b = lab.salt_jid(["-L", "minion-b", "test.ping"])
    echo = lab.salt_jid(["*", "test.echo", word])

    line = by_minion.wait_line(ping)
    assert line["kind"] == "job", f"not the published job: {line}"
    assert (line["fun"], line["user"], line["tgt"], line["tgt_type"]) == \
        ("test.ping", "root", "*", "glob"), line
    assert line["status"] == "succeeded", line
    assert sorted(line["minions"]["expected"]) == MINIONS, line
    assert sorted(line["minions"]["succeeded"]) == MINIONS, line
    eline = by_minion.wait_line(echo)
    assert eline["fun"] == "test.echo" and sorted(eline["minions"]["succeeded"]) == MINIONS, eline
    # only_b settled (its return was on the bus) before echo's `new`: had it been
    # selected, its line would have come first
    assert by_minion.lines(only_b) == [], by_minion.lines(only_b)

    fline = by_fun.wait_line(echo)
    assert fline["args"] == [word] and fline["tgt"] == "*", fline
    assert sorted(fline["minions"]["succeeded"]) == MINIONS, fline
    # the ping and only_b settled before echo's `new`
    assert by_fun.lines(ping) == [] and by_fun.lines(only_b) == [], by_fun.events
    assert {e["fun"] for e in by_fun.events} == {"test.echo"}, [e["fun"] for e in by_fun.events]


def test_minion_filter_shows_it_missing(lab, start_jobs):
    """--minion minion-b while minion-b is stopped: the job is selected by the
    minion it expected, and says minion-b never returned."""
    tap = start_jobs(missing_after=5, filters=("--minion", "minion-b"),
                     sync_job=("-L", "minion-b", "test.ping"))
    lab.stop_minion("minion-b")
    restarted = False
    try:
        jid = lab.salt_jid(["*", "test.ping"], t=3)
        lab.start_minion("minion-b", wait=False)  # a publish is not queued for it
        restarted = True
        line = tap.wait_line(jid)
        assert (line["kind"], line["fun"], line["user"], line["tgt"]) == \
            ("job", "test.ping", "root", "*"), line
        assert line["status"] == "missing", line
        assert line["minions"]["missing"] == ["minion-b"], line
        assert line["minions"]["succeeded"] == ["minion-a"], line
        assert sorted(line["minions"]["expected"]) == MINIONS, line
    finally:
        if not restarted:
            lab.start_minion("minion-b", wait=False)
        lab.wait_minions(["minion-b"])  # later tests need two minions


def test_tag_with_jobs_is_refused(lab, salttap_bin):
    r = lab.run([str(salttap_bin), "watch", "--jobs", "--tag", "salt/job/*", "--sock-dir",
                 str(lab.sock_dir)], check=False, timeout=30)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "--tag" in r.stderr and "--jobs" in r.stderr, r.stderr
    assert r.stdout == "", r.stdout


# --missing-after of the find_job test: far above how often the CLI asks saltutil.find_job
# (every -t 2 s, each round waiting up to the lab's gather_job_timeout of 3 s for answers).
FIND_JOB_MISSING_AFTER = 20


def find_job_answers(bus: saltlab.EventWatcher, jid: str) -> set[str]:
    """The minions that answered a saltutil.find_job for `jid` with the job still running there."""
    events = list(bus.events)
    polls = set()
    for ev in events:
        m = re.fullmatch(r"salt/job/(\d+)/new", ev["tag"])
        if m and ev["data"].get("fun") == "saltutil.find_job" and jid in json.dumps(ev["data"].get("arg")):
            polls.add(m.group(1))
    running = set()
    for ev in events:
        m = re.fullmatch(r"salt/job/(\d+)/ret/(.+)", ev["tag"])
        ret = ev["data"].get("return")
        if m and m.group(1) in polls and isinstance(ret, dict) and ret.get("jid") == jid:
            running.add(m.group(2))
    return running


def test_find_job_polling_extends_deadline(lab, start_jobs, start_watcher, tmp_path):
    """Two jobs held open on both minions until the test lets them end (held_job.py),
    --missing-after 20. The CLI polls saltutil.find_job for the synchronous one (-t 2): its
    minions answer "still running", which moves their deadline, so it is not missing when its
    first deadline passes. Nobody polls the --async one, published after it: missing at its
    deadline, which comes after the polled job's first one. Only then does the test let both
    jobs end: the polled one settles succeeded, first time; the --async one gets update lines
    as its late returns come in. Neither job can end before the test says so; the one
    deadline left is the find_job answers' to come within 20 s of each other."""
    bus = start_watcher()  # raw events: the jobs' jids and the find_job answers
    tap = start_jobs(missing_after=FIND_JOB_MISSING_AFTER)
    held_polled, held_async = HeldJob(tmp_path), HeldJob(tmp_path)
    cli: dict = {}
    # The synchronous CLI waits for the returns, polling find_job: in a thread until let go.
    polling = threading.Thread(target=lambda: cli.update(r=lab.salt(
        ["--show-jid", "--out=quiet", "-t", "2", *held_polled.args()], check=False, timeout=600)), daemon=True)
    polling.start()
    try:
        new = bus.wait_for(lambda e: re.fullmatch(r"salt/job/\d+/new", e["tag"]) is not None
                           and held_polled.command in json.dumps(e["data"].get("arg")),
                           timeout=LINE_TIMEOUT, what="the polled job's new event")
        jid = new["data"]["jid"]
        ajid = lab.salt_async(held_async.args())

        # async, not polled: missing at its deadline. The line is salttap's verdict before
        # any return could come (the job is held): both missing, none succeeded or late.
        first = tap.wait_line(ajid, timeout=FIND_JOB_MISSING_AFTER + LINE_TIMEOUT)
        assert first["status"] == "missing", first
        assert sorted(first["minions"]["missing"]) == MINIONS, first
        assert first["minions"]["succeeded"] == [] and first["minions"]["late"] == [], first
        assert "late_updates" not in first, first
        waited = ts(first["settled_at"]) - ts(first["started_at"])
        assert waited >= FIND_JOB_MISSING_AFTER - 1e-3, \
            f"settled {waited:.3f}s after the start, before its {FIND_JOB_MISSING_AFTER} s deadline: {first}"
        # The polled job's first deadline (it started before the async one) has passed too; the
        # CLI polled it and both minions said it runs.
        wait_until(lambda: find_job_answers(bus, jid) == set(MINIONS), LINE_TIMEOUT,
                   f"both minions' find_job answers for {jid}", bus.diagnostics)

        held_polled.release()
        held_async.release()
        # polled: settles succeeded, first time; never called missing at its first deadline
        line = tap.wait_line(jid)
        assert line["status"] == "succeeded", line
        assert sorted(line["minions"]["succeeded"]) == MINIONS, line
        assert line["minions"]["missing"] == [] and line["minions"]["late"] == [], line
        assert "late_updates" not in line, line
        polling.join(timeout=LINE_TIMEOUT)
        assert cli.get("r") is not None and cli["r"].returncode == 0, cli

        # async: the late returns come after the missing verdict, as updates
        final = tap.wait_line(ajid, lambda e: sorted(e["minions"]["late"]) == MINIONS,
                              what="with both minions late")
        assert final.get("late_updates", 0) >= 1, final
        assert sorted(final["minions"]["succeeded"]) == MINIONS, final
        assert final["minions"]["missing"] == [], final
        updates = tap.lines(ajid)[1:]
        assert updates and all(e.get("late_updates", 0) >= 1 for e in updates), updates
    finally:
        held_polled.release()  # no minion keeps a job waiting after a failure
        held_async.release()
        polling.join(timeout=LINE_TIMEOUT)

    # the find_job jobs are never reported
    find_jobs = set()
    for ev in list(bus.events):
        m = re.fullmatch(r"salt/job/(\d+)/new", ev["tag"])
        if m and ev["data"].get("fun") == "saltutil.find_job":
            find_jobs.add(m.group(1))
    reported = {e["jid"] for e in tap.events}
    assert not reported & find_jobs, sorted(reported & find_jobs)
    assert not [e for e in tap.events if e["fun"] == "saltutil.find_job"]


SCHEDULE_CONFIG = """\
correlator:
  orphan_settle_seconds: 2
"""


def test_scheduled_job(lab, start_jobs):
    # scheduled returns have no `new` event: they settle orphan_settle_seconds after
    # the last return (default 10 s; 2 s here to keep the test short)
    tap = start_jobs(config=SCHEDULE_CONFIG)
    since = len(tap.events)
    r = lab.salt(["minion-a", "schedule.add", "sched_echo", "function=cmd.run",
                  "job_args=['echo scheduled']", "seconds=5", "return_job=True",
                  "--out=json", "--static"], check=False)
    added = json.loads(r.stdout or "{}").get("minion-a", {})
    try:
        assert added.get("result") is True, f"schedule.add: {r.stdout} {r.stderr}"
        line = tap.wait_for(lambda e: e["kind"] == "scheduled" and e["fun"] == "cmd.run",
                            timeout=LINE_TIMEOUT, what="a scheduled cmd.run job line",
                            since=since)
        assert line["status"] == "succeeded", line
        assert line["minions"]["succeeded"] == ["minion-a"], line
        assert line["minions"]["failed"] == [] and line["minions"]["missing"] == [], line
        assert line["args"] == ["echo scheduled"], line
        assert line["user"] != "root", line  # nobody published it
    finally:
        r = lab.salt(["minion-a", "schedule.delete", "sched_echo", "--out=json", "--static"],
                     check=False)
    deleted = json.loads(r.stdout or "{}").get("minion-a", {})
    assert deleted.get("result") is True, f"schedule.delete: {r.stdout} {r.stderr}"


def test_runner_and_wheel(lab, start_jobs):
    tap = start_jobs()
    word = f"hello-{uuid.uuid4().hex[:8]}"
    lab.salt_run(["test.arg", word])
    line = tap.wait_for(lambda e: e["kind"] == "runner" and e.get("args") == [word],
                        timeout=LINE_TIMEOUT, what=f"runner test.arg {word}")
    assert line["fun"] in ("test.arg", "runner.test.arg"), line
    assert line["status"] == "succeeded", line
    assert line["user"] == "root", line

    # a runner that does not exist: still a runner job, failed
    name = f"nosuch{uuid.uuid4().hex[:8]}.runner"
    lab.salt_run([name], check=False)
    line = tap.wait_for(lambda e: e["kind"] == "runner" and e["fun"].endswith(name),
                        timeout=LINE_TIMEOUT, what=f"runner {name}")
    assert line["status"] == "failed", line

    # wheel: Salt's own WheelClient (salt-key fires no events)
    code = ("import json, sys, salt.config, salt.wheel\n"
            "opts = salt.config.master_config(sys.argv[1])\n"
            "r = salt.wheel.WheelClient(opts).cmd('key.list_all', print_event=False,"
            " full_return=True)\n"
            "print(json.dumps({'jid': r['jid'], 'minions': r['return']['minions']}))\n")
    r = lab.run([str(lab.bin / "python"), "-c", code, str(lab.master_conf_dir / "master")])
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert sorted(out["minions"]) == MINIONS, out
    line = tap.wait_line(out["jid"])
    assert line["kind"] == "wheel", line
    assert line["fun"] in ("key.list_all", "wheel.key.list_all"), line
    assert line["status"] == "succeeded", line


# --------------------------------------------------------------------------
# alerts
# --------------------------------------------------------------------------

class HookReceiver:
    """HTTP server on 127.0.0.1 recording every POST; answers `fail_first` 500s
    first, then 200."""

    def __init__(self, fail_first: int = 1):
        self.requests: list[dict] = []
        self.cond = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.cond:
                    status = 500 if len(receiver.requests) < fail_first else 200
                    receiver.requests.append({"path": self.path, "status": status,
                                              "headers": dict(self.headers), "body": body,
                                              "at": time.monotonic()})
                    receiver.cond.notify_all()
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True,
                                       name="hook-receiver")
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def for_jid(self, jid: str) -> list[dict]:
        out = []
        with self.cond:
            for r in self.requests:
                try:
                    body = json.loads(r["body"])
                except ValueError:
                    body = None
                if isinstance(body, dict) and body.get("jid") == jid:
                    out.append({**r, "json": body})
        return out

    def wait(self, pred, timeout: float, what: str):
        deadline = time.monotonic() + timeout
        with self.cond:
            while not pred():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"webhook receiver: timed out after {timeout}s "
                                         f"waiting for {what}; got {self.requests}")
                self.cond.wait(min(left, 0.5))

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


@pytest.fixture
def hook():
    h = HookReceiver(fail_first=1)
    yield h
    h.close()


def test_alert_webhook_retried(lab, start_jobs, hook):
    # With the master's config and no master_id in salttap's: the alert carries the
    # master config's id, as `run`'s do.
    tap = start_jobs(config=(
        "alerts:\n"
        f"  webhook: {{url: \"{hook.url}\", backoff_initial_ms: 200, max_attempts: 5}}\n"
        "  min_risk: critical\n"
    ), filters=("--master-config", str(lab.master_conf_dir / "master")))
    jid = lab.salt_jid(["*", "state.apply", "fail"])
    line = tap.wait_line(jid)
    assert line["status"] == "failed", line
    hook.wait(lambda: any(r["status"] == 200 for r in hook.for_jid(jid)), LINE_TIMEOUT,
              f"a delivered alert for {jid}")
    tap.stop()  # nothing more can arrive: count exactly
    got = hook.for_jid(jid)
    assert [r["status"] for r in got] == [500, 200], \
        f"expected one 500 then one retried 200 for {jid}: {[r['status'] for r in got]}"
    assert hook.requests[0]["body"] == got[0]["body"], "the first request was not this alert"
    assert got[0]["body"] == got[1]["body"], "the retry sent a different body"
    assert all(r["path"] == "/hook" for r in got), got
    assert "application/json" in got[1]["headers"].get("Content-Type", ""), got[1]["headers"]
    a = got[1]["json"]
    assert a["alert"] == "failed" and "failed" in a["kinds"], a
    assert a["kind"] == "job" and a["fun"] == "state.apply" and a["args"] == ["fail"], a
    assert a["status"] == "failed" and a["tgt"] == "*", a
    assert a["master"] == lab.master_opts["id"], a
    assert a["counts"]["expected"] == 2 and a["counts"]["failed"] == 2, a
    assert sorted(a["failed"]) == MINIONS and a["missing"] == [], a
    assert_failed_state_run(a)
    # no alert for anything else (the sync ping succeeded)
    others = [r["body"][:200] for r in hook.requests if r["body"] != got[0]["body"]]
    assert not others, others
    assert any(re.search(r"retry|attempt", s, re.I) for s in tap.stderr_lines), \
        tap.diagnostics()


def test_alert_event_reaches_reactor(lab, start_jobs, start_watcher):
    assert lab.reactors, "the lab has no reactor for salttap/alert/*"
    bus = start_watcher()
    tap = start_jobs(config="alerts:\n  fire_event: true\n  min_risk: high\n")
    jid = lab.salt_jid(["*", "state.apply", "fail"])
    line = tap.wait_line(jid)
    assert line["status"] == "failed", line
    alert = bus.wait_tag(f"salttap/alert/failed/{jid}", timeout=LINE_TIMEOUT)["data"]
    assert alert["alert"] == "failed" and alert["jid"] == jid, alert
    assert alert["status"] == "failed" and sorted(alert["failed"]) == MINIONS, alert
    assert_failed_state_run(alert)
    reacted = bus.wait_for(lambda e: e["tag"] == saltlab.REACTED_TAG
                           and e["data"].get("alert_jid") == jid,
                           timeout=LINE_TIMEOUT, what=f"{saltlab.REACTED_TAG} for {jid}")
    d = reacted["data"]
    assert d["alert"] == "failed" and d["alert_status"] == "failed", d
    assert d["alert_tag"] == f"salttap/alert/failed/{jid}", d
    tap.stop()  # then count: one alert event for the job
    alerts = [t for t in bus.tags() if re.fullmatch(rf"salttap/alert/\w+/{jid}", t)]
    assert alerts == [f"salttap/alert/failed/{jid}"], alerts
