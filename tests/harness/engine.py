#!/usr/bin/env python3
"""Start and stop a real single-node OpenSearch 2.19 / OpenSearch 3.x / Elasticsearch 7.17 for tests.

The engines run from Maven Central jars through a tiny launcher (tests/engines/<flavor>/),
which builds an ``org.*.node.Node`` directly: no Docker, no distribution tarball, fine as
root. Everything is bound to 127.0.0.1.

CLI::

    python3 tests/harness/engine.py build [--flavor opensearch|opensearch3|elasticsearch|all]
    python3 tests/harness/engine.py start --flavor opensearch --dir DIR [--port N]
    python3 tests/harness/engine.py stop --dir DIR
    python3 tests/harness/engine.py status --dir DIR

``start`` prints ``URL PID`` once ``GET /`` answers; the JVM keeps running in its own
process group. ``stop`` sends SIGTERM to that group, then SIGKILL after a grace period.

Library (pytest fixtures)::

    from engine import Engine
    with Engine("opensearch", tmp_path / "os") as eng:
        urllib.request.urlopen(eng.url + "/")

Layout of DIR: ``home/`` ``data/`` ``logs/engine.log`` ``tmp/`` ``engine.out`` (JVM
stdout/stderr) ``port`` (bound HTTP port) ``pid``.

Build cache: ``.cache/engines/<flavor>/build`` (launcher jar + ``lib/``, and after the first
run ``classes.jsa``, a class-data-sharing archive that speeds up later starts), Maven repository
``.cache/engines/m2``. The first build needs Maven Central; later builds run offline.
Java: each flavor names the oldest Java it runs on; the first JDK found that is new enough
is used, in this order: ``$SALTTAP_JAVA``, ``$JAVA_HOME``, ``java`` on the PATH, then every JDK
under /usr/lib/jvm, newest first. OpenSearch 3 needs Java 21 (Debian 12's JDK is 17), so it
runs on a newer JDK there, and Maven builds its launcher with that JDK too.

Only the Python standard library is used.
"""
from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import threading
import urllib.error
import urllib.request
from pathlib import Path

from http_calls import free_ports  # the harness's one way to pick free ports

ROOT = Path(__file__).resolve().parents[2]
LAUNCHERS = ROOT / "tests" / "engines"  # the Maven projects of the launchers, one per flavor
CACHE = ROOT / ".cache" / "engines"
M2 = CACHE / "m2"

# product: what answers GET / (the tests' expectations follow the product, not the release).
FLAVORS = {
    "opensearch": {
        "main": "salttap.engines.OpenSearchLauncher",
        "jar": "engine-opensearch-1.jar",
        "props": ["-Dopensearch.set.netty.runtime.available.processors=false"],
        "version_prefix": "2.19.",
        "product": "opensearch",
        "java": 17,
    },
    "opensearch3": {
        "main": "salttap.engines.OpenSearch3Launcher",
        "jar": "engine-opensearch3-1.jar",
        # Lucene 10 maps its files through the foreign-memory API: allowed, not warned about.
        "props": ["-Dopensearch.set.netty.runtime.available.processors=false", "--enable-native-access=ALL-UNNAMED"],
        "version_prefix": "3.9.",
        "product": "opensearch",
        "java": 21,
    },
    "elasticsearch": {
        "main": "salttap.engines.ElasticsearchLauncher",
        "jar": "engine-elasticsearch-1.jar",
        "props": ["-Des.set.netty.runtime.available.processors=false"],
        "version_prefix": "7.17.",
        "product": "elasticsearch",
        "java": 17,
    },
}
# The flavors every suite runs on; OpenSearch 3 runs in the suites that name it (docs/testing.md).
BASE_FLAVORS = ("opensearch", "elasticsearch")


