"""Silent minions against real Salt and a real OpenSearch: one alert per episode, one recovery.

The lab's minions all connect from 127.0.0.1, and the master's presence lists go by address:
a stopped minion stays "present" while another is connected. So presence does not count here
(`count_presence: false`); minion-a is kept heard by the test's own pings (a return every
poll, far inside its window), minion-b by nothing once stopped. salttap runs with
`fleet.silence: [{match: "minion-b", after_seconds: 20}, {match: "*", after_seconds: 60}]`,
a sweep every 2 s and a webhook outlet whose receiver records every POST:

1. at start both minions are `ok` (salttap_fleet_minions{liveness="ok"} 2);
2. minion-b stopped: exactly one `minion_silent` for minion-b reaches the webhook, and
   `salttap fleet --format json` says it is silent; minion-a stays ok. Two more windows of
   sweeps later (waited on the sweep timestamp on /metrics, not on a sleep) still exactly one;
3. minion-b started: one `minion_recovered` with `resolution: heard`; the fleet says ok.

Highstates and the entity index, while minion-b's window runs: a real `state.apply test=True`
and then an enforcing `state.apply` on minion-a (the lab's top file: every minion gets `good`).
Their return documents say `highstate: true` with `test` true and false; minion-a's document in
`salt-minions` (`_id` `<master>/minion-a`) gets the dry run as its last highstate, then the
enforcing one as both its last and last successful highstate, and `salttap fleet` agrees.
minion-b's document says `silent: true` while its episode is open.

Stale highstates and the per-minion gauges, in the same run (minion-a watched with
`fleet.highstate: [{match: minion-a, stale_after_seconds: 20}]`, minion-b unwatched,
`fleet.minion_metrics` on): minion-a's enforcing highstate above ages past its window while
minion-b's silence is waited on, and one `highstate_stale` for minion-a reaches the webhook
(its `since` the enforcing run's time), its entity says `highstate_freshness: stale`.
A real failing full highstate (`state.apply saltenv=<one with no top file>`: Salt's own "No Top
file" failure) leaves it stale: two sweeps after its return, no `highstate_fresh`, `salttap
fleet --highstate stale` lists it, salttap_fleet_highstate_minions{freshness="stale"} is 1. The
running salttap's /metrics has the per-minion gauges of both real minions (last heard, the last
successful highstate's time, 0 for minion-b; the failing run's failed states). Then a
successful enforcing `state.apply` closes the episode: one `highstate_fresh` with
`resolution: highstate_ok` and the same `since`.

Every wait is on an outcome (a POST, a metric, a sweep time); the windows are far from
machine speed (a sweep every 2 s against windows of 20 and 60 s).
Salt version: the newest of SALTTAP_SALT_VERSIONS.

Run:  .cache/venv/tools/bin/python -m pytest tests/integration/test_fleet_real_salt.py -v
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from http_calls import call
from salt_suite import NEWEST
from salttap_process import SalttapRun, indexer_yaml

pytestmark = [pytest.mark.usefixtures("salttap_only"),
              pytest.mark.parametrize("salt_lab", [NEWEST], indirect=True, ids=lambda v: f"salt-{v}")]

SILENT_WINDOW = 20
OTHER_WINDOW = 60
STALE_WINDOW = 20
GUARD = 180  # a hang guard on a busy 2-core machine, not a measure


class Hook:
    """Records every alert POSTed to it."""

    def __init__(self):
        self.alerts: list[dict] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    hook.alerts.append(json.loads(body))
                except ValueError:
                    hook.alerts.append({"unparsed": body.decode(errors="replace")})
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True, name="fleet-hook")
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def of(self, kind: str, minion: str | None = None) -> list[dict]:
        return [a for a in list(self.alerts) if a.get("alert") == kind and (minion is None or a.get("minion") == minion)]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def fleet_json(salttap_bin, config) -> dict:
    out = subprocess.run([str(salttap_bin), "fleet", "--config", str(config), "--format", "json"],
                         capture_output=True, text=True, timeout=30, check=True)
    return json.loads(out.stdout)


def liveness(salttap_bin, config, minion: str) -> str | None:
    for m in fleet_json(salttap_bin, config)["minions"]:
        if m["minion"] == minion:
            return m["liveness"]
    return None


def engine_doc(url: str, index: str, doc_id: str) -> dict | None:
    """The source of one document by `_id` (a realtime GET: no refresh needed), or None."""
    try:
        status, got = call(f"{url}/{index}/_doc/{urllib.parse.quote(doc_id, safe='')}", timeout=10)
    except OSError:
        return None
    return got["_source"] if status == 200 and got.get("found") else None


def return_doc(url: str, jid: str, minion: str) -> dict | None:
    """A return document by jid and minion, whatever its day's index."""
    try:
        call(f"{url}/salt-returns-*/_refresh", "POST", timeout=10)
        status, got = call(f"{url}/salt-returns-*/_search", "POST",
                           {"size": 1, "query": {"bool": {"filter": [{"term": {"jid": jid}},
                                                                    {"term": {"minion": minion}}]}}}, timeout=10)
    except OSError:
        return None
    hits = got["hits"]["hits"] if status == 200 else []
    return hits[0]["_source"] if hits else None


