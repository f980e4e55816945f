"""`salttap run` as the tests drive it: one config, started, signalled and started again.

SalttapRun writes the config it is given (or takes the file as it is), and each start() runs
`salttap run --config C <bus> --metrics-listen 127.0.0.1:<free port> --drain-seconds N` in a
process group of its own (saltlab.EventWatcher: its stderr kept in memory and logged under
log_dir, stopped by PID), then waits until /healthz answers 200 (on the bus, index setup
done) unless told not to. The bus is a lab's master config (SalttapRun.beside) or a socket
directory. Every wait is on an observable outcome, with a generous guard against a hang.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import uuid
from pathlib import Path

import saltlab
from http_calls import call, free_port, search, wait_until

START_TIMEOUT = 60  # until /healthz: a hang guard on a busy 2-core machine, not a measure
STOP_TIMEOUT = 60   # until the process exits after SIGTERM: the same


def indexer_yaml(url: str, spool: Path, *, states_index: bool = False, index_prefix: str | None = None,
                 max_docs: int = 200) -> str:
    """The indexer: block of a test's config: the engine at url, the spool, quick batches and retries
    (the tests wait on documents, not on batching or backoff)."""
    return ("indexer:\n"
            f"  hosts: [\"{url}\"]\n"
            + (f"  index_prefix: {index_prefix}\n" if index_prefix else "")
            + ("  states_index: true\n" if states_index else "")
            + f"  spool: {{dir: {spool}}}\n"
            f"  bulk: {{max_docs: {max_docs}, max_wait_ms: 200, in_flight: 2, backoff_initial_ms: 200, "
            "backoff_max_ms: 2000}\n")


def metric(text: str, sample: str) -> float | None:
    """The value of one sample (`name` or `name{labels}`) of a /metrics text; None when absent."""
    m = re.search(rf"^{re.escape(sample)} (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def _no_events(line: str) -> dict:
    raise ValueError("salttap run logs to stderr; its stdout carries no events")


class SalttapRun:
    def __init__(self, salttap: Path, config: Path, name: str, log_dir: Path, bus: list[str],
                 config_text: str | None = None, drain_seconds: float = 2, env: dict | None = None):
        """bus: ["--master-config", FILE] or ["--sock-dir", DIR]. env: added to this process's."""
        self.bin, self.config, self.name, self.log_dir, self.bus = salttap, config, name, log_dir, bus
        self.drain_seconds = drain_seconds
        self.env = dict(os.environ, **env) if env else None
        if config_text is not None:
            config.parent.mkdir(parents=True, exist_ok=True)
            config.write_text(config_text)
        self.taps: list[saltlab.EventWatcher] = []  # one a start, the running one last
        self.metrics = ""                            # http://127.0.0.1:<port> of the last start
        self.last_metrics = ""                       # the last /metrics text read, for failure reports

    @classmethod
    def beside(cls, lab: saltlab.SaltLab, salttap: Path, config: Path, name: str, **kw) -> "SalttapRun":
        """Tapping the lab's master (its master config); logs in the lab's log directory."""
        return cls(salttap, config, name, lab.log_dir, ["--master-config", str(lab.master_conf_dir / "master")],
                   **kw)

    @property
    def tap(self) -> saltlab.EventWatcher:
        return self.taps[-1]

    def start(self, wait: bool = True, timeout: float = START_TIMEOUT) -> saltlab.EventWatcher:
        port = free_port()
        self.metrics = f"http://127.0.0.1:{port}"
        argv = [str(self.bin), "run", "--config", str(self.config), *self.bus,
                "--metrics-listen", f"127.0.0.1:{port}", "--drain-seconds", str(self.drain_seconds)]
        tap = saltlab.EventWatcher(argv, name=f"{self.name}-{len(self.taps) + 1}", parse=_no_events,
                                   log_dir=self.log_dir, env=self.env)
        self.taps.append(tap)
        if wait:
            self.wait_until(self.healthy, timeout, "salttap /healthz (tap connected, index setup done)")
        return tap

    # ---- observing ------------------------------------------------------

    def healthy(self) -> bool:
        try:
            status, _ = call(f"{self.metrics}/healthz", timeout=2)
        except OSError:
            return False
        return status == 200

    def metrics_text(self) -> str:
        """The /metrics text now ("" while it does not answer)."""
        try:
            status, text = call(f"{self.metrics}/metrics", timeout=10)
        except OSError:
            return ""
        if status == 200:
            self.last_metrics = text
            return text
        return ""

    def metric(self, sample: str) -> float | None:
        return metric(self.metrics_text(), sample)

    def wait_until(self, check, timeout: float, what: str):
        """Polls check() until it is truthy (its value returned); fails at once if salttap exits."""
        def checked():
            got = check()
            assert got or self.tap.proc.poll() is None, \
                f"{self.tap.name} exited (rc={self.tap.proc.returncode}) before {what}\n{self.diagnostics()}"
            return got
        return wait_until(checked, timeout, what, self.diagnostics, interval=0.2)

    def wait_metric(self, sample: str, at_least: float = 1, timeout: float = 120) -> str:
        """Until the sample is at least `at_least`; the whole /metrics text then."""
        return self.wait_until(lambda: (t := self.metrics_text()) and (metric(t, sample) or 0) >= at_least and t,
                               timeout, f"{sample} >= {at_least} on /metrics")

    def stderr(self) -> str:
        """Every start's stderr (salttap's log), in order."""
        return "\n".join(line for t in self.taps for line in t.stderr_lines)

    def output(self) -> str:
        """Everything every start wrote: its stdout (salttap run prints nothing there) and stderr."""
        return "\n".join(line for t in self.taps for line in [*t.noise, *t.stderr_lines])

    def diagnostics(self) -> str:
        return "\n".join(t.diagnostics() for t in self.taps[-2:]) + f"\n  last /metrics:\n{self.last_metrics[-3000:]}"

    # ---- signals --------------------------------------------------------

    def sighup(self) -> int:
        """Sends SIGHUP; the index of the next stderr line (for wait_stderr's `since`)."""
        since = len(self.tap.stderr_lines)
        self.tap.proc.send_signal(signal.SIGHUP)
        return since

    def sigterm(self, timeout: float = STOP_TIMEOUT) -> int:
        """SIGTERM; salttap's exit code. Fails if it has not exited within `timeout`."""
        proc = self.tap.proc
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            saltlab.stop_process_group(proc, term_timeout=1)
            raise AssertionError(f"salttap run did not exit within {timeout}s of SIGTERM\n{self.diagnostics()}")

    def sigkill(self) -> None:
        """SIGKILL, as a crash would: nothing written on the way out."""
        proc = self.tap.proc
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        self.tap.stop()

    def stop(self) -> None:
        """Every start stopped (by PID, SIGTERM then SIGKILL); for a fixture's or a finally's end."""
        for t in self.taps:
            t.stop()


def wait_following(lab: saltlab.SaltLab, url: str, events_index: str = "salt-events-*", timeout: float = 60) -> None:
    """Until salttap demonstrably indexes the lab's bus: an event fired now is searchable in
    `events_index` (fired again every few seconds while it is not)."""
    tag = f"salttap-test/follow/{uuid.uuid4().hex}"  # no lab maps a reactor to it

    def seen():
        lab.fire_event(tag, {"sync": True})
        try:
            return wait_until(lambda: search(url, events_index, {"term": {"tag": tag}}), 5, f"the event {tag}")
        except AssertionError:
            return None
    wait_until(seen, timeout, f"the event {tag} in {events_index}")