def suite_flavors(*flavors: str) -> list[str]:
    """The flavors a test module runs on: those it names (default BASE_FLAVORS), or, when
    $SALTTAP_ENGINE_FLAVORS is set (comma-separated, e.g. "opensearch3"), those for every module."""
    chosen = os.environ.get("SALTTAP_ENGINE_FLAVORS", "").strip()
    names = [f.strip() for f in chosen.split(",") if f.strip()] if chosen else list(flavors or BASE_FLAVORS)
    unknown = [f for f in names if f not in FLAVORS]
    if unknown:
        raise EngineError(f"unknown flavor(s) {', '.join(unknown)}; choose from {', '.join(FLAVORS)}")
    return names

START_TIMEOUT = 120.0
STOP_GRACE = 30.0
CDS_DUMP_GRACE = 180.0


class EngineError(RuntimeError):
    pass


def _java_major(java: str) -> int:
    """The feature release of a java binary: from its JDK's `release` file, else `java -version`."""
    home = Path(os.path.realpath(java)).parent.parent
    try:
        for line in (home / "release").read_text().splitlines():
            if line.startswith("JAVA_VERSION="):
                return int(line.split("=", 1)[1].strip('"').split(".")[0])
    except (OSError, ValueError):
        pass
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
        version = out.split('"')[1]  # openjdk version "17.0.15" 2025-04-15
        return int(version.split(".")[0])
    except (OSError, IndexError, ValueError, subprocess.SubprocessError):
        return 0


def _java_candidates() -> list[str]:
    found = []
    if os.environ.get("SALTTAP_JAVA"):
        found.append(os.environ["SALTTAP_JAVA"])
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        found.append(str(Path(home) / "bin" / "java"))
    if shutil.which("java"):
        found.append(shutil.which("java"))
    jvms = [p / "bin" / "java" for p in Path("/usr/lib/jvm").glob("*") if (p / "bin" / "java").exists()]
    found += sorted((str(j) for j in jvms), key=lambda j: -_java_major(j))
    return found


def _java(minimum: int = 17) -> str:
    """The first java (see the module doc) of release `minimum` or newer."""
    for java in _java_candidates():
        if _java_major(java) >= minimum:
            return java
    raise EngineError(f"no Java {minimum} or newer found (tests/engines/install.sh; OpenSearch 3 needs Java 21: "
                      f"set SALTTAP_JAVA or JAVA_HOME to one)")


def java_for(flavor: str) -> str:
    return _java(FLAVORS[flavor]["java"])


# The launchers' shared code and resources, compiled into every flavor's build (each pom adds it).
COMMON = LAUNCHERS / "launcher-common"


def _source_digest(flavor: str) -> str:
    """Hash of everything that goes into a flavor's build (pom + sources, the shared ones too)."""
    h = hashlib.sha256()
    src = LAUNCHERS / flavor
    for p in sorted([src / "pom.xml", *(src / "src").rglob("*"), *(COMMON / "src").rglob("*")]):
        if p.is_file():
            h.update(str(p.relative_to(LAUNCHERS)).encode() + b"\0")
            h.update(p.read_bytes() + b"\0")
    return h.hexdigest()


def build_root() -> Path:
    """Where launchers are built: $SALTTAP_ENGINE_BUILD_ROOT (a checkout whose launcher sources
    differ from the shared cache's can build beside it), else .cache/engines. The Maven
    repository stays .cache/engines/m2 either way."""
    root = os.environ.get("SALTTAP_ENGINE_BUILD_ROOT", "").strip()
    return Path(root).resolve() if root else CACHE


def build_dir(flavor: str) -> Path:
    return build_root() / flavor / "build"