def apply_async(lab, *args: str) -> str:
    """`salt minion-a state.apply ARGS --async`: the jid."""
    out = lab.salt(["minion-a", "state.apply", *args, "--async"], timeout=30).stdout
    m = re.search(r"job ID: (\d+)", out)
    assert m, out
    return m.group(1)


def check_highstates(lab, run, salttap_bin, config, url: str) -> tuple[str, str]:
    """A dry run then an enforcing full highstate on minion-a: the return documents' fields and
    minion-a's entity. Returns minion-a's entity `_id` and the enforcing run's jid."""
    dry = apply_async(lab, "test=True")
    run.wait_until(lambda: return_doc(url, dry, "minion-a"), GUARD, "the dry run's return document")
    doc = return_doc(url, dry, "minion-a")
    assert (doc["highstate"], doc["test"], doc["status"]) == (True, True, "succeeded"), doc
    entity_id = f"{doc['master']}/minion-a"
    run.wait_until(lambda: ((engine_doc(url, "salt-minions", entity_id) or {}).get("last_highstate") or {})
                   .get("jid") == dry, GUARD, "minion-a's entity has the dry run")
    entity = engine_doc(url, "salt-minions", entity_id)
    assert entity["last_highstate"]["test"] is True and entity["last_highstate"]["result"] == "succeeded", entity
    assert (entity["last_successful_highstate"] or {}).get("jid") != dry, entity
    assert entity["minion"] == "minion-a" and entity["key_state"] == "accepted", entity

    enforce = apply_async(lab)
    run.wait_until(lambda: return_doc(url, enforce, "minion-a"), GUARD, "the enforcing run's return document")
    doc = return_doc(url, enforce, "minion-a")
    assert (doc["highstate"], doc["test"], doc["status"]) == (True, False, "succeeded"), doc
    assert doc["states"]["failed"] == 0 and doc["states"]["total"] >= 1, doc
    run.wait_until(lambda: ((engine_doc(url, "salt-minions", entity_id) or {}).get("last_successful_highstate")
                            or {}).get("jid") == enforce, GUARD, "minion-a's entity has the enforcing run")
    entity = engine_doc(url, "salt-minions", entity_id)
    assert entity["last_highstate"] == {"at": entity["last_highstate"]["at"], "jid": enforce,
                                        "result": "succeeded", "test": False}, entity
    run.wait_until(lambda: [m for m in fleet_json(salttap_bin, config)["minions"] if m["minion"] == "minion-a"][0]
                   ["last_successful_highstate"], GUARD, "salttap fleet has the enforcing run")
    mine = [m for m in fleet_json(salttap_bin, config)["minions"] if m["minion"] == "minion-a"][0]
    assert mine["last_successful_highstate"]["jid"] == enforce, mine
    return entity_id, enforce


def per_minion(run) -> dict[tuple[str, str], float]:
    """The per-minion gauges of the running salttap's /metrics: {(metric, minion): value}."""
    out = {}
    for m in re.finditer(r'^salttap_minion_(\w+)\{minion="([^"]+)"\} (\S+)$', run.metrics_text(), re.M):
        out[(m.group(1), m.group(2))] = float(m.group(3))
    return out


def fleet_highstate(salttap_bin, config, only: str) -> str:
    out = subprocess.run([str(salttap_bin), "fleet", "--config", str(config), "--highstate", only],
                         capture_output=True, text=True, timeout=30, check=True)
    return out.stdout


