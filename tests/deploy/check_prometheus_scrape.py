#!/usr/bin/env python3
"""The alerting rules end to end: a real Prometheus scrapes a real `salttap run`.

`salttap run` taps a master's pub socket that plays real captures once the test lets it
(capture_bus.CaptureBus, as the engine suite's runs without Salt do) and ships to an
engine port where nothing listens. Prometheus (Debian's binary, on 127.0.0.1, a temporary config and data
directory, stopped by its PID) scrapes it every second and evaluates a copy of
deploy/prometheus/salttap-rules.yml every second, each `for:` of minutes cut to
seconds. Through Prometheus's HTTP API:

  - the target is up, and every rule of the file is loaded, evaluated and healthy;
  - SalttapIndexSetupNotDone fires (nothing answers on the engine's port), while
    SalttapEngineUnreachable (no document waits yet), SalttapTapDisconnected,
    SalttapFleetBlind and SalttapDown stay inactive;
  - the captures played: documents wait in the spool, and SalttapEngineUnreachable fires;
  - the per-minion gauges (fleet.minion_metrics on) are scraped for the captures' minions,
    heard by their events' own time, long ago: SaltMinionSilent fires for each, while
    SaltHighstateStale (no highstate in the captures: 0, left out) stays inactive;
  - the master's socket closed: SalttapTapDisconnected and SalttapFleetBlind fire;
  - salttap stopped: SalttapDown fires.

Every wait polls an outcome, with a generous bound against a hang. Exit 1 on any
problem, a missing prometheus binary among them (scripts/install-deps installs it).
  check_prometheus_scrape.py SOURCE_DIR SALTTAP_BINARY
"""
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "harness"))
from capture_bus import CaptureBus  # noqa: E402
from http_calls import free_ports, wait_until  # noqa: E402
from salttap_process import SalttapRun, indexer_yaml, stop_child  # noqa: E402

RULES = "deploy/prometheus/salttap-rules.yml"
CAPTURES = [f"tests/captures/salt-3006.25/{name}.raw" for name in ("test_ping", "cmd_run_false")]
BOUND = 30  # seconds: a guard against a hang on a busy 2-core machine, never a measure


def rules_for_test(text):
    """The rules with each `for:` of minutes cut to 2 s (evaluated every second)."""
    return re.sub(r"^(\s+for:) \d+m$", r"\1 2s", text, flags=re.M)


class Prometheus:
    def __init__(self, binary, tmp, rules, target):
        self.port = free_ports(1)[0]
        self.url = f"http://127.0.0.1:{self.port}"
        config = tmp / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\n"
            f"rule_files: [{json.dumps(str(rules))}]\n"
            "scrape_configs:\n"
            "  - job_name: salttap\n"
            f"    static_configs: [{{targets: [\"{target}\"]}}]\n")
        self.log = open(tmp / "prometheus.log", "wb")
        self.proc = subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.log_path = tmp / "prometheus.log"

    def api(self, path):
        """The `data` of a /api/v1 answer; None while Prometheus does not answer."""
        assert self.proc.poll() is None, f"prometheus exited ({self.proc.returncode})\n{self.diagnostics()}"
        try:
            with urllib.request.urlopen(f"{self.url}/api/v1/{path}", timeout=5) as r:
                body = json.load(r)
        except OSError:
            return None
        return body["data"] if body.get("status") == "success" else None

    def rules(self):
        """{alert name: the rule as /api/v1/rules shows it}, and the group names."""
        data = self.api("rules?type=alert")
        if not data:
            return {}, []
        rules = {r["name"]: r for g in data["groups"] for r in g["rules"]}
        return rules, [g["name"] for g in data["groups"]]

    def state(self, alert):
        return self.rules()[0].get(alert, {}).get("state")

    def value(self, query):
        """The one sample of an instant query, as Prometheus stored the scrape; None if none."""
        data = self.api(f"query?query={urllib.parse.quote(query)}")
        return float(data["result"][0]["value"][1]) if data and len(data["result"]) == 1 else None

    def diagnostics(self):
        self.log.flush()
        return "prometheus log:\n" + self.log_path.read_text(errors="replace")[-3000:]

    def stop(self):
        stop_child(self.proc)
        self.log.close()


