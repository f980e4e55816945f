"""salttap against real Salt masters (one lab per version, see conftest.py).

Run:  .cache/venv/tools/bin/python -m pytest tests/integration -v
"""

from __future__ import annotations

import json
import re
import subprocess
import uuid

import pytest

import saltlab
from salt_suite import SUMMARY, WATCHER_MODE

MINIONS = sorted(saltlab.DEFAULT_MINIONS)
EVENT_TIMEOUT = 60  # generous: events may take a few seconds on a busy 2-core box

# Framing of master_event_pub.ipc per version (docs/salt-event-bus.md §1, §9).
EXPECTED_FRAMING = {
    "3006.25": "plain",   # era C
    "3006.30": "len32",   # era D (3006.26+)
    "3007.17": "plain",   # era E (after 3007.14: docs/salt-event-bus.md §10); observed plain
    "3008.5": "plain",    # era F: PUB unprefixed (only the pull side is prefixed)
}


def expected_framing(version: str) -> str:
    if version in EXPECTED_FRAMING:
        return EXPECTED_FRAMING[version]
    major, _, minor = version.partition(".")
    return "len32" if major == "3006" and int(minor or 0) >= 26 else "plain"


def needs_salttap(what: str):
    if WATCHER_MODE != "salttap":
        pytest.skip(f"SALTTAP_WATCHER={WATCHER_MODE}: {what} needs the salttap binary")


def run_job(lab: saltlab.SaltLab, args: list[str], timeout: int = 60) -> str:
    """Run `salt <args>` synchronously (CLI waits for the returns) and return the jid."""
    r = lab.salt(["--show-jid", "--out=quiet", "-t", "30", *args], check=False,
                 timeout=timeout)
    m = re.search(r"^jid: (\d+)", r.stdout, re.M)
    assert m, f"no jid from salt {args}: rc={r.returncode} out={r.stdout!r} err={r.stderr!r}"
    return m.group(1)


def wait_job(tap: saltlab.EventWatcher, jid: str, minions=MINIONS, since: int = 0):
    """The job's `new` event and {minion: ret event}."""
    new = tap.wait_tag(f"salt/job/{jid}/new", timeout=EVENT_TIMEOUT, since=since)
    rets = {m: tap.wait_tag(f"salt/job/{jid}/ret/{m}", timeout=EVENT_TIMEOUT, since=since)
            for m in minions}
    return new, rets


def test_pub_framing_probe_matches_spec(lab):
    """Harness check, independent of salttap: first byte on master_event_pub.ipc."""
    seen = lab.probe_pub_framing()
    SUMMARY[lab.version]["pub_framing_probe"] = seen
    assert seen == expected_framing(lab.version), f"salt {lab.version}: pub framing {seen}"


def test_test_ping(lab, start_watcher):
    tap = start_watcher()
    since = len(tap.events)
    jid = run_job(lab, ["*", "test.ping"])
    new, rets = wait_job(tap, jid, since=since)
    assert sorted(new["data"]["minions"]) == MINIONS
    assert new["data"]["fun"] == "test.ping"
    assert new["data"]["jid"] == jid
    for m, ev in rets.items():
        d = ev["data"]
        assert d["id"] == m and d["jid"] == jid and d["fun"] == "test.ping"
        assert d["return"] is True, d
        assert d.get("retcode", 0) == 0 and d.get("success") is True, d


def test_nonzero_retcode(lab, start_watcher):
    tap = start_watcher()
    since = len(tap.events)
    jid = run_job(lab, ["*", "cmd.run", "echo to-stdout; echo to-stderr >&2; exit 3"])
    _, rets = wait_job(tap, jid, since=since)
    for m, ev in rets.items():
        d = ev["data"]
        assert d["retcode"] == 3, d
        assert d["success"] is False, d
        assert "to-stdout" in d["return"], d