def build(flavor: str, quiet: bool = False) -> Path:
    """Build (once) the launcher jar and its dependency dir; returns the build dir.

    Cached by a digest of the flavor's pom.xml and sources and of launcher-common/; a file lock keeps
    concurrent callers from building at the same time. Tries Maven offline first.
    """
    if flavor not in FLAVORS:
        raise EngineError(f"unknown flavor {flavor!r}; choose from {', '.join(FLAVORS)}")
    out = build_dir(flavor)
    root = build_root()
    stamp = root / flavor / "build.stamp"
    digest = _source_digest(flavor)
    root.mkdir(parents=True, exist_ok=True)
    M2.parent.mkdir(parents=True, exist_ok=True)
    with open(root / f"{flavor}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (stamp.exists() and stamp.read_text().strip() == digest
                and (out / FLAVORS[flavor]["jar"]).exists() and (out / "lib").is_dir()):
            return out
        mvn = shutil.which("mvn")
        if not mvn:
            raise EngineError("mvn not found (install maven: tests/engines/install.sh)")
        if not quiet:
            print(f"engine: building the {flavor} launcher (Maven)", file=sys.stderr)
        shutil.rmtree(out, ignore_errors=True)
        stamp.unlink(missing_ok=True)
        # Maven compiles with the JDK the flavor runs on (OpenSearch 3's jars are Java 21 classes).
        env = dict(os.environ, JAVA_HOME=str(Path(os.path.realpath(java_for(flavor))).parent.parent))
        base = [mvn, "-B", "-q", f"-Dmaven.repo.local={M2}", "-f", str(LAUNCHERS / flavor / "pom.xml"),
                f"-Dengine.buildDir={out}", "package"]
        log = root / f"{flavor}-build.log"
        res = None
        attempts = [base[:1] + ["-o"] + base[1:], base] if M2.exists() else [base]
        for cmd in attempts:
            with open(log, "w") as fh:
                res = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
            if res.returncode == 0:
                break
        if res is None or res.returncode != 0:
            tail = log.read_text(errors="replace")[-3000:]
            raise EngineError(f"building the {flavor} launcher failed; {log}:\n{tail}")
        stamp.write_text(digest + "\n")
        return out


def classpath(flavor: str) -> str:
    out = build_dir(flavor)
    return f"{out / FLAVORS[flavor]['jar']}{os.pathsep}{out / 'lib' / '*'}"


# ---------------------------------------------------------------- process helpers

def _alive(pid: int) -> bool:
    """True while pid exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def _is_our_engine(pid: int, directory: Path) -> bool:
    """Guard against PID reuse: the process must be our launcher for this dir."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return (any(a.startswith(b"salttap.engines.") for a in args)
            and str(directory).encode() in args)


def _get_json(url: str, timeout: float = 2.0) -> dict:
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return json.loads(resp.read())


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _tail(path: Path, limit: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-limit:]
    except OSError:
        return ""


def _read_pid(directory: Path) -> int | None:
    try:
        return int((directory / "pid").read_text().strip())
    except (OSError, ValueError):
        return None


def stop_dir(directory: Path | str, grace: float = STOP_GRACE, proc: subprocess.Popen | None = None) -> bool:
    """Stop the engine recorded in DIR/pid (SIGTERM to its process group, then SIGKILL).

    Returns True if an engine was running."""
    directory = Path(directory).resolve()
    if (directory / "cds-dump").exists():
        grace = max(grace, CDS_DUMP_GRACE)  # the JVM writes its class archive after SIGTERM
    pid = proc.pid if proc is not None else _read_pid(directory)
    was_running = False
    if pid is not None and _alive(pid) and (proc is not None or _is_our_engine(pid, directory)):
        was_running = True
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
            try:
                os.killpg(pid, sig)  # the launcher leads its own process group
            except ProcessLookupError:
                break
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                if proc is not None:
                    if proc.poll() is not None:
                        break
                elif not _alive(pid):
                    break
                time.sleep(0.1)
            else:
                continue
            break
    if proc is not None:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    _keep_class_archive(directory)
    for name in ("pid", "port"):
        (directory / name).unlink(missing_ok=True)
    return was_running


def _keep_class_archive(directory: Path) -> None:
    """After a run that dumped a class-data archive (see Engine._class_data_sharing),
    move the archive into place for later starts."""
    marker = directory / "cds-dump"
    try:
        dump = Path(marker.read_text().strip())
    except OSError:
        return
    marker.unlink(missing_ok=True)
    try:
        if dump.exists() and dump.stat().st_size > 0:
            os.replace(dump, dump.with_name("classes.jsa"))
        else:
            dump.unlink(missing_ok=True)
    except OSError:
        pass


