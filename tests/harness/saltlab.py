"""saltlab: start a throw-away real Salt master + minions on loopback.

Used by the salttap integration tests, but usable on its own for debugging:

    .cache/venv/tools/bin/python tests/harness/saltlab.py 3006.25
    (starts a lab, prints its paths and a few commands, Ctrl-C stops it)

Every daemon runs in the foreground (no -d) in its own session / process
group, so the lab owns its PIDs and stops whole process groups by PID
(SIGTERM, then SIGKILL). Everything binds 127.0.0.1 on free ports.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable

from http_calls import free_ports

REPO_ROOT = Path(__file__).resolve().parents[2]
VENV_ROOT = REPO_ROOT / ".cache" / "venv"
INSTALL_SCRIPT = REPO_ROOT / "tests" / "salt" / "install-salt.sh"

DEFAULT_MINIONS = ("minion-a", "minion-b")
# Raised on master and minions so a ~1.2 MB return is not trimmed.
MAX_EVENT_SIZE = 4 * 1024 * 1024

# All process groups started by this module that are still alive; killed at
# interpreter exit as a last resort (fixtures normally stop them first).
_LIVE_GROUPS: dict[int, str] = {}
_LIVE_LOCK = threading.Lock()


# --------------------------------------------------------------------------
# process helpers
# --------------------------------------------------------------------------

def _register(pid: int, what: str) -> None:
    with _LIVE_LOCK:
        _LIVE_GROUPS[pid] = what


def _unregister(pid: int) -> None:
    with _LIVE_LOCK:
        _LIVE_GROUPS.pop(pid, None)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def stop_process_group(proc: subprocess.Popen, term_timeout: float = 10.0) -> None:
    """SIGTERM the process group led by proc.pid, then SIGKILL what is left.

    proc must have been started with start_new_session=True, so its pid is the
    pgid of it and of every child it forked (salt-master forks many).
    """
    pgid = proc.pid
    if proc.poll() is None or _group_alive(pgid):
        try:
            os.killpg(pgid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + term_timeout
        while time.monotonic() < deadline:
            proc.poll()
            if proc.returncode is not None and not _group_alive(pgid):
                break
            time.sleep(0.1)
        if _group_alive(pgid):
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    # children that were SIGKILLed are reaped by init; wait a moment for them
    deadline = time.monotonic() + 5
    while _group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    _unregister(pgid)


def _kill_leftovers() -> None:
    with _LIVE_LOCK:
        groups = list(_LIVE_GROUPS)
    for pgid in groups:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                break
            time.sleep(0.5)


atexit.register(_kill_leftovers)


def tail(path: Path, max_bytes: int = 12000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - max_bytes))
            data = f.read()
    except FileNotFoundError:
        return "(no file)"
    text = data.decode("utf-8", "replace")
    if size > max_bytes:
        text = f"... ({size - max_bytes} bytes cut)\n" + text
    return text


def jid_micros(jid: str) -> int:
    """A standard jid's time (UTC) in microseconds since the epoch."""
    t = datetime.strptime(jid[:20], "%Y%m%d%H%M%S%f").replace(tzinfo=timezone.utc)
    return int(t.timestamp()) * 1_000_000 + t.microsecond


# --------------------------------------------------------------------------
# Salt installation
# --------------------------------------------------------------------------

def venv_dir(version: str) -> Path:
    return VENV_ROOT / f"salt-{version}"


def venv_ok(version: str) -> bool:
    v = venv_dir(version)
    if not (v / "bin" / "salt-master").exists():
        return False
    r = subprocess.run([str(v / "bin" / "python"), "-c", "import salt.version"],
                       capture_output=True)
    return r.returncode == 0


def ensure_salt(version: str) -> Path:
    """Return the venv of `version`, installing it with install-salt.sh if missing.

    Raises RuntimeError with the installer's output if that fails.
    """
    if venv_ok(version):
        return venv_dir(version)
    r = subprocess.run(["bash", str(INSTALL_SCRIPT), version], cwd=REPO_ROOT,
                       capture_output=True, text=True)
    if r.returncode != 0 or not venv_ok(version):
        raise RuntimeError(
            f"installing salt {version} with {INSTALL_SCRIPT} failed "
            f"(exit {r.returncode}):\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}")
    return venv_dir(version)


# --------------------------------------------------------------------------
# configuration
# --------------------------------------------------------------------------

