#!/usr/bin/env python3
"""The main job, locally: a real salt-master with two minions on loopback, a
real OpenSearch node, and `salttap run` between them (tap the bus, correlate,
spool, bulk-index jobs, returns, states, events and alerts), while
`salttap watch --jobs` prints one line per job. A few real jobs run so there
is something to see: a failing state, a stopped minion, a risky command. At
the end it prints what the engine holds, then the same through `salttap jobs`,
`salttap jobs show` (the failed state run) and `salttap minions`.

Point salttap at your own master and cluster instead with a config file
(deploy/salttap.yaml, docs/configuration.md):

    build/dev/salttap run --config /etc/salttap/salttap.yaml

Run through scripts/demo (which installs and builds first). Stops everything it
started (by PID) on exit; Ctrl-C ends it.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "harness"))  # the shared test helpers
import saltlab  # noqa: E402
from engine import Engine  # noqa: E402

MISSING_AFTER = 15  # seconds: short deadlines so the demo shows a missing minion soon


def say(text: str) -> None:
    print(f"\n== {text}", file=sys.stderr, flush=True)


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


def post(url: str) -> None:
    urllib.request.urlopen(urllib.request.Request(url, method="POST"), timeout=10).read()


def search(engine: str, index: str, query: str, size: int = 50) -> list[dict]:
    q = urllib.parse.quote(query)
    body = get(f"{engine}/{index}/_search?q={q}&size={size}&sort=@timestamp:asc")
    return [h["_source"] for h in body["hits"]["hits"]]


def report(engine: str, jids: dict[str, str]) -> None:
    post(f"{engine}/salt-*/_refresh")
    say("what the engine holds (OpenSearch " + engine + ")")
    for line in subprocess.run(["curl", "-s", f"{engine}/_cat/indices/salt-*?v&s=index&h=index,docs.count"],
                               capture_output=True, text=True).stdout.splitlines():
        print("   " + line)
    print("\n   jobs (salt-jobs-*):")
    for what, jid in jids.items():
        docs = search(engine, "salt-jobs-*", f"jid:{jid}", 1)
        if not docs:
            print(f"   {jid}  {what:45s}  (not indexed yet)")
            continue
        d = docs[0]
        c = d.get("counts", {})
        print(f"   {jid}  {what:45s}  status={d['status']:9s} returned={c.get('returned')} "
              f"failed={c.get('failed')} missing={c.get('missing')} risk={d['risk']['level']}")
    print("\n   alerts (salt-alerts-*):")
    for a in search(engine, "salt-alerts-*", "*"):
        print(f"   {a['jid']}  {a['alert']:8s} {a['fun']:12s} failed={a['failed']} missing={a['missing']} "
              f"risk={a['risk']['level']}")
    missing = search(engine, "salt-returns-*", "status:missing")
    print(f"\n   returns with status missing: {[(r['jid'], r['minion']) for r in missing]}")
    failed_states = search(engine, "salt-states-*", "outcome:failed")
    print(f"   failed states: {[(s['minion'], s['state_id'], s['function']) for s in failed_states]}")


def history(salttap: Path, config: Path, jids: dict[str, str]) -> None:
    """The same from the terminal: salttap's own view of the indices."""
    failed = jids.get("state.apply fail", "?")
    for argv in (["jobs"], ["jobs", "show", failed], ["minions"]):
        say("salttap " + " ".join(argv) + " --config " + str(config.relative_to(REPO)))
        r = subprocess.run([str(salttap), *argv, "--config", str(config)], text=True, capture_output=True)
        print(r.stdout, end="", flush=True)
        if r.returncode != 0:
            print(f"   (exit {r.returncode}) {r.stderr.strip()}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--salt-version", default=os.environ.get("SALTTAP_DEMO_SALT", "3008.5"))
    ap.add_argument("--seconds", type=float, default=None,
                    help="stop this long after the jobs ran (default: run until Ctrl-C)")
    args = ap.parse_args()

    salttap = REPO / "build" / "dev" / "salttap"
    work = REPO / "build" / "demo"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    saltlab.ensure_salt(args.salt_version)
    say("starting a real OpenSearch 2.19 node on 127.0.0.1")
    with Engine("opensearch", work / "opensearch") as engine:
        print(f"   {engine.url}", flush=True)
        say(f"starting a real salt-master {args.salt_version} with minion-a and minion-b on 127.0.0.1")
        with saltlab.SaltLab(args.salt_version) as lab:
            master_config = lab.master_conf_dir / "master"
            config = work / "salttap.yaml"
            config.write_text(
                "master_id: demo-master\n"
                f"correlator: {{missing_after_seconds: {MISSING_AFTER}}}\n"
                "indexer:\n"
                f"  hosts: [\"{engine.url}\"]\n"
                "  states_index: true\n"
                f"  spool: {{dir: \"{work / 'spool'}\"}}\n"
                "  bulk: {max_wait_ms: 500}\n")
            run_argv = [str(salttap), "run", "--config", str(config), "--master-config", str(master_config),
                        "--metrics-listen", "127.0.0.1:0"]
            watch_argv = [str(salttap), "watch", "--jobs", "--master-config", str(master_config),
                          "--config", str(config)]
            say(" ".join(run_argv[1:]) + "   (logs: build/demo/run.log)")
            say(" ".join(watch_argv[1:]))
            run_log = open(work / "run.log", "wb")
            run = subprocess.Popen(run_argv, start_new_session=True, stdout=run_log, stderr=subprocess.STDOUT)
            watch = subprocess.Popen(watch_argv, start_new_session=True)
            jids: dict[str, str] = {}
            try:
                time.sleep(1.5)
                jobs = [
                    ["*", "test.ping"],
                    ["*", "cmd.run", "echo hello from $(hostname)"],
                    ["minion-a", "state.apply", "fail"],                 # failing states, named
                    ["*", "cmd.run", "rm -rf /tmp/salttap-demo-nothing"],  # a risky command (audited)
                ]
                for job in jobs:
                    say("salt " + " ".join(job))
                    out = lab.salt(["--show-jid", *job], check=False)
                    jid = next((w for w in (out.stdout or "").split() if w.isdigit() and len(w) == 20), "?")
                    jids[" ".join(job[1:])[:45]] = jid
                say("stopping minion-b, then salt '*' test.ping: minion-b will be missing "
                    f"after {MISSING_AFTER} s")
                lab.stop_minion("minion-b")
                out = lab.salt(["--async", "*", "test.ping"], check=False)
                jids["test.ping (minion-b stopped)"] = next(
                    (w for w in (out.stdout or "").split() if w.isdigit() and len(w) == 20), "?")
                time.sleep(MISSING_AFTER + 3)
                report(engine.url, jids)
                history(salttap, config, jids)
                ui = re.search(r"job browser is at (\S+)", (work / "run.log").read_text(errors="replace"))
                say("the job browser (salttap run serves it beside /metrics): "
                    + (ui.group(1) if ui else "not served; see build/demo/run.log"))
                if ui:
                    print(f"   {ui.group(1)}?status=failed   the failed jobs", flush=True)
                    print(f"   {ui.group(1)}alerts            the alerts", flush=True)
                say("salttap keeps running (Ctrl-C to stop)")
                deadline = None if args.seconds is None else time.monotonic() + args.seconds
                while deadline is None or time.monotonic() < deadline:
                    time.sleep(0.5)
                    if run.poll() is not None:
                        print(saltlab.tail(work / "run.log"), file=sys.stderr)
                        return run.returncode
            except KeyboardInterrupt:
                pass
            finally:
                saltlab.stop_process_group(watch)
                saltlab.stop_process_group(run)
                run_log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
