"""The Debian package (scripts/package), as a user gets it:

  - it builds, and `dpkg-deb` shows the files, the conffile, the maintainer
    scripts and a Depends computed by dpkg-shlibdeps;
  - lintian reports no errors (the warnings it keeps are listed in
    docs/install.md);
  - installed into a fresh Debian 12 root (debootstrap, then chroot):
    `dpkg -i` and `apt-get -f install` pull in the libraries, the postinst
    creates the system user salttap, and `salttap --version` and
    `salttap check-config /etc/salttap/salttap.yaml` work there.

Run by `scripts/test package` (not part of the default stages: the
debootstrap alone downloads Debian 12's minimal base). Needs root, network
access to the Debian archive, lintian and debootstrap.

Environment:
  SALTTAP_DEB             use this .deb instead of running scripts/package
  SALTTAP_DEBIAN_MIRROR   Debian archive for debootstrap (default https://deb.debian.org/debian)
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "build" / "package"
MIRROR = os.environ.get("SALTTAP_DEBIAN_MIRROR", "https://deb.debian.org/debian")


def run(*cmd: str | Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def project_version() -> str:
    m = re.search(r"project\(salttap VERSION (\d+\.\d+\.\d+)", (ROOT / "CMakeLists.txt").read_text())
    assert m, "no project(VERSION) in CMakeLists.txt"
    return m.group(1)


@pytest.fixture(scope="module")
def deb() -> Path:
    if os.environ.get("SALTTAP_DEB"):
        return Path(os.environ["SALTTAP_DEB"])
    built = run(ROOT / "scripts" / "package", cwd=ROOT, timeout=3600)
    assert built.returncode == 0, built.stdout + built.stderr
    path = Path(built.stdout.strip().splitlines()[-1])
    assert path == WORK / f"salttap_{project_version()}_amd64.deb"
    return path


def test_the_package_holds_the_binary_the_unit_the_config_and_the_shared_files(deb: Path):
    listing = run("dpkg-deb", "-c", deb)
    assert listing.returncode == 0, listing.stderr
    files = {line.split()[-1].lstrip(".") for line in listing.stdout.splitlines()}
    for path in [
        "/usr/bin/salttap",
        "/lib/systemd/system/salttap.service",
        "/etc/salttap/salttap.yaml",
        "/usr/share/salttap/mappings/jobs.json",
        "/usr/share/salttap/mappings/ism-policy.json",
        "/usr/share/salttap/dashboards/kibana/salttap.ndjson",
        "/usr/share/salttap/dashboards/opensearch-dashboards/salttap.ndjson",
        "/usr/share/salttap/alerting/watcher-watch.json",
        "/usr/share/salttap/salt/reactor/salttap_rerun.sls",
        "/usr/share/salttap/salt/formula/salttap/init.sls",
        "/usr/share/salttap/salt/formula/salttap/map.jinja",
        "/usr/share/salttap/salt/formula/salttap/defaults.yaml",
        "/usr/share/salttap/salt/formula/salttap/files/salttap.yaml.jinja",
        "/usr/share/doc/salttap/copyright",
        "/usr/share/doc/salttap/changelog.gz",
        "/usr/share/doc/salttap/install.md",
        "/usr/share/man/man1/salttap.1.gz",
    ]:
        assert path in files, f"{path} not in the package:\n{listing.stdout}"
    assert (ROOT / "deploy/systemd/salttap.service").read_bytes() == run_bytes(
        "dpkg-deb", "--fsys-tarfile", deb, member="./lib/systemd/system/salttap.service")

    control = run("dpkg-deb", "-I", deb)
    assert control.returncode == 0, control.stderr
    for script in ("postinst", "prerm", "postrm", "conffiles"):
        assert re.search(rf"^\s+\d+ bytes,\s+\d+ lines\s+\*?\s*{script}\b", control.stdout, re.M), control.stdout
    fields = dict(re.findall(r"^ (\w[\w-]*): (.*)$", control.stdout, re.M))
    assert fields["Package"] == "salttap"
    assert fields["Version"] == project_version()
    assert fields["Architecture"] == "amd64"
    depends = fields["Depends"]
    for lib in ("libc6", "libzmq5", "libcurl4", "libyaml-cpp0.7", "libsystemd0", "adduser", "procps"):
        assert re.search(rf"\b{re.escape(lib)}\b", depends), f"{lib} not in Depends: {depends}"


def run_bytes(*cmd: str | Path, member: str) -> bytes:
    """One file out of the tar stream `cmd` writes."""
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        f = tar.extractfile(member)
        assert f is not None, member
        return f.read()


def test_the_conffile_is_the_example_config(deb: Path):
    control = subprocess.run(["dpkg-deb", "--ctrl-tarfile", str(deb)], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(control)) as tar:
        conffiles = tar.extractfile("./conffiles").read().decode()
    assert conffiles.split() == ["/etc/salttap/salttap.yaml"]
    assert run_bytes("dpkg-deb", "--fsys-tarfile", deb, member="./etc/salttap/salttap.yaml") == (
        ROOT / "deploy/salttap.yaml").read_bytes()


def test_lintian_reports_no_errors(deb: Path):
    assert shutil.which("lintian"), "lintian is not installed (scripts/test package installs it)"
    result = run("lintian", "--no-tag-display-limit", "--allow-root", deb)
    errors = [line for line in result.stdout.splitlines() if line.startswith("E:")]
    print(result.stdout)
    assert not errors, "\n".join(errors)


@pytest.fixture(scope="module")
def debian12_root(tmp_path_factory) -> Path:
    """A fresh Debian 12 (minbase) root: debootstrapped once into
    build/package/debian12-minbase.tar, unpacked anew for each run."""
    assert os.geteuid() == 0, "debootstrap and chroot need root"
    assert shutil.which("debootstrap"), "debootstrap is not installed (scripts/test package installs it)"
    tarball = WORK / "debian12-minbase.tar"
    if not tarball.exists():
        staging = WORK / "debian12-minbase"
        shutil.rmtree(staging, ignore_errors=True)
        boot = run("debootstrap", "--variant=minbase", "bookworm", staging, MIRROR, timeout=1800)
        assert boot.returncode == 0, boot.stdout[-3000:] + boot.stderr[-3000:]
        made = run("tar", "-C", staging, "-cf", f"{tarball}.tmp", ".")
        assert made.returncode == 0, made.stderr
        os.replace(f"{tarball}.tmp", tarball)
        shutil.rmtree(staging)
    root = tmp_path_factory.mktemp("debian12") / "root"
    root.mkdir()
    unpacked = run("tar", "-C", root, "-xf", tarball)
    assert unpacked.returncode == 0, unpacked.stderr
    shutil.copy("/etc/resolv.conf", root / "etc/resolv.conf")
    # apt in the new root fetches over HTTPS as debootstrap did: trust what the host trusts
    # (minbase has no ca-certificates; a proxy's own CA may be among the host's).
    host_cas = Path("/etc/ssl/certs/ca-certificates.crt")
    if host_cas.exists():
        (root / "etc/ssl/certs").mkdir(parents=True, exist_ok=True)
        shutil.copy(host_cas, root / "etc/ssl/certs/ca-certificates.crt")
    yield root
    shutil.rmtree(root, ignore_errors=True)


def chroot(root: Path, *cmd: str, timeout: int = 900) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive", "LANG": "C.UTF-8"}
    return subprocess.run(["chroot", str(root), *cmd], capture_output=True, text=True, env=env, timeout=timeout)


def test_installs_and_runs_in_a_fresh_debian_12(deb: Path, debian12_root: Path):
    root = debian12_root
    shutil.copy(deb, root / "tmp" / deb.name)
    # dpkg -i alone stops at the missing libraries; apt-get -f install brings them and configures salttap.
    chroot(root, "dpkg", "-i", f"/tmp/{deb.name}")
    update = chroot(root, "apt-get", "update", "-q")
    assert update.returncode == 0, update.stdout + update.stderr
    fix = chroot(root, "apt-get", "-f", "install", "-y", "-q")
    assert fix.returncode == 0, fix.stdout + fix.stderr
    status = chroot(root, "dpkg-query", "-W", "-f=${Status} ${Version}", "salttap")
    assert status.stdout == f"install ok installed {project_version()}", status.stdout + status.stderr

    version = chroot(root, "salttap", "--version")
    assert version.returncode == 0, version.stderr
    assert re.fullmatch(rf"salttap {re.escape(project_version())}(\+\S+)?\n", version.stdout), version.stdout

    check = chroot(root, "salttap", "check-config", "/etc/salttap/salttap.yaml")
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout == "/etc/salttap/salttap.yaml: ok\n"

    user = chroot(root, "getent", "passwd", "salttap")
    assert user.returncode == 0, "the postinst made no user salttap"
    name, _, uid, _, _, home, shell = user.stdout.strip().split(":")
    assert int(uid) < 1000, f"not a system user: {user.stdout}"
    assert home == "/var/lib/salttap"
    assert shell in ("/usr/sbin/nologin", "/bin/false"), shell
    assert (root / "lib/systemd/system/salttap.service").is_file()

    # A second configure (an upgrade in place) keeps the user and the edited conffile.
    conf = root / "etc/salttap/salttap.yaml"
    conf.write_text(conf.read_text() + "# edited here\n")
    again = chroot(root, "dpkg", "-i", f"/tmp/{deb.name}")
    assert again.returncode == 0, again.stdout + again.stderr
    assert conf.read_text().endswith("# edited here\n")

    removed = chroot(root, "dpkg", "--purge", "salttap")
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert not (root / "usr/bin/salttap").exists()