SLS_FILES = {
    "top.sls": "base:\n  '*':\n    - good\n",
    # all states succeed, no changes
    "good.sls": (
        "good_one:\n  test.succeed_without_changes:\n    - name: good one\n"
        "good_two:\n  test.succeed_without_changes:\n    - name: good two\n"
    ),
    # one state result False (+ a dependent that then fails its requisite)
    "fail.sls": (
        "will_fail:\n  test.fail_without_changes:\n    - name: this fails\n"
        "needs_fail:\n  test.succeed_without_changes:\n    - require:\n"
        "      - test: will_fail\n"
    ),
    # a long-running state
    "sleep.sls": "long_sleep:\n  cmd.run:\n    - name: sleep 120\n",
}

# Reactor for salttap's alert events (`salttap watch --jobs` with alerts.fire_event:
# salttap/alert/<kind>/<jid>, data = the alert JSON): the master answers each with
# the event REACTED_TAG, whose data names the alert it reacted to. Pass as
# SaltLab(reactors=SALTTAP_ALERT_REACTOR); the integration fixture always does.
REACTED_TAG = "salttap-test/reacted"
SALTTAP_ALERT_REACTOR = {
    "salttap/alert/*": (
        "salttap_alert_reacted:\n"
        "  runner.event.send:\n"
        "    - args:\n"
        f"      - tag: {REACTED_TAG}\n"
        "      - data:\n"
        "          alert_tag: \"{{ tag }}\"\n"
        "          alert: \"{{ data.get('alert', '') }}\"\n"
        "          alert_jid: \"{{ data.get('jid', '') }}\"\n"
        "          alert_status: \"{{ data.get('status', '') }}\"\n"
    ),
}


def _yaml(d: dict) -> str:
    # JSON is valid YAML; good enough and no dependency on PyYAML here.
    return "\n".join(f"{k}: {json.dumps(v)}" for k, v in d.items()) + "\n"