def stale_highstate(lab, run, salttap_bin, config, url: str, hook: Hook, ping_a, enforced_jid: str) -> dict:
    """minion-a's enforcing highstate aged past STALE_WINDOW: one highstate_stale; a real failing
    full highstate leaves it stale; the per-minion gauges of both minions. Returns the stale alert."""
    run.wait_until(lambda: ping_a() or hook.of("highstate_stale", "minion-a"), GUARD, "highstate_stale for minion-a")
    stale = hook.of("highstate_stale", "minion-a")[0]
    enforced = return_doc(url, enforced_jid, "minion-a")
    assert stale["episode"] == "highstate_stale" and stale["window_s"] == STALE_WINDOW, stale
    # since: the last successful enforcing highstate, the one check_highstates ran
    assert stale["last_successful_highstate"]["jid"] == enforced_jid, stale
    assert stale["since"] == stale["last_successful_highstate"]["at"], stale
    assert stale["resolved_at"] is None and stale["rule"] == "minion-a", stale
    assert hook.of("highstate_stale", "minion-b") == [], hook.alerts  # not watched
    entity = f"{enforced['master']}/minion-a"
    run.wait_until(lambda: (engine_doc(url, "salt-minions", entity) or {}).get("highstate_freshness") == "stale",
                   GUARD, "minion-a's entity says stale")
    assert engine_doc(url, "salt-minions", entity)["stale_since"] == stale["since"]

    # A failing full highstate: Salt finds no top file in that saltenv and says so as a failed run.
    failing = apply_async(lab, "saltenv=salttap-no-such-env")
    run.wait_until(lambda: return_doc(url, failing, "minion-a"), GUARD, "the failing run's return document")
    doc = return_doc(url, failing, "minion-a")
    assert (doc["highstate"], doc["test"], doc["status"]) == (True, False, "failed"), doc
    swept = run.metric("salttap_fleet_last_sweep_timestamp_seconds")
    run.wait_until(lambda: (run.metric("salttap_fleet_last_sweep_timestamp_seconds") or 0) >= swept + 4, GUARD,
                   "two sweeps after the failing run")
    assert hook.of("highstate_fresh") == [], hook.alerts
    assert len(hook.of("highstate_stale", "minion-a")) == 1, hook.alerts
    assert run.metric('salttap_fleet_highstate_minions{freshness="stale"}') == 1
    assert run.metric('salttap_fleet_highstate_minions{freshness="unwatched"}') == 1
    listed = fleet_highstate(salttap_bin, config, "stale")
    assert re.search(r"^minion-a\s+stale\s", listed, re.M) and "minion-b" not in listed, listed

    gauges = per_minion(run)
    assert gauges[("last_heard_timestamp_seconds", "minion-a")] > 0, gauges
    assert gauges[("last_heard_timestamp_seconds", "minion-b")] > 0, gauges  # heard before it stopped
    assert gauges[("last_highstate_success_timestamp_seconds", "minion-b")] == 0, gauges
    assert gauges[("last_highstate_success_timestamp_seconds", "minion-a")] > 0, gauges
    assert gauges[("last_highstate_failed_states", "minion-a")] >= 1, gauges
    assert gauges[("last_highstate_failed_states", "minion-b")] == 0, gauges
    assert run.metric('salttap_minion_metrics_minions{set="exported"}') == 2
    assert run.metric("salttap_minion_metrics_truncated") == 0
    return stale


