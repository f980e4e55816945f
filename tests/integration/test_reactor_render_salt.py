"""The remediation reactor's decisions, rendered by Salt's own reactor code, no master.

reactor_render.py runs salt.utils.reactor.Reactor.render_reaction (what a master's
reactor does with an event) in the newest Salt under test, for a sequence of events
and with the master options given; the `data` store the SLS keeps carries over from
one event to the next. The real master is in test_reactor_real_salt.py; this covers
every rule and limit of docs/remediation.md in seconds: disabled by default, which
jobs are skipped and why, a missing minion waiting for its start, once per minion,
max_per_jid, max_per_window, functions, max_risk never above medium.

Run:  .cache/venv/tools/bin/python -m pytest tests/integration/test_reactor_render_salt.py -v
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import saltlab
from salt_suite import NEWEST

SLS = saltlab.REPO_ROOT / "deploy" / "salt" / "reactor" / "salttap_rerun.sls"
RENDER = Path(__file__).resolve().parent / "reactor_render.py"
T0 = "2026-12-02T10:00:00.000000Z"  # when the alerts' jobs began


def render(tmp_path: Path, events: list[tuple[str, dict]], opts: dict | None = None) -> list[dict]:
    """Per event: {"runs": [(fun, tgt, arg, metadata)], "notes": {tag: data}}."""
    if not saltlab.venv_ok(NEWEST):
        pytest.fail(f"salt {NEWEST}: no working venv at {saltlab.venv_dir(NEWEST)}", pytrace=False)
    python = saltlab.venv_dir(NEWEST) / "bin" / "python"
    r = subprocess.run([str(python), str(RENDER), str(tmp_path / "master"), str(SLS),
                        json.dumps(events), json.dumps(opts or {})],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == len(events), r.stdout + r.stderr
    out = []
    for reactions in lines:
        runs, notes = [], {}
        for rid, body in reactions.items():
            if "local" in body:
                items = body["local"]
                kw = {k: v for item in items if isinstance(item, dict) for k, v in item.items()}
                fun = next(i for i in items if isinstance(i, str))
                assert kw["tgt_type"] == "list", body
                runs.append((fun, kw["tgt"], kw["arg"], kw["metadata"]))
            elif "runner" in body:
                args = {k: v for item in body["runner"][0]["args"] for k, v in item.items()}
                notes[args["tag"]] = args["data"]
            else:
                raise AssertionError(f"unexpected reaction {rid}: {body}")
        out.append({"runs": runs, "notes": notes})
    return out


def alert(jid: str, failed=(), missing=(), **kw) -> tuple[str, dict]:
    data = {"alert": "failed" if failed else "missing", "jid": jid, "kind": "job", "fun": "test.arg",
            "args": ["a", {"__kwarg__": True, "k": "v"}], "user": "root", "tgt": "*", "tgt_type": "glob",
            "status": "failed", "started_at": T0, "failed": list(failed), "missing": list(missing),
            "risk": {"level": "none", "reasons": []}}
    data.update(kw)
    return f"salttap/alert/{data['alert']}/{jid}", data


def start(minion: str, stamp: str) -> tuple[str, dict]:
    return f"salt/minion/{minion}/start", {"id": minion, "_stamp": stamp, "cmd": "_minion_event"}


def skipped(result: dict, jid: str) -> str:
    assert not result["runs"], result
    return result["notes"][f"salttap/rerun/skipped/{jid}"]["reason"]


def test_mapped_but_not_enabled_renders_nothing(tmp_path):
    events = [alert("1", failed=["m1"]), start("m1", "2026-12-02T11:00:00")]
    assert render(tmp_path, events) == [{"runs": [], "notes": {}}] * 2
    # only a true boolean enables it
    assert render(tmp_path, events, {"salttap_rerun": {"enabled": "yes"}}) == [{"runs": [], "notes": {}}] * 2


def test_what_is_re_run_where_and_the_limits(tmp_path):
    args = ["a", {"__kwarg__": True, "k": "v"}]
    opts = {"salttap_rerun": {"enabled": True, "max_per_jid": 2, "max_per_window": 4,
                              "functions": ["test.*", "state.apply"]}}
    out = render(tmp_path, [
        # 0: failed minions at once; a missing one waits for its start
        alert("1", failed=["m1"], missing=["m2"]),
        # 1: the same alert again: m1 was re-run, m2 waits already
        alert("1", failed=["m1"], missing=["m2"]),
        # 2: m2 starts: re-run there
        start("m2", "2026-12-02T11:00:00.000000"),
        # 3: a missing minion that started after its job began: at once
        start("m3", "2026-12-02T11:00:01.000000"),
        alert("2", missing=["m3"]),
        # 5: the third re-run of job 1: max_per_jid
        alert("1", failed=["m4"]),
        # 6: every reason to skip
        alert("3", failed=["m1"], rerun_of="1"),
        alert("4", failed=["m1"], tgt="m1", tgt_type="list", args=args),  # like the re-run of job 1 on m1
        alert("5", failed=["m1"], kind="runner"),
        alert("6", failed=["m1"], fun="test.arg,test.ping", args=[[], []]),
        alert("7", failed=["m1"], risk={"level": "high", "reasons": ["r"]}),
        alert("8", failed=["m1"], args_redacted=True, args=["a", {"__kwarg__": True, "password": "<redacted>"}]),
        alert("9", failed=["m1"], fun="cmd.run"),
        # 13: the fourth re-run in the window, then max_per_window
        alert("10", failed=["m1"], fun="state.apply", args=["web"]),
        alert("11", failed=["m1"]),
    ], opts)

    assert out[0]["runs"] == [("test.arg", ["m1"], args, {"salttap_rerun_of": "1"})]
    assert out[0]["notes"]["salttap/rerun/started/1"]["minions"] == ["m1"]
    assert out[0]["notes"]["salttap/rerun/pending/1"]["minions"] == ["m2"]
    assert skipped(out[1], "1").startswith("every listed minion was re-run already")
    assert out[2]["runs"] == [("test.arg", ["m2"], args, {"salttap_rerun_of": "1"})]
    assert out[3] == {"runs": [], "notes": {}}
    assert out[4]["runs"] == [("test.arg", ["m3"], args, {"salttap_rerun_of": "2"})]
    assert skipped(out[5], "1") == "max_per_jid: 2 re-runs of this job already"
    assert skipped(out[6], "3") == "a re-run of 1"
    assert skipped(out[7], "4") == "a re-run of 1 (same function, arguments and minions)"
    assert skipped(out[8], "5").startswith("not a job published by the master")
    assert skipped(out[9], "6") == "a multi-function job"
    assert skipped(out[10], "7") == "risk high is above max_risk medium"
    assert skipped(out[11], "8") == "its arguments were redacted or cut by salttap"
    assert skipped(out[12], "9") == "function cmd.run is not in functions"
    assert out[13]["runs"] == [("state.apply", ["m1"], ["web"], {"salttap_rerun_of": "10"})]
    assert skipped(out[14], "11") == "max_per_window: 4 re-runs in the last 3600 s"

    # the state is the master's: a new run of the reactor (a restarted master) remembers
    again = render(tmp_path, [alert("1", failed=["m1"]), alert("12", failed=["m5"])], opts)
    assert skipped(again[0], "1").startswith("every listed minion was re-run already")
    assert skipped(again[1], "12").startswith("max_per_window: 4")


def test_max_risk_is_never_above_medium(tmp_path):
    out = render(tmp_path, [alert("1", failed=["m1"], risk={"level": "high", "reasons": []}),
                            alert("2", failed=["m1"], risk={"level": "medium", "reasons": []}),
                            alert("3", failed=["m1"], risk={"level": "low", "reasons": []})],
                 {"salttap_rerun": {"enabled": True, "max_risk": "critical"}})
    assert skipped(out[0], "1") == "risk high is above max_risk medium"
    assert out[1]["runs"] and out[2]["runs"]
    out = render(tmp_path / "low", [alert("4", failed=["m1"], risk={"level": "medium", "reasons": []})],
                 {"salttap_rerun": {"enabled": True, "max_risk": "low"}})
    assert skipped(out[0], "4") == "risk medium is above max_risk low"
