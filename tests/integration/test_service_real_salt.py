"""`salttap run` as systemd runs it (Type=notify, WatchdogSec=, the journal),
beside a real salt-master and two minions: the test binds the notify socket
and names it in NOTIFY_SOCKET, sets WATCHDOG_USEC, and hands salttap a stderr
whose device and inode it names in JOURNAL_STREAM, as systemd does.

  - READY=1 once salttap is on the bus, although the engine it is configured
    for does not answer (the engine only fills the spool);
  - WATCHDOG=1 keeps coming while the bus is idle;
  - STATUS= shows the bus connected, the engine state, and an event rate
    above zero once jobs run;
  - SIGHUP (the unit's ExecReload=): RELOADING=1 with MONOTONIC_USEC, the
    config read again, then READY=1 again;
  - SIGTERM: STOPPING=1, then exit 0;
  - every log line carries the syslog priority journald reads, no time stamp;
  - run as root, it warns that it needs no root.

And run as an unprivileged user (nobody) that may not open what it needs: the
spool directory, then the real master's bus socket, each refusal one error
naming the path that refuses, its owner, group and mode, salttap's user and
what to change.

One Salt version: the newest of SALTTAP_SALT_VERSIONS (conftest.py).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import saltlab
from http_calls import free_ports
from salt_suite import NEWEST, WATCHER_MODE

WATCHDOG_USEC = 2_000_000   # salttap feeds it every second
WAIT = 60                   # a hang guard for each observation, not a measure


pytestmark = pytest.mark.parametrize("salt_lab", [NEWEST], indirect=True,
                                     ids=lambda v: f"salt-{v}")


@pytest.fixture(autouse=True)
def _needs_salttap():
    if WATCHER_MODE != "salttap":
        pytest.skip(f"SALTTAP_WATCHER={WATCHER_MODE}: the service needs the salttap binary")


class NotifySocket:
    """The datagram socket systemd would listen on; collects every message."""

    def __init__(self, path: Path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.settimeout(0.2)
        self.messages: list[str] = []

    def wait_for(self, pred, what: str, diagnostics) -> str:
        """The first message (from now on, or already received) for which pred holds."""
        for m in self.messages:
            if pred(m):
                return m
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                m = self.sock.recv(4096).decode()
            except socket.timeout:
                continue
            self.messages.append(m)
            if pred(m):
                return m
        pytest.fail(f"no {what} within {WAIT}s; messages: {self.messages[-20:]}\n{diagnostics()}")

    def wait_new(self, message_pred, what: str, diagnostics) -> None:
        """Until one more message for which message_pred holds arrives."""
        count = sum(1 for m in self.messages if message_pred(m))
        self.wait_for(lambda _m: sum(1 for m in self.messages if message_pred(m)) > count, what, diagnostics)

    def close(self):
        self.sock.close()


def test_run_under_systemd_notify_watchdog_and_journal(lab, salttap_bin, tmp_path):
    notify = NotifySocket(tmp_path / "notify")
    dead_engine, metrics_port = free_ports(2)  # nothing listens on dead_engine
    config = tmp_path / "salttap.yaml"
    config.write_text(
        "indexer:\n"
        f"  hosts: [\"http://127.0.0.1:{dead_engine}\"]\n"
        f"  spool: {{dir: {tmp_path / 'spool'}}}\n")
    log_path = tmp_path / "salttap.journal"
    log = open(log_path, "wb")
    st = os.fstat(log.fileno())
    env = dict(os.environ, NOTIFY_SOCKET=str(notify.path), WATCHDOG_USEC=str(WATCHDOG_USEC),
               JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}")
    env.pop("WATCHDOG_PID", None)
    proc = subprocess.Popen(
        [str(salttap_bin), "run", "--config", str(config), "--master-config", str(lab.master_conf_dir / "master"),
         "--metrics-listen", f"127.0.0.1:{metrics_port}", "--drain-seconds", "2"],
        stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, start_new_session=True)
    log.close()
    saltlab._register(proc.pid, "salttap-run-notify")

    def diagnostics() -> str:
        return f"--- salttap stderr ({log_path})\n{saltlab.tail(log_path)}"

    try:
        notify.wait_for(lambda m: m == "READY=1", "READY=1", diagnostics)
        ready_at = len(notify.messages)
        status = [m for m in notify.messages[:ready_at] if m.startswith("STATUS=")]
        assert status and "bus connected" in status[-1], (notify.messages, diagnostics())
        assert "engine setup pending" in status[-1], status[-1]
        assert "told systemd READY (on the bus)" in log_path.read_text()

        # The bus is idle: the pipeline loop still feeds the watchdog.
        for _ in range(3):
            notify.wait_new(lambda m: m == "WATCHDOG=1", "another WATCHDOG=1", diagnostics)

        # Jobs run: a STATUS with a rate above zero.
        def busy(m: str) -> bool:
            r = re.match(r"STATUS=(\d+\.\d) events/s, bus connected, spool \d+ pending, engine \w", m)
            return bool(r) and float(r.group(1)) > 0
        deadline = time.monotonic() + WAIT
        while not any(busy(m) for m in notify.messages) and time.monotonic() < deadline:
            lab.salt(["*", "test.ping"], check=False, timeout=60)
            notify.wait_new(lambda m: m.startswith("STATUS="), "the next STATUS=", diagnostics)
        notify.wait_for(busy, "a STATUS with events/s above zero", diagnostics)

        # systemctl reload: RELOADING=1 (with the monotonic time), the reload, READY=1 again.
        proc.send_signal(signal.SIGHUP)
        notify.wait_for(lambda m: re.fullmatch(r"RELOADING=1\nMONOTONIC_USEC=\d+", m) is not None,
                        "RELOADING=1", diagnostics)
        notify.wait_new(lambda m: m == "READY=1", "READY=1 after the reload", diagnostics)
        assert f"reload: reloaded {config}" in log_path.read_text(), diagnostics()

        proc.send_signal(signal.SIGTERM)
        notify.wait_for(lambda m: m == "STOPPING=1", "STOPPING=1", diagnostics)
        assert proc.wait(timeout=WAIT) == 0, diagnostics()
    finally:
        saltlab.stop_process_group(proc)
        notify.close()

    lines = log_path.read_text().splitlines()
    assert lines, "salttap logged nothing"
    for line in lines:
        assert re.match(r"<[3467]>(DEBUG|INFO|WARN|ERROR) ", line), f"not a journal line: {line!r}"
    assert any(line.startswith("<6>INFO run: ") for line in lines), lines
    if os.geteuid() == 0:
        assert any(line.startswith("<4>WARN run: salttap is running as root.") for line in lines), lines


def test_run_as_an_unprivileged_user_says_what_refuses_it_and_what_to_change(lab, salttap_bin, tmp_path):
    # A missing setpriv (util-linux) is a missing part: that fails. Only a user other than
    # root, who cannot switch to nobody, leaves the test out (CI runs as root).
    if os.geteuid() != 0:
        pytest.skip("switching to user nobody needs root")
    assert shutil.which("setpriv"), "setpriv (Debian's util-linux) is not installed"
    # A directory nobody may read, beside the test's own (root's, 0700): the
    # config and a copy of the master config (pointing at the lab's sock_dir,
    # which nobody may not enter) go there.
    shared = Path(tempfile.mkdtemp(prefix="salttap-nobody-"))
    try:
        shared.chmod(0o755)
        locked = shared / "locked"
        locked.mkdir(mode=0o700)
        master_config = shared / "master"
        shutil.copy(lab.master_conf_dir / "master", master_config)
        master_config.chmod(0o644)
        (shared / "writable").mkdir()
        shutil.chown(shared / "writable", user="nobody")
        nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]

        def run_as_nobody(spool: Path) -> subprocess.Popen:
            config = shared / "salttap.yaml"
            config.write_text("indexer:\n  hosts: [\"http://127.0.0.1:9\"]\n"
                              f"  spool: {{dir: {spool}}}\n")
            config.chmod(0o644)
            return subprocess.Popen(
                nobody + [str(salttap_bin), "run", "--config", str(config), "--master-config", str(master_config),
                          "--metrics-listen", "", "--drain-seconds", "1"],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                start_new_session=True)

        # The spool: refused at once, exit 1, the locked parent named.
        proc = run_as_nobody(locked / "spool")
        out, _ = proc.communicate(timeout=WAIT)
        assert proc.returncode == 1, out
        assert f"cannot use the spool directory {locked / 'spool'}: Permission denied. {locked} belongs to user " \
            "root, group root (mode 0700) and salttap runs as user nobody" in out, out

        # The bus: the real master's socket, behind the lab's root-only
        # directories; salttap keeps retrying (a group may be added live).
        proc = run_as_nobody(shared / "writable" / "spool")
        saltlab._register(proc.pid, "salttap-run-nobody")
        lines: list[str] = []
        try:
            deadline = time.monotonic() + WAIT
            while time.monotonic() < deadline:
                line = proc.stdout.readline()
                if not line:
                    break
                lines.append(line)
                if "cannot connect to the master's bus" in line:
                    break
            refusal = [l for l in lines if "cannot connect to the master's bus" in l]
            assert refusal, "".join(lines)
            assert f"at {lab.sock_dir / 'master_event_pub.ipc'}: Permission denied. " in refusal[0], refusal[0]
            assert "salttap runs as user nobody" in refusal[0] and "or run salttap as user root" in refusal[0], \
                refusal[0]
            assert " ERROR tap: " in refusal[0], refusal[0]
            assert proc.poll() is None, "salttap gave up instead of retrying"
        finally:
            saltlab.stop_process_group(proc)
    finally:
        shutil.rmtree(shared, ignore_errors=True)