# ---------------------------------------------------------------- the engine

class Engine:
    """One engine node. ``start()`` blocks until ``GET /`` answers; ``stop()`` is idempotent."""

    def __init__(self, flavor: str, directory: Path | str, port: int = 0,
                 heap: str = "1g", timeout: float = START_TIMEOUT):
        if flavor not in FLAVORS:
            raise EngineError(f"unknown flavor {flavor!r}; choose from {', '.join(FLAVORS)}")
        self.flavor = flavor
        self.dir = Path(directory).resolve()
        self.requested_port = port
        self.heap = heap
        self.timeout = timeout
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None
        self.info: dict | None = None  # the GET / body
        self.product: str = FLAVORS[flavor]["product"]  # opensearch or elasticsearch

    @property
    def url(self) -> str:
        if self.port is None:
            raise EngineError("engine not started")
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def _class_data_sharing(self) -> list[str]:
        """AppCDS: the first run of a build dumps its loaded classes at exit; later runs
        map that archive and start ~1-2 s faster. A rebuild deletes the archive."""
        archive = build_dir(self.flavor) / "classes.jsa"
        if archive.exists():
            return [f"-XX:SharedArchiveFile={archive}", "-Xlog:cds=off,cds+dynamic=off"]
        dump = archive.with_name(f"classes-{os.getpid()}-{time.monotonic_ns()}.jsa.tmp")
        (self.dir / "cds-dump").write_text(f"{dump}\n")
        return [f"-XX:ArchiveClassesAtExit={dump}", "-Xlog:cds=off,cds+dynamic=off"]

    def command(self) -> list[str]:
        spec = FLAVORS[self.flavor]
        return [
            java_for(self.flavor), "-Xms256m", f"-Xmx{self.heap}", "-XX:+UseSerialGC", *self._class_data_sharing(),
            "-Xss1m", "-Djava.awt.headless=true", "-Dfile.encoding=UTF-8",
            f"-Djava.io.tmpdir={self.dir / 'tmp'}", f"-Dengine.logs={self.dir / 'logs'}",
            *spec["props"],
            "-cp", classpath(self.flavor), spec["main"], str(self.dir), str(self.requested_port),
        ]

    def start(self) -> "Engine":
        old = _read_pid(self.dir)
        if old is not None and _alive(old) and _is_our_engine(old, self.dir):
            raise EngineError(f"an engine already runs for {self.dir} (pid {old}); stop it first")
        build(self.flavor)
        for sub in ("logs", "tmp"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        for name in ("port", "cds-dump"):
            (self.dir / name).unlink(missing_ok=True)
        out = open(self.dir / "engine.out", "ab")
        try:
            self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True,
                                         cwd=self.dir)
        finally:
            out.close()
        (self.dir / "pid").write_text(f"{self.proc.pid}\n")
        try:
            self._wait_ready()
        except BaseException:
            marker = self.dir / "cds-dump"  # keep no class archive from a failed run
            dump = Path(marker.read_text().strip()) if marker.exists() else None
            marker.unlink(missing_ok=True)
            stop_dir(self.dir, grace=5.0, proc=self.proc)
            if dump is not None:
                dump.unlink(missing_ok=True)
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.timeout
        port_file = self.dir / "port"
        last_err = "no port file yet"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise EngineError(
                    f"{self.flavor} exited with {self.proc.returncode} during start-up\n"
                    f"--- {self.dir / 'engine.out'}\n{_tail(self.dir / 'engine.out')}\n"
                    f"--- {self.dir / 'logs' / 'engine.log'}\n{_tail(self.dir / 'logs' / 'engine.log')}")
            if port_file.exists() and (self.port is None or self.requested_port == 0):
                text = port_file.read_text().strip()
                if text:
                    self.port = int(text)
            if self.port is not None:
                try:
                    info = _get_json(f"http://127.0.0.1:{self.port}/")
                    if "version" in info:
                        self.info = info
                        return
                except (OSError, ValueError) as e:  # URLError is an OSError
                    last_err = str(e)
            time.sleep(0.2)
        raise EngineError(f"{self.flavor} did not answer GET / within {self.timeout:.0f}s ({last_err})\n"
                          f"{_tail(self.dir / 'engine.out')}")

    def stop(self) -> None:
        if self.proc is not None:
            stop_dir(self.dir, proc=self.proc)
            self.proc = None

    def kill(self) -> None:
        """SIGKILL the node's process group (a crash: no clean close) and reap it; the data
        dir stays as the crash left it, for a later start() on the same dir and port."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)
        self.proc = None
        marker = self.dir / "cds-dump"  # a killed JVM writes no class archive
        try:
            Path(marker.read_text().strip()).unlink(missing_ok=True)
        except OSError:
            pass
        for name in ("pid", "port", "cds-dump"):
            (self.dir / name).unlink(missing_ok=True)

    def __enter__(self) -> "Engine":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# ---------------------------------------------------------------- a several-node cluster

class Cluster:
    """A cluster of `size` nodes on 127.0.0.1, each its own JVM (own process group, data dir,
    HTTP and transport ports), so a test can kill -9 one and start it again on the same dir
    and ports. Node i lives in DIR/node-i; its DIR/node-i/node.properties turns the
    launcher's one-node defaults into a member of this cluster (EngineLauncher)."""

    def __init__(self, flavor: str, directory: Path | str, size: int = 3, heap: str = "384m",
                 timeout: float = START_TIMEOUT):
        if flavor not in FLAVORS:
            raise EngineError(f"unknown flavor {flavor!r}; choose from {', '.join(FLAVORS)}")
        self.flavor = flavor
        self.dir = Path(directory).resolve()
        self.size = size
        self.name = f"salttap-cluster-{os.getpid()}-{time.monotonic_ns() % 1000000}"
        ports = free_ports(2 * size)
        self.http_ports, self.transport_ports = ports[:size], ports[size:]
        self.node_names = [f"node-{i + 1}" for i in range(size)]
        self.nodes = [Engine(flavor, self.dir / name, port=port, heap=heap, timeout=timeout)
                      for name, port in zip(self.node_names, self.http_ports)]
        # OpenSearch 2.x names the bootstrap setting for cluster managers; Elasticsearch 7 for masters.
        self._bootstrap_key = ("cluster.initial_master_nodes" if FLAVORS[flavor]["product"] == "elasticsearch"
                               else "cluster.initial_cluster_manager_nodes")

    @property
    def urls(self) -> list[str]:
        return [f"http://127.0.0.1:{p}" for p in self.http_ports]

    def _write_properties(self, i: int) -> None:
        node = self.nodes[i]
        node.dir.mkdir(parents=True, exist_ok=True)
        seeds = ",".join(f"127.0.0.1:{p}" for p in self.transport_ports)
        lines = {
            "cluster.name": self.name,
            "node.name": self.node_names[i],
            "discovery.type": "",  # removes the launcher's single-node default
            "transport.port": str(self.transport_ports[i]),
            "discovery.seed_hosts": seeds,
            self._bootstrap_key: ",".join(self.node_names),
        }
        (node.dir / "node.properties").write_text("".join(f"{k}={v}\n" for k, v in lines.items()))

    def start(self, wait_nodes: bool = True) -> "Cluster":
        build(self.flavor)
        for i in range(self.size):
            self._write_properties(i)
        errors: list[BaseException] = []

        def start_one(node: Engine) -> None:
            try:
                node.start()
            except BaseException as e:  # noqa: BLE001 (reported below)
                errors.append(e)

        threads = [threading.Thread(target=start_one, args=(n,)) for n in self.nodes]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            self.stop()
            raise errors[0]
        if wait_nodes:
            self.wait_health(nodes=self.size)
        return self

    def start_node(self, i: int) -> Engine:
        """Start node i again (same dir, same ports) after kill() or stop_node()."""
        self._write_properties(i)
        return self.nodes[i].start()

    def kill(self, i: int) -> None:
        self.nodes[i].kill()

    def stop_node(self, i: int) -> None:
        self.nodes[i].stop()

    def running(self) -> list[int]:
        return [i for i, n in enumerate(self.nodes) if n.proc is not None and n.proc.poll() is None]

    def get(self, path: str, timeout: float = 5.0, node: int | None = None) -> dict:
        """GET from the given node, else the first running node that answers."""
        order = [node] if node is not None else self.running()
        last: Exception | None = None
        for i in order:
            try:
                return _get_json(self.urls[i] + path, timeout=timeout)
            except urllib.error.HTTPError as e:
                try:
                    return json.loads(e.read())
                except ValueError:
                    last = e
            except (OSError, ValueError) as e:
                last = e
        raise EngineError(f"no node answered GET {path}: {last}")

    def health(self, node: int | None = None) -> dict:
        return self.get("/_cluster/health?timeout=1s", node=node)

    def wait_health(self, status: str | None = None, nodes: int | None = None, timeout: float = 90.0,
                    node: int | None = None) -> dict:
        """Poll _cluster/health until it reports `status` (green/yellow/red or better) and `nodes` nodes."""
        rank = {"red": 0, "yellow": 1, "green": 2}
        deadline = time.monotonic() + timeout
        last: object = None
        while time.monotonic() < deadline:
            try:
                h = self.health(node=node)
                last = h
                ok = "status" in h and "error" not in h
                if ok and status is not None:
                    ok = rank.get(h["status"], -1) >= rank[status]
                if ok and nodes is not None:
                    ok = h.get("number_of_nodes") == nodes
                if ok:
                    return h
            except EngineError as e:
                last = str(e)
            time.sleep(0.3)
        raise EngineError(f"cluster health not {status or 'any'} with {nodes} nodes within {timeout:.0f}s: {last}")

    def stop(self) -> None:
        for n in self.nodes:
            n.stop()

    def __enter__(self) -> "Cluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# ---------------------------------------------------------------- CLI

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="fetch dependencies and build the launcher(s)")
    b.add_argument("--flavor", default="all", choices=[*FLAVORS, "all"])
    b.add_argument("--quiet", action="store_true")
    s = sub.add_parser("start", help="start an engine and wait until it answers")
    s.add_argument("--flavor", required=True, choices=list(FLAVORS))
    s.add_argument("--dir", required=True)
    s.add_argument("--port", type=int, default=0, help="HTTP port (0 = any free port)")
    s.add_argument("--heap", default="1g")
    s.add_argument("--timeout", type=float, default=START_TIMEOUT)
    t = sub.add_parser("stop", help="stop the engine started with --dir DIR")
    t.add_argument("--dir", required=True)
    st = sub.add_parser("status", help="print URL PID if the engine for DIR runs")
    st.add_argument("--dir", required=True)
    a = ap.parse_args(argv)
    try:
        if a.cmd == "build":
            for f in (FLAVORS if a.flavor == "all" else [a.flavor]):
                build(f, quiet=a.quiet)
            return 0
        if a.cmd == "start":
            eng = Engine(a.flavor, a.dir, port=a.port, heap=a.heap, timeout=a.timeout).start()
            print(f"{eng.url} {eng.pid}")
            return 0
        if a.cmd == "stop":
            if not stop_dir(a.dir):
                print(f"engine: nothing running for {a.dir}", file=sys.stderr)
            return 0
        if a.cmd == "status":
            d = Path(a.dir).resolve()
            pid = _read_pid(d)
            try:
                port = int((d / "port").read_text().strip())
            except (OSError, ValueError):
                port = None
            if pid and _alive(pid) and _is_our_engine(pid, d) and port and _port_open(port):
                print(f"http://127.0.0.1:{port} {pid}")
                return 0
            print(f"engine: not running for {a.dir}", file=sys.stderr)
            return 1
    except EngineError as e:
        print(f"engine: {e}", file=sys.stderr)
        return 1
    return 2


if __name__ == "__main__":
    sys.exit(main())