def test_state_apply_good_and_failing(lab, start_watcher):
    tap = start_watcher()
    since = len(tap.events)
    jid_good = run_job(lab, ["*", "state.apply", "good"])
    jid_fail = run_job(lab, ["*", "state.apply", "fail"])
    _, good = wait_job(tap, jid_good, since=since)
    _, fail = wait_job(tap, jid_fail, since=since)
    for m in MINIONS:
        g, f = good[m]["data"], fail[m]["data"]
        assert g["retcode"] == 0, g
        assert g["return"] and all(c["result"] is True for c in g["return"].values()), g
        assert f["retcode"] == 2, f
        assert any(c["result"] is False for c in f["return"].values()), f


def test_large_return(lab, start_watcher):
    """~1.2 MB return in one event (max_event_size raised to 4 MiB in the lab)."""
    size = 1_200_000
    tap = start_watcher()
    since = len(tap.events)
    jid = run_job(lab, ["*", "cmd.run", f'head -c {size} /dev/zero | tr "\\0" x'], timeout=120)
    _, rets = wait_job(tap, jid, since=since)
    for m, ev in rets.items():
        ret = ev["data"]["return"]
        assert isinstance(ret, str), f"{m}: return is {type(ret).__name__}: {str(ret)[:200]}"
        assert len(ret) == size, f"{m}: return length {len(ret)} != {size}"
        assert ret == "x" * size, f"{m}: wrong content"


def test_tap_reports_framing(lab, start_watcher):
    needs_salttap("the framing= stderr line")
    tap = start_watcher()  # synced: it has read at least one event
    m = tap.wait_stderr(r"framing=(plain|len32)\b", timeout=EVENT_TIMEOUT)
    SUMMARY[lab.version]["tap_framing"] = m.group(1)
    assert m.group(1) == expected_framing(lab.version), \
        f"salt {lab.version}: tap says framing={m.group(1)}"


def test_master_restart_reconnect(lab, start_watcher):
    tap = start_watcher()
    err_since = len(tap.stderr_lines)
    lab.restart_master()  # returns once both minions answer test.ping again
    if WATCHER_MODE == "salttap":
        tap.wait_stderr(r"(?i)reconnect", timeout=EVENT_TIMEOUT, since=err_since)
    assert tap.proc.poll() is None, "the tap exited on master restart\n" + tap.diagnostics()
    tap.sync(lab, timeout=EVENT_TIMEOUT)  # it is reading the new master's bus
    since = len(tap.events)
    jid = run_job(lab, ["*", "test.ping"])
    new, rets = wait_job(tap, jid, since=since)
    assert sorted(new["data"]["minions"]) == MINIONS
    assert all(ev["data"]["return"] is True for ev in rets.values())


def test_fire(lab, start_watcher, request):
    tap = start_watcher()
    salt_view = start_watcher("salt")  # Salt's own subscriber must decode it too
    tag = f"salttap/test/{uuid.uuid4()}"
    if WATCHER_MODE == "salttap":
        binp = request.getfixturevalue("salttap_bin")
        r = subprocess.run([str(binp), "fire", "--sock-dir", str(lab.sock_dir),
                            "--tag", tag, "--data", json.dumps({"k": "v"})],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, f"salttap fire exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    else:
        lab.fire_event(tag, {"k": "v"})
    ev = tap.wait_tag(tag, timeout=EVENT_TIMEOUT)
    assert ev["data"]["k"] == "v", ev
    ev2 = salt_view.wait_tag(tag, timeout=EVENT_TIMEOUT)
    assert ev2["data"]["k"] == "v", ev2


def test_minion_down_missing_return(lab, start_watcher):
    """stop_minion(): minion-b is targeted (`new`) but never returns."""
    tap = start_watcher()
    lab.stop_minion("minion-b")
    since = len(tap.events)
    r = lab.salt(["--show-jid", "--out=quiet", "-t", "3", "*", "test.ping"], check=False)
    jid = re.search(r"^jid: (\d+)", r.stdout, re.M).group(1)
    new = tap.wait_tag(f"salt/job/{jid}/new", timeout=EVENT_TIMEOUT, since=since)
    assert sorted(new["data"]["minions"]) == MINIONS
    tap.wait_tag(f"salt/job/{jid}/ret/minion-a", timeout=EVENT_TIMEOUT, since=since)
    assert f"salt/job/{jid}/ret/minion-b" not in tap.tags()
    lab.start_minion("minion-b")  # waits until it answers test.ping