def main():
    source, salttap = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        print("prometheus not found: install Debian's prometheus package (scripts/install-deps)")
        return 1
    rules_src = source / RULES
    expected = {m for m in re.findall(r"^\s+- alert: (\w+)$", rules_src.read_text(), re.M)}
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="salttap-prom-") as tmpdir:
        tmp = pathlib.Path(tmpdir)
        rules = tmp / "salttap-rules.yml"
        rules.write_text(rules_for_test(rules_src.read_text()))
        gate = threading.Event()  # the captures wait for it
        bus = CaptureBus([source / c for c in CAPTURES], gate)
        engine_port = free_ports(1)[0]  # nothing listens there
        run = SalttapRun(salttap, tmp / "salttap.yaml", "salttap", tmp, ["--sock-dir", str(bus.sock_dir)],
                         config_text=indexer_yaml(f"http://127.0.0.1:{engine_port}", tmp / "spool")
                         + "fleet: {sweep_seconds: 1, minion_metrics: {enabled: true}}\n")
        prom = None
        try:
            run.start(wait=False)
            run.wait_until(lambda: run.metric("salttap_tap_connected") == 1, BOUND, "salttap on the bus")
            target = run.metrics.removeprefix("http://")
            prom = Prometheus(prometheus, tmp, rules, target)

            def wait(check, what):
                return wait_until(check, BOUND, what, lambda: f"{prom.diagnostics()}\n{run.diagnostics()}",
                                  interval=0.25)

            def target_up():
                data = prom.api("targets")
                targets = data["activeTargets"] if data else []
                return [t for t in targets if t["labels"].get("job") == "salttap" and t["health"] == "up"]
            up = wait(target_up, f"the salttap target ({target}) up in /api/v1/targets")
            assert up[0]["scrapeUrl"] == f"http://{target}/metrics", up

            def all_evaluated():
                rules, groups = prom.rules()
                return (set(rules) == expected and all(r["health"] == "ok" and not r["lastEvaluation"]
                                                       .startswith("0001") for r in rules.values())
                        and (rules, groups))
            rules_now, groups = wait(all_evaluated, f"the {len(expected)} rules loaded and evaluated, all healthy")
            assert sorted(groups) == ["salt-minions", "salttap", "salttap-fleet"], groups
            print(f"{len(rules_now)} rules loaded and healthy in groups {groups}")

            def firing(*alerts):
                def check():
                    rules = prom.rules()[0]
                    return all(rules.get(a, {}).get("state") == "firing" for a in alerts) and rules
                return wait(check, " and ".join(alerts) + " firing")

            rules_now = firing("SalttapIndexSetupNotDone")
            for quiet in ("SalttapEngineUnreachable", "SalttapTapDisconnected", "SalttapFleetBlind", "SalttapDown"):
                assert rules_now[quiet]["state"] == "inactive", (quiet, rules_now[quiet])
            assert prom.value("salttap_indexer_engine_reachable") == 0
            assert prom.value("salttap_spool_pending_documents") == 0
            print("SalttapIndexSetupNotDone firing; nothing waits, so SalttapEngineUnreachable inactive, "
                  "as are the tap's and up's rules")

            gate.set()  # the captures played: documents for an engine that does not answer
            wait(lambda: (prom.value("salttap_spool_pending_documents") or 0) > 0, "documents waiting in the spool")
            rules_now = firing("SalttapEngineUnreachable")
            alert = rules_now["SalttapEngineUnreachable"]["alerts"][0]
            assert alert["labels"]["severity"] == "critical", alert
            assert alert["labels"]["instance"] == target, alert
            assert "cannot reach the search engine" in alert["annotations"]["summary"], alert
            print("captures played: documents wait, SalttapEngineUnreachable firing")

            def minion_series():
                data = prom.api("query?query=salttap_minion_last_heard_timestamp_seconds")
                return data and {r["metric"]["minion"]: float(r["value"][1]) for r in data["result"]}
            heard = wait(minion_series, "salttap_minion_last_heard_timestamp_seconds scraped")
            assert all(0 < t < time.time() - 3600 for t in heard.values()), heard  # the captures' own time
            wait(lambda: prom.value('salttap_minion_metrics_minions{set="exported"}') == len(heard),
                 f"salttap_minion_metrics_minions{{set=\"exported\"}} == {len(heard)}")
            assert prom.value('salttap_minion_metrics_minions{set="dropped"}') == 0
            assert prom.value("salttap_minion_metrics_truncated") == 0
            for name in heard:
                assert prom.value(
                    f'salttap_minion_last_highstate_success_timestamp_seconds{{minion="{name}"}}') == 0, name
                assert prom.value(f'salttap_minion_last_highstate_failed_states{{minion="{name}"}}') == 0, name
            rules_now = firing("SaltMinionSilent")
            assert {a["labels"]["minion"] for a in rules_now["SaltMinionSilent"]["alerts"]} == set(heard), rules_now
            assert rules_now["SaltHighstateStale"]["state"] == "inactive", rules_now["SaltHighstateStale"]
            print(f"per-minion gauges scraped for {sorted(heard)}; SaltMinionSilent firing for each")

            bus.close()  # the master's socket gone
            firing("SalttapTapDisconnected", "SalttapFleetBlind")
            print("bus closed: SalttapTapDisconnected and SalttapFleetBlind firing")

            assert prom.state("SalttapDown") == "inactive"
            run.sigterm()
            rules_now = firing("SalttapDown")
            alert = rules_now["SalttapDown"]["alerts"][0]
            assert alert["labels"] == {"alertname": "SalttapDown", "instance": target, "job": "salttap",
                                       "severity": "critical"}, alert
            print("salttap stopped: SalttapDown firing")
        finally:
            if prom is not None:
                prom.stop()
            run.stop()
            gate.set()  # the bus's thread may wait for it
            bus.close()
    print(f"done in {time.monotonic() - began:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