def test_a_stopped_minion_is_alerted_once_and_recovered_once(lab, salttap_bin, opensearch, tmp_path, request):
    hook = Hook()

    def ping_a() -> None:
        """minion-a answers (its return keeps it heard); falsy, for use inside a wait's check."""
        lab.salt(["minion-a", "test.ping"], check=False, timeout=30)
    state = tmp_path / "state"
    config = tmp_path / "salttap.yaml"
    run = SalttapRun.beside(
        lab, salttap_bin, config, "salttap-run-fleet",
        config_text=("reconcile: {enabled: false}\n"
                     f"alerts: {{webhook: {{url: \"{hook.url}\", backoff_initial_ms: 200}}}}\n"
                     "fleet:\n"
                     f"  silence: [{{match: minion-b, after_seconds: {SILENT_WINDOW}}}, "
                     f"{{match: \"*\", after_seconds: {OTHER_WINDOW}}}]\n"
                     "  sweep_seconds: 2\n"
                     "  count_presence: false\n"
                     f"  highstate: [{{match: minion-a, stale_after_seconds: {STALE_WINDOW}}}]\n"
                     "  minion_metrics: {enabled: true}\n"
                     + indexer_yaml(opensearch.url, state / "spool")))
    request.node._watchers = run.taps
    try:
        run.start()
        lab.salt(["*", "test.ping"])
        run.wait_until(lambda: run.metric('salttap_fleet_minions{liveness="ok"}') == 2, GUARD,
                       "both minions ok (heard through their returns)")

        lab.stop_minion("minion-b")
        entity_a, enforced = check_highstates(lab, run, salttap_bin, config, opensearch.url)
        run.wait_until(lambda: ping_a() or hook.of("minion_silent", "minion-b"), GUARD, "minion_silent for minion-b")
        silent = hook.of("minion_silent", "minion-b")[0]
        assert silent["window_s"] == SILENT_WINDOW, silent
        assert silent["resolved_at"] is None, silent
        run.wait_until(lambda: liveness(salttap_bin, config, "minion-b") == "silent", GUARD,
                       "salttap fleet says minion-b is silent")
        entity_b = entity_a.rsplit("/", 1)[0] + "/minion-b"
        run.wait_until(lambda: (engine_doc(opensearch.url, "salt-minions", entity_b) or {}).get("silent"), GUARD,
                       "minion-b's entity document says silent")
        assert engine_doc(opensearch.url, "salt-minions", entity_b)["episode_since"] == silent["since"]
        assert liveness(salttap_bin, config, "minion-a") == "ok"

        # Two more windows of sweeps: the episode stays one alert.
        swept = run.metric("salttap_fleet_last_sweep_timestamp_seconds")
        run.wait_until(lambda: ping_a() or (run.metric("salttap_fleet_last_sweep_timestamp_seconds") or 0)
                       >= swept + 2 * SILENT_WINDOW, GUARD, "two more windows swept")
        assert len(hook.of("minion_silent", "minion-b")) == 1, hook.alerts
        assert hook.of("minion_silent", "minion-a") == [], hook.alerts

        stale = stale_highstate(lab, run, salttap_bin, config, opensearch.url, hook, ping_a, enforced)

        lab.start_minion("minion-b")
        lab.salt(["minion-b", "test.ping"])  # its return is a sign of life even if its start event is missed
        run.wait_until(lambda: hook.of("minion_recovered", "minion-b"), GUARD, "minion_recovered for minion-b")
        back = hook.of("minion_recovered", "minion-b")
        assert len(back) == 1 and back[0]["resolution"] == "heard", back
        assert back[0]["since"] == silent["since"], (back, silent)
        run.wait_until(lambda: liveness(salttap_bin, config, "minion-b") == "ok", GUARD,
                       "salttap fleet says minion-b is ok again")
        assert len(hook.of("minion_silent")) == 1, hook.alerts
        assert run.metric('salttap_fleet_episodes_total{kind="minion_silent",event="opened"}') == 1
        assert run.metric('salttap_fleet_episodes_total{kind="minion_silent",event="closed"}') == 1

        # A successful enforcing highstate closes minion-a's stale episode.
        apply_async(lab)
        run.wait_until(lambda: hook.of("highstate_fresh", "minion-a"), GUARD, "highstate_fresh for minion-a")
        fresh = hook.of("highstate_fresh", "minion-a")
        assert len(fresh) == 1 and fresh[0]["resolution"] == "highstate_ok", fresh
        assert fresh[0]["since"] == stale["since"], (fresh, stale)
        # Exactly one stale alert before it (with a 20 s window, it may turn stale again later).
        before = hook.alerts[:hook.alerts.index(fresh[0])]
        assert [a for a in before if a.get("alert") == "highstate_stale"] == [stale], hook.alerts
        # /metrics is published at most once a second: wait for the count rather than read it once.
        run.wait_until(lambda: run.metric('salttap_fleet_episodes_total{kind="highstate_stale",event="closed"}') == 1,
                       GUARD, "the closed stale episode counted on /metrics")
        assert run.sigterm() == 0
    finally:
        run.stop()
        hook.close()