class Daemon:
    """One foreground salt daemon in its own process group."""

    def __init__(self, name: str, argv: list[str], log_dir: Path, log_path: Path, env: dict,
                 term_timeout: float = 10.0):
        self.name = name
        self.term_timeout = term_timeout
        self.argv = argv
        self.env = env
        self.out_path = log_dir / f"{name}.console.log"
        self.log_path = log_path  # salt's own log_file
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    def start(self) -> None:
        assert self.proc is None or self.proc.poll() is not None, f"{self.name} is running"
        self.starts += 1
        out = open(self.out_path, "ab")
        out.write(f"==== start #{self.starts} {time.strftime('%H:%M:%S')}: "
                  f"{' '.join(self.argv)}\n".encode())
        out.flush()
        try:
            self.log_offset = self.log_path.stat().st_size
        except FileNotFoundError:
            self.log_offset = 0
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=subprocess.STDOUT, env=self.env,
                                     start_new_session=True, close_fds=True)
        out.close()
        _register(self.proc.pid, self.name)

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is not None:
            stop_process_group(self.proc, self.term_timeout)

    def wait_log(self, pattern: str, timeout: float) -> bool:
        """True once salt's log_file shows `pattern` (regex) since the last start."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.running():
            try:
                with open(self.log_path, "rb") as f:
                    f.seek(self.log_offset)
                    if rx.search(f.read().decode("utf-8", "replace")):
                        return True
            except FileNotFoundError:
                pass
            time.sleep(0.2)
        return False

    def logs(self) -> str:
        return (f"--- {self.name} console ({self.out_path})\n{tail(self.out_path)}\n"
                f"--- {self.name} log ({self.log_path})\n{tail(self.log_path)}\n")


class SaltLab:
    """A real salt-master plus minions for one Salt version, all on 127.0.0.1.

    Layout (short paths: unix socket paths must stay < 108 bytes):
        <base>/m/            master root_dir   (conf/master, s/ = sock_dir, c/ = cachedir)
        <base>/<minion-id>/  minion root_dir   (conf/minion, s/, c/)
        <base>/srv/salt      file_roots        (good, fail, sleep states)
        <base>/srv/reactor   reactor SLS files (with reactors=..., e.g. SALTTAP_ALERT_REACTOR)
        <base>/logs/         daemons' console output, watchers' stdout/stderr
        <root>/log/          each daemon's own salt log_file
    """

    def __init__(self, version: str, minions: Iterable[str] = DEFAULT_MINIONS,
                 base: Path | None = None, log_level: str = "info",
                 reactors: dict[str, str] | None = None, master_extra: dict | None = None,
                 sls_files: dict[str, str] | None = None, minion_extra: dict | None = None,
                 syndic_of: "SaltLab | None" = None):
        """reactors: {tag glob: reactor SLS text}, written to <base>/srv/reactor/
        and mapped in the master's `reactor:` option (fixed at master start).
        master_extra: more master options (see set_master_options to change them).
        minion_extra: more options for every minion.
        syndic_of: a lab whose master (with `order_masters: True`) this lab's
        master answers to through a salt-syndic, started after the master
        (its config: the syndic_* master options and conf/minion; its log
        <root>/log/syndic.log). Give this master its own `id` in master_extra.
        sls_files: more files for <base>/srv/salt, beside SLS_FILES."""
        self.version = version
        self.venv = venv_dir(version)
        self.bin = self.venv / "bin"
        if not (self.bin / "salt-master").exists():
            raise RuntimeError(f"salt {version} is not installed in {self.venv} "
                               f"(run {INSTALL_SCRIPT} {version})")
        self.minion_ids = list(minions)
        self.base = Path(base) if base else Path(tempfile.mkdtemp(prefix="stl-", dir="/tmp"))
        self.log_dir = self.base / "logs"
        self.log_level = log_level
        self.reactors = dict(reactors or {})
        self.master_extra = dict(master_extra or {})
        self.minion_extra = dict(minion_extra or {})
        self.syndic_of = syndic_of
        self.syndic: Daemon | None = None
        self.sls_files = {**SLS_FILES, **(sls_files or {})}
        self.env = dict(os.environ)
        self.env["PATH"] = f"{self.bin}:{self.env.get('PATH', '/usr/bin:/bin')}"
        self.env["PYTHONUNBUFFERED"] = "1"
        self.env.pop("PYTHONPATH", None)
        self.env.pop("VIRTUAL_ENV", None)
        self.ports: dict[str, int] = {}
        self.master: Daemon | None = None
        self.minions: dict[str, Daemon] = {}
        self.timings: dict[str, float] = {}
        self._write_config()

    # ---- paths ---------------------------------------------------------

    @property
    def master_root(self) -> Path:
        return self.base / "m"

    @property
    def master_conf_dir(self) -> Path:
        return self.master_root / "conf"

    @property
    def sock_dir(self) -> Path:
        """The master's sock_dir: where master_event_pub.ipc / _pull.ipc live."""
        return self.master_root / "s"

    @property
    def pub_sock(self) -> Path:
        return self.sock_dir / "master_event_pub.ipc"

    @property
    def pull_sock(self) -> Path:
        return self.sock_dir / "master_event_pull.ipc"

    def minion_root(self, mid: str) -> Path:
        return self.base / mid

    def minion_conf_dir(self, mid: str) -> Path:
        return self.minion_root(mid) / "conf"

    # ---- config --------------------------------------------------------

    def _write_config(self) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        srv = self.base / "srv" / "salt"
        srv.mkdir(parents=True, exist_ok=True)
        (self.base / "srv" / "pillar").mkdir(parents=True, exist_ok=True)
        for name, text in self.sls_files.items():
            (srv / name).write_text(text)

        names = ["publish_port", "ret_port", "tcp_master_pub_port", "tcp_master_pull_port",
                 "tcp_master_publish_pull", "tcp_master_workers"]
        for mid in self.minion_ids:
            names += [f"{mid}:tcp_pub_port", f"{mid}:tcp_pull_port"]
        self.ports = dict(zip(names, free_ports(len(names))))

        reactor_map = []
        if self.reactors:
            rdir = self.base / "srv" / "reactor"
            rdir.mkdir(parents=True, exist_ok=True)
            for i, (glob, sls) in enumerate(self.reactors.items()):
                f = rdir / f"r{i}.sls"
                f.write_text(sls)
                reactor_map.append({glob: [str(f)]})

        mr = self.master_root
        master = {
            "id": "salttap-master",
            "interface": "127.0.0.1",
            "ipv6": False,
            "publish_port": self.ports["publish_port"],
            "ret_port": self.ports["ret_port"],
            "tcp_master_pub_port": self.ports["tcp_master_pub_port"],
            "tcp_master_pull_port": self.ports["tcp_master_pull_port"],
            "tcp_master_publish_pull": self.ports["tcp_master_publish_pull"],
            "tcp_master_workers": self.ports["tcp_master_workers"],
            "user": "root",
            "root_dir": str(mr),
            "conf_file": str(self.master_conf_dir / "master"),
            "pki_dir": str(mr / "pki"),
            "cachedir": str(mr / "c"),
            "sock_dir": str(self.sock_dir),
            "pidfile": str(mr / "run" / "salt-master.pid"),
            # must be under root_dir, or salt prepends root_dir to it
            "log_file": str(mr / "log" / "master.log"),
            "key_logfile": str(mr / "log" / "key.log"),
            "log_level": "warning",
            "log_level_logfile": self.log_level,
            "auto_accept": True,
            "worker_threads": 2,
            "loop_interval": 5,
            "presence_events": False,
            "enable_fqdns_grains": False,
            "enable_gpu_grains": False,
            "max_event_size": MAX_EVENT_SIZE,
            "file_roots": {"base": [str(srv)]},
            "pillar_roots": {"base": [str(self.base / "srv" / "pillar")]},
            "fileserver_backend": ["roots"],
            "keep_jobs_seconds": 3600,
            "gather_job_timeout": 3,
        }
        if reactor_map:
            master["reactor"] = reactor_map
            master["reactor_worker_threads"] = 2
        if self.syndic_of is not None:
            top = self.syndic_of
            master.update({
                "syndic_master": "127.0.0.1",
                "syndic_master_port": top.ports["ret_port"],
                "syndic_log_file": str(mr / "log" / "syndic.log"),
                "syndic_pidfile": str(mr / "run" / "salt-syndic.pid"),
                # the syndic reads this master's bus: its own sock_dir would be the minion default
                "syndic_sock_dir": str(self.sock_dir),
            })
        master.update(self.master_extra)
        self._check_sock_dir_rule(master)
        self.master_conf_dir.mkdir(parents=True, exist_ok=True)
        (self.master_conf_dir / "master").write_text(_yaml(master))
        self.master_opts = master
        if self.syndic_of is not None:
            # salt-syndic takes its id, pki_dir and the upper master's publish port from
            # the minion config beside the master's.
            (self.master_conf_dir / "minion").write_text(_yaml({
                "id": f"{master['id']}-syndic",
                "root_dir": str(mr),
                "pki_dir": str(mr / "syndic-pki"),
                "publish_port": self.syndic_of.ports["publish_port"],
                "ipv6": False,
                "acceptance_wait_time": 1,
                "acceptance_wait_time_max": 2,
                "random_reauth_delay": 0,
                "recon_default": 200,
                "recon_max": 1000,
                "recon_randomize": False,
                "master_tries": -1,
                "enable_fqdns_grains": False,
                "enable_gpu_grains": False,
                "max_event_size": MAX_EVENT_SIZE,
                "log_level_logfile": self.log_level,
            }))

        self.minion_opts = {}
        for mid in self.minion_ids:
            r = self.minion_root(mid)
            opts = {
                "id": mid,
                "master": "127.0.0.1",
                "master_port": self.ports["ret_port"],
                "publish_port": self.ports["publish_port"],
                "ipv6": False,
                "user": "root",
                "root_dir": str(r),
                "conf_file": str(self.minion_conf_dir(mid) / "minion"),
                "pki_dir": str(r / "pki"),
                "cachedir": str(r / "c"),
                "sock_dir": str(r / "s"),
                "pidfile": str(r / "run" / "salt-minion.pid"),
                "log_file": str(r / "log" / "minion.log"),
                "log_level": "warning",
                "log_level_logfile": self.log_level,
                "tcp_pub_port": self.ports[f"{mid}:tcp_pub_port"],
                "tcp_pull_port": self.ports[f"{mid}:tcp_pull_port"],
                # start and reconnect fast
                "acceptance_wait_time": 1,
                "acceptance_wait_time_max": 2,
                "random_reauth_delay": 0,
                "auth_timeout": 10,
                "auth_tries": 10,
                "recon_default": 200,
                "recon_max": 1000,
                "recon_randomize": False,
                "master_tries": -1,
                "ping_interval": 0,
                "return_retry_timer": 1,
                "return_retry_timer_max": 2,
                "enable_fqdns_grains": False,
                "enable_gpu_grains": False,
                "grains_refresh_every": 0,
                "mine_enabled": False,
                "max_event_size": MAX_EVENT_SIZE,
                "file_client": "remote",
                **self.minion_extra,
            }
            self._check_sock_dir_rule(opts)
            self.minion_conf_dir(mid).mkdir(parents=True, exist_ok=True)
            (self.minion_conf_dir(mid) / "minion").write_text(_yaml(opts))
            self.minion_opts[mid] = opts

    @staticmethod
    def _check_sock_dir_rule(opts: dict) -> None:
        sock_dir, cachedir = opts["sock_dir"], opts["cachedir"]
        # Salt silently moves sock_dir to cachedir/.salt-unix otherwise.
        assert len(sock_dir) <= len(cachedir) + 10, (sock_dir, cachedir)
        longest = os.path.join(sock_dir, "minion_event_" + "0" * 10 + "_pull.ipc")
        assert len(longest) < 100, f"unix socket path too long: {longest}"

    # ---- lifecycle -----------------------------------------------------

    def _new_master(self) -> Daemon:
        return Daemon("master", [str(self.bin / "salt-master"), "-c", str(self.master_conf_dir)],
                      self.log_dir, Path(self.master_opts["log_file"]), self.env)

    def start(self, timeout: float = 120) -> "SaltLab":
        t0 = time.monotonic()
        self.master = self._new_master()
        self.master.start()
        self.wait_master_up(timeout)
        self.timings["master_up"] = time.monotonic() - t0
        if self.syndic_of is not None:
            self.syndic = Daemon("syndic", [str(self.bin / "salt-syndic"), "-c", str(self.master_conf_dir)],
                                 self.log_dir, Path(self.master_opts["syndic_log_file"]), self.env,
                                 term_timeout=3.0)
            self.syndic.start()
        for mid in self.minion_ids:
            self.start_minion(mid, wait=False)
        self.wait_minions(timeout=timeout)
        self.timings["lab_up"] = time.monotonic() - t0
        return self

    def start_minion(self, mid: str, wait: bool = True, timeout: float = 120) -> None:
        """Start (or restart) one minion; with wait, until it answers test.ping."""
        d = self.minions.get(mid)
        if d is None:
            d = Daemon(mid, [str(self.bin / "salt-minion"), "-c", str(self.minion_conf_dir(mid))],
                       self.log_dir, Path(self.minion_opts[mid]["log_file"]), self.env,
                       # a salt-minion takes ~7 s to honour SIGTERM; no point waiting
                       term_timeout=3.0)
            self.minions[mid] = d
        d.start()
        if wait:
            self.wait_minions([mid], timeout=timeout)

    def stop_minion(self, mid: str) -> None:
        self.minions[mid].stop()

    def stop_master(self) -> None:
        if self.master:
            self.master.stop()

    def restart_master(self, timeout: float = 120, wait_minions: bool = True) -> None:
        """Stop the master (whole process group) and start it again, same config.

        With wait_minions, returns once every running minion answers test.ping again.
        """
        self.stop_master()
        assert self.master is not None
        self.master.start()
        self.wait_master_up(timeout)
        if wait_minions:
            self.wait_minions(timeout=timeout)

    def set_master_options(self, extra: dict) -> None:
        """Replace master_extra and rewrite the master config (the same ports and
        paths); the running master reads it at its next (re)start."""
        base = {k: v for k, v in self.master_opts.items() if k not in self.master_extra}
        self.master_extra = dict(extra)
        self.master_opts = {**base, **self.master_extra}
        (self.master_conf_dir / "master").write_text(_yaml(self.master_opts))

    def stop(self) -> None:
        """Stop every daemon by process group, in parallel (minions take a while)."""
        daemons = list(self.minions.values()) + [d for d in (self.master, self.syndic) if d]
        threads = [threading.Thread(target=d.stop, name=f"stop-{d.name}") for d in daemons]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> "SaltLab":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def restore(self) -> None:
        """Start again whatever an earlier test stopped (the master, minions) and wait until it is up."""
        if not self.master.running():
            self.master.start()
            self.wait_master_up()
        stopped = [m for m in self.minion_ids if not self.minions[m].running()]
        for m in stopped:
            self.start_minion(m, wait=False)
        if stopped:
            self.wait_minions()

    def wait_master_up(self, timeout: float = 120) -> None:
        """Until the event bus socket exists and the ret port accepts connections."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.master is None or not self.master.running():
                raise RuntimeError(f"salt-master {self.version} exited early "
                                   f"(rc={self.master and self.master.proc.returncode})\n"
                                   + self.logs())
            if self.pub_sock.exists() and self.pull_sock.exists() and \
                    self._tcp_open(self.ports["ret_port"]):
                return
            time.sleep(0.2)
        raise TimeoutError(f"salt-master {self.version} not up after {timeout}s "
                           f"(expected {self.pub_sock})\n" + self.logs())

    @staticmethod
    def _tcp_open(port: int) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            return False

    def running_minions(self) -> list[str]:
        return [m for m in self.minion_ids if m in self.minions and self.minions[m].running()]

    def wait_minions(self, minions: Iterable[str] | None = None, timeout: float = 120) -> None:
        """Until `salt -L <minions> test.ping` gets True from every one of them."""
        want = sorted(minions if minions is not None else self.running_minions())
        if not want:
            return
        deadline = time.monotonic() + timeout
        for mid in want:
            d = self.minions.get(mid)
            if d is not None and d.running():
                # Fast path only; the ping loop below is what counts. A publish sent
                # before the minion's SUB socket is up is lost, and costs a whole
                # -t + gather_job_timeout round.
                d.wait_log(r"Minion is ready to receive requests",
                           max(1.0, deadline - time.monotonic()))
        last = None
        while time.monotonic() < deadline:
            for mid in want:
                d = self.minions.get(mid)
                if d is None or not d.running():
                    raise RuntimeError(f"{mid} is not running\n" + self.logs())
            r = self.salt(["-L", ",".join(want), "test.ping", "--out=json", "--static",
                           "-t", "3"], check=False, timeout=60)
            last = r
            try:
                got = json.loads(r.stdout) if r.stdout.strip() else {}
            except ValueError:
                got = {}
            if all(got.get(m) is True for m in want):
                return
            time.sleep(0.5)
        raise TimeoutError(f"minions {want} did not answer test.ping within {timeout}s; "
                           f"last: rc={last and last.returncode} out={last and last.stdout!r} "
                           f"err={last and last.stderr[-2000:]!r}\n" + self.logs())

    # ---- CLI -----------------------------------------------------------

    def run(self, argv: list[str], check: bool = True, timeout: float = 120,
            **kw) -> subprocess.CompletedProcess:
        try:
            r = subprocess.run(argv, capture_output=True, text=True, env=self.env,
                               timeout=timeout, stdin=subprocess.DEVNULL,
                               start_new_session=True, **kw)
        except subprocess.TimeoutExpired as e:
            raise TimeoutError(f"timed out after {timeout}s: {' '.join(argv)}\n"
                               f"stdout: {e.stdout!r:.2000}\nstderr: {e.stderr!r:.2000}") from e
        if check and r.returncode != 0:
            raise RuntimeError(f"exit {r.returncode}: {' '.join(argv)}\n"
                               f"stdout: {r.stdout[-3000:]}\nstderr: {r.stderr[-3000:]}")
        return r

    def salt(self, args: list[str], **kw) -> subprocess.CompletedProcess:
        return self.run([str(self.bin / "salt"), "-c", str(self.master_conf_dir), *args], **kw)

    def salt_json(self, args: list[str], **kw):
        """`salt ... --out=json --static`, parsed. (Exit codes != 0 are allowed.)"""
        kw.setdefault("check", False)
        r = self.salt([*args, "--out=json", "--static"], **kw)
        try:
            return json.loads(r.stdout)
        except ValueError as e:
            raise RuntimeError(f"salt {args}: not JSON (rc={r.returncode}):\n"
                               f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}") from e

    def salt_run(self, args: list[str], **kw) -> subprocess.CompletedProcess:
        return self.run([str(self.bin / "salt-run"), "-c", str(self.master_conf_dir), *args], **kw)

    def salt_key(self, args: list[str], **kw) -> subprocess.CompletedProcess:
        return self.run([str(self.bin / "salt-key"), "-c", str(self.master_conf_dir), *args], **kw)

    def salt_call(self, mid: str, args: list[str], **kw) -> subprocess.CompletedProcess:
        return self.run([str(self.bin / "salt-call"), "-c", str(self.minion_conf_dir(mid)), *args],
                        **kw)

    def salt_jid(self, args: list[str], t: int = 30, timeout: float = 120) -> str:
        """`salt --show-jid -t T <args>`: the CLI waits for the returns (polling
        saltutil.find_job after T seconds) as a user's would; the jid."""
        r = self.salt(["--show-jid", "--out=quiet", "-t", str(t), *args], check=False, timeout=timeout)
        m = re.search(r"^jid: (\d+)", r.stdout, re.M)
        assert m, f"no jid from salt {args}: rc={r.returncode} out={r.stdout!r} err={r.stderr!r}"
        return m.group(1)

    def salt_async(self, args: list[str]) -> str:
        """`salt --async <args>`: published, not waited for; the jid."""
        r = self.salt(["--async", *args], check=False, timeout=60)
        m = re.search(r"job ID: (\d+)", r.stdout)
        assert m, f"no jid from salt --async {args}: rc={r.returncode} out={r.stdout!r} err={r.stderr!r}"
        return m.group(1)

    def fire_event(self, tag: str, data: dict | None = None, timeout: float = 60) -> None:
        """Fire an event on the master bus with Salt's own client (the right framing
        for this version by construction)."""
        code = (
            "import json, sys, salt.config, salt.utils.event\n"
            "opts = salt.config.master_config(sys.argv[1])\n"
            "ev = salt.utils.event.get_master_event(opts, opts['sock_dir'], listen=False)\n"
            "ok = ev.fire_event(json.loads(sys.argv[3]), sys.argv[2])\n"
            "ev.destroy()\n"
            "sys.exit(0 if ok is not False else 1)\n"
        )
        self.run([str(self.bin / "python"), "-c", code, str(self.master_conf_dir / "master"),
                  tag, json.dumps(data or {})], timeout=timeout)

    def salt_event_watcher(self, name: str = "salt-run-state.event") -> "EventWatcher":
        """Watch the master bus with Salt's own `salt-run state.event pretty=False`
        (prints `tag\\t{json}` lines). Call .stop() when done."""
        argv = [str(self.bin / "salt-run"), "-c", str(self.master_conf_dir),
                "state.event", "pretty=False", "--log-level=warning"]
        return EventWatcher(argv, name=name, parse=parse_state_event_line,
                            log_dir=self.log_dir, env=self.env)

    # ---- introspection -------------------------------------------------

    def probe_pub_framing(self, timeout: float = 30) -> str:
        """Read the first bytes of master_event_pub.ipc with a plain AF_UNIX socket
        and return 'len32' (4-byte BE length prefix) or 'plain' (bare msgpack map)."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(1.0)
        try:
            s.connect(str(self.pub_sock))
            deadline = time.monotonic() + timeout
            buf = b""
            while time.monotonic() < deadline and not buf:
                self.fire_event(f"saltlab/probe/{uuid.uuid4().hex}", {"probe": True})
                t = time.monotonic() + 3
                while time.monotonic() < t and not buf:
                    try:
                        buf = s.recv(65536)
                    except socket.timeout:
                        continue
                    if buf == b"":
                        raise RuntimeError("pub socket closed by the master")
        finally:
            s.close()
        if not buf:
            raise TimeoutError("no bytes on the pub socket")
        b0 = buf[0]
        if 0x80 <= b0 <= 0x8F or b0 in (0xDE, 0xDF):
            return "plain"
        if b0 == 0x00:
            return "len32"
        return f"unknown(0x{b0:02x})"

    def logs(self) -> str:
        parts = [f"==== saltlab {self.version} in {self.base} ports={self.ports}"]
        for d in [d for d in (self.master, self.syndic) if d] + list(self.minions.values()):
            parts.append(d.logs())
        return "\n".join(parts)

    def describe(self) -> str:
        return (f"salt {self.version}: base={self.base}\n"
                f"  master pid={self.master and self.master.pid} conf={self.master_conf_dir}\n"
                f"  sock_dir={self.sock_dir}\n"
                + "".join(f"  {m} pid={d.pid} conf={self.minion_conf_dir(m)}\n"
                          for m, d in self.minions.items())
                + f"  try: {self.bin}/salt -c {self.master_conf_dir} '*' test.ping\n"
                f"       {self.bin}/salt-run -c {self.master_conf_dir} state.event pretty=False\n")


# --------------------------------------------------------------------------
# event watchers (salttap, or Salt's own state.event)
# --------------------------------------------------------------------------

def parse_json_line(line: str):
    """salttap --format json: one {"tag": ..., "data": ...} object a line."""
    ev = json.loads(line)
    if not isinstance(ev, dict) or "tag" not in ev:
        raise ValueError("not an event object")
    return ev


def parse_state_event_line(line: str):
    """salt-run state.event pretty=False: `tag<TAB>{json}`."""
    tag, sep, rest = line.partition("\t")
    if not sep:
        raise ValueError("no tab")
    return {"tag": tag, "data": json.loads(rest)}


class EventWatcher:
    """Runs a bus-watching subprocess; a reader thread parses stdout lines into
    events (kept in order), another collects stderr lines. Nothing sleeps a fixed
    time: wait_for()/wait_stderr() poll with a deadline."""

    def __init__(self, argv: list[str], name: str, parse: Callable[[str], dict],
                 log_dir: Path, env: dict | None = None):
        self.argv = argv
        self.name = name
        self.parse = parse
        self.events: list[dict] = []
        self.noise: list[str] = []
        self.stderr_lines: list[str] = []
        self._cond = threading.Condition()
        self._stdout_log = open(log_dir / f"{name}.stdout.log", "ab")
        self._stderr_log = open(log_dir / f"{name}.stderr.log", "ab")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, start_new_session=True)
        _register(self.proc.pid, name)
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True, name=f"{name}-out"),
            threading.Thread(target=self._read_stderr, daemon=True, name=f"{name}-err"),
        ]
        for t in self._threads:
            t.start()

    def _read_stdout(self) -> None:
        for raw in iter(self.proc.stdout.readline, b""):
            self._stdout_log.write(raw if len(raw) < 4096 else raw[:4096] + b"...<cut>\n")
            self._stdout_log.flush()
            line = raw.decode("utf-8", "replace").rstrip("\n")
            try:
                ev = self.parse(line)
            except ValueError:
                with self._cond:
                    self.noise.append(line)
                continue
            ev["_received"] = time.monotonic()
            with self._cond:
                self.events.append(ev)
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def _read_stderr(self) -> None:
        for raw in iter(self.proc.stderr.readline, b""):
            self._stderr_log.write(raw)
            self._stderr_log.flush()
            with self._cond:
                self.stderr_lines.append(raw.decode("utf-8", "replace").rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    # ---- waiting -------------------------------------------------------

    def _wait(self, check: Callable[[], object], timeout: float, what: str):
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                got = check()
                if got is not None:
                    return got
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{self.name}: timed out after {timeout}s waiting for "
                                         f"{what}\n{self.diagnostics()}")
                if self.proc.poll() is not None and not any(t.is_alive() for t in self._threads):
                    got = check()
                    if got is not None:
                        return got
                    raise AssertionError(f"{self.name}: exited (rc={self.proc.returncode}) "
                                         f"while waiting for {what}\n{self.diagnostics()}")
                self._cond.wait(min(left, 0.5))

    def wait_for(self, pred: Callable[[dict], bool], timeout: float = 60,
                 what: str = "an event", since: int = 0) -> dict:
        """First event (index >= since) matching pred, waiting up to timeout."""
        def check():
            for ev in self.events[since:]:
                if pred(ev):
                    return ev
            return None
        return self._wait(check, timeout, what)

    def wait_tag(self, tag: str, timeout: float = 60, since: int = 0) -> dict:
        return self.wait_for(lambda e: e["tag"] == tag, timeout, f"tag {tag!r}", since)

    def wait_stderr(self, pattern: str, timeout: float = 60, since: int = 0) -> re.Match:
        rx = re.compile(pattern)

        def check():
            for line in self.stderr_lines[since:]:
                m = rx.search(line)
                if m:
                    return m
            return None
        return self._wait(check, timeout, f"stderr matching /{pattern}/")

    def until_seen(self, send: Callable[[], str], see: Callable[[str], object], timeout: float) -> None:
        """Sends a probe (send() returns what to look for) and looks for it (see() raises
        AssertionError when it does not show); again while the watcher runs and `timeout` lasts."""
        deadline = time.monotonic() + timeout
        while True:
            probe = send()
            try:
                see(probe)
                return
            except AssertionError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise

    def sync(self, lab: SaltLab, timeout: float = 60) -> None:
        """Return once the watcher demonstrably receives events: fire a unique
        event with Salt's own client until it shows up."""
        def fire() -> str:
            tag = f"saltlab/sync/{uuid.uuid4().hex}"
            lab.fire_event(tag, {"sync": True})
            return tag

        self.until_seen(fire, lambda tag: self.wait_tag(tag, timeout=3), timeout)

    def tags(self) -> list[str]:
        with self._cond:
            return [e["tag"] for e in self.events]

    def diagnostics(self, n: int = 40) -> str:
        tags = [e["tag"] for e in self.events[-n:]]
        return (f"  argv: {' '.join(self.argv)}\n  pid={self.proc.pid} rc={self.proc.poll()}\n"
                f"  {len(self.events)} events, last tags: {tags}\n"
                f"  unparsed stdout (last 10): {self.noise[-10:]}\n"
                f"  stderr (last 60 lines):\n    " + "\n    ".join(self.stderr_lines[-60:]))

    def stop(self) -> None:
        stop_process_group(self.proc, term_timeout=5)
        for t in self._threads:
            t.join(timeout=5)
        self._stdout_log.close()
        self._stderr_log.close()

    def __enter__(self) -> "EventWatcher":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


# --------------------------------------------------------------------------

def main(argv: list[str]) -> int:
    import argparse
    ap = argparse.ArgumentParser(description="start a Salt lab and keep it running")
    ap.add_argument("version")
    ap.add_argument("--watch", action="store_true", help="print bus events (salt-run state.event)")
    a = ap.parse_args(argv)
    ensure_salt(a.version)
    lab = SaltLab(a.version, reactors=SALTTAP_ALERT_REACTOR)
    try:
        t0 = time.monotonic()
        lab.start()
        print(f"up in {time.monotonic() - t0:.1f}s; pub framing: {lab.probe_pub_framing()}")
        print(lab.describe(), flush=True)
        if a.watch:
            with lab.salt_event_watcher() as w:
                n = 0
                while True:
                    time.sleep(0.5)
                    for ev in w.events[n:]:
                        print(ev["tag"], json.dumps(ev["data"])[:300], flush=True)
                    n = len(w.events)
        else:
            signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        lab.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
