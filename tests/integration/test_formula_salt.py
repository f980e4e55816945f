"""The Salt formula (deploy/salt/formula/salttap) applied by real Salt, masterless.

`salt-call --local` (the newest Salt under test), file_roots at deploy/salt/formula and
a pillar written by each test:

1. `state.apply salttap test=True` with a repository pillar plans the repository, the
   package from it, the config file and the service, with their requisites, and changes
   nothing;
2. with a .deb in the pillar (a small package built here) it plans the package from
   that file, and no repository;
3. a real apply of the config part (package and service off, the config file in a
   temporary directory, the check run by the salttap under test): the file is written
   from the pillar and salttap reads it; applied again, nothing changes; a config
   salttap refuses leaves the old file in place and fails the state.

What is not run here: installing the package and running the service (root on a
real system, apt, systemd); the plan in 1 and 2 is Salt's own answer for them.

Run:  SALTTAP_BIN=$PWD/build/dev/salttap .cache/venv/tools/bin/python -m pytest \
          tests/integration/test_formula_salt.py -v
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import subprocess
from pathlib import Path

import pytest

import saltlab
from salt_suite import NEWEST

FORMULA_ROOT = saltlab.REPO_ROOT / "deploy" / "salt" / "formula"
IDS = {"salttap-repo", "salttap-package", "salttap-config", "salttap-service"}


class Masterless:
    """salt-call --local with its own root, file_roots at the formula, a pillar of ours."""

    def __init__(self, base: Path):
        if not saltlab.venv_ok(NEWEST):
            pytest.fail(f"salt {NEWEST}: no working venv at {saltlab.venv_dir(NEWEST)}", pytrace=False)
        self.bin = saltlab.venv_dir(NEWEST) / "bin"
        self.base = base
        self.conf = base / "conf"
        self.pillar = base / "pillar"
        root = base / "root"
        for d in (self.conf, self.pillar, root):
            d.mkdir(parents=True, exist_ok=True)
        opts = {
            "id": "formula-test",
            "file_client": "local",
            "root_dir": str(root),
            "cachedir": str(root / "c"),
            "pki_dir": str(root / "pki"),
            "sock_dir": str(root / "s"),
            "log_file": str(root / "log" / "minion.log"),
            "file_roots": {"base": [str(FORMULA_ROOT)]},
            "pillar_roots": {"base": [str(self.pillar)]},
            "enable_fqdns_grains": False,
            "enable_gpu_grains": False,
        }
        (self.conf / "minion").write_text("\n".join(f"{k}: {json.dumps(v)}" for k, v in opts.items()) + "\n")
        (self.pillar / "top.sls").write_text("base:\n  '*':\n    - salttap\n")
        self.env = dict(os.environ)
        self.env["PATH"] = f"{self.bin}:{self.env.get('PATH', '/usr/bin:/bin')}"
        self.env.pop("PYTHONPATH", None)
        self.env.pop("VIRTUAL_ENV", None)

    def apply(self, pillar: dict, test: bool) -> tuple[int, dict]:
        """state.apply salttap; (exit code, {state ID: its result})."""
        (self.pillar / "salttap.sls").write_text(json.dumps({"salttap": pillar}))
        argv = [str(self.bin / "salt-call"), "--local", "-c", str(self.conf), "--out=json",
                "--retcode-passthrough", "-l", "warning", "state.apply", "salttap"]
        if test:
            argv.append("test=True")
        r = subprocess.run(argv, capture_output=True, text=True, env=self.env, timeout=300,
                           stdin=subprocess.DEVNULL)
        try:
            out = json.loads(r.stdout)["local"]
        except (ValueError, KeyError) as e:
            raise AssertionError(f"salt-call: not a state result (rc={r.returncode}):\n"
                                 f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}") from e
        assert isinstance(out, dict), f"salt-call did not run states: {out}\n{r.stderr[-3000:]}"
        return r.returncode, {s["__id__"]: s for s in out.values()}


@pytest.fixture
def salt_local(tmp_path) -> Masterless:
    return Masterless(tmp_path / "salt")


def config_pillar(tmp_path: Path) -> dict:
    return {"master_id": "salt-01", "alerts": {"fire_event": True, "min_risk": "high"},
            "correlator": {"missing_after_seconds": 120}}


def test_plan_from_a_repository(salt_local, tmp_path):
    rc, states = salt_local.apply({
        "repo": {"name": "deb [signed-by=/usr/share/keyrings/salttap.gpg] https://apt.example/salttap bookworm main",
                 "file": str(tmp_path / "salttap.list")},
        "package": {"version": "0.9.0"},
        "config_file": str(tmp_path / "etc" / "salttap.yaml"),
        "config": config_pillar(tmp_path),
    }, test=True)
    assert set(states) == IDS, sorted(states)
    repo, pkg, conf, svc = (states[i] for i in ("salttap-repo", "salttap-package", "salttap-config",
                                                 "salttap-service"))
    assert repo["result"] is None and repo["name"].endswith("bookworm main"), repo
    assert pkg["name"] == "salttap" and pkg["result"] is not False, pkg
    # the config waits for the package, the service for the config
    assert conf["__run_num__"] > pkg["__run_num__"] > repo["__run_num__"], (repo, pkg, conf)
    assert svc["__run_num__"] > conf["__run_num__"], (conf, svc)
    assert conf["name"] == str(tmp_path / "etc" / "salttap.yaml"), conf
    assert conf["result"] is not False, conf
    assert svc["name"] == "salttap" and svc["result"] is not False, svc
    assert not (tmp_path / "etc").exists() and not (tmp_path / "salttap.list").exists(), \
        "test=True changed something"


def test_plan_from_a_deb(salt_local, tmp_path):
    deb = build_deb(tmp_path)
    rc, states = salt_local.apply({
        "package": {"source": str(deb)},
        "config_file": str(tmp_path / "etc" / "salttap.yaml"),
        "config": config_pillar(tmp_path),
    }, test=True)
    assert set(states) == IDS - {"salttap-repo"}, sorted(states)
    pkg = states["salttap-package"]
    assert pkg["result"] is None, pkg
    assert "salttap" in pkg["comment"] and "would be installed" in pkg["comment"], pkg
    assert states["salttap-config"]["result"] is None, states["salttap-config"]
    assert not (tmp_path / "etc").exists(), "test=True changed something"


def test_the_config_part_applies_for_real(salt_local, tmp_path, salttap_bin):
    conf_file = tmp_path / "etc" / "salttap" / "salttap.yaml"
    user, group = pwd.getpwuid(os.getuid()).pw_name, grp.getgrgid(os.getgid()).gr_name
    pillar = {
        "package": {"manage": False},
        "service": {"manage": False},
        "config_file": str(conf_file),
        "config_user": user,
        "config_group": group,
        "check_cmd": f"{salttap_bin} check-config",
        "config": config_pillar(tmp_path),
    }
    rc, states = salt_local.apply(pillar, test=False)
    assert set(states) == {"salttap-config"}, sorted(states)
    conf = states["salttap-config"]
    assert rc == 0 and conf["result"] is True and conf["changes"].get("diff") == "New file", conf
    assert oct(conf_file.stat().st_mode & 0o777) == "0o640"
    text = conf_file.read_text()
    assert text.startswith("# Managed by Salt"), text
    assert "master_id: salt-01" in text and "fire_event: true" in text, text
    check = subprocess.run([str(salttap_bin), "check-config", str(conf_file)], capture_output=True, text=True)
    assert check.returncode == 0 and check.stdout == f"{conf_file}: ok\n", check.stdout + check.stderr

    rc, states = salt_local.apply(pillar, test=False)
    assert rc == 0 and states["salttap-config"]["result"] is True, states
    assert states["salttap-config"]["changes"] == {}, states["salttap-config"]

    # a key salttap does not know: refused by the check, the old file stays
    bad = {**pillar, "config": {**config_pillar(tmp_path), "no_such_key": 1}}
    rc, states = salt_local.apply(bad, test=False)
    conf = states["salttap-config"]
    assert rc != 0 and conf["result"] is False, conf
    assert "no_such_key" not in conf_file.read_text()
    assert conf_file.read_text() == text


def build_deb(tmp_path: Path) -> Path:
    """A tiny real .deb named salttap (nothing in it), for the plan from a file."""
    pkg = tmp_path / "deb"
    (pkg / "DEBIAN").mkdir(parents=True)
    (pkg / "DEBIAN" / "control").write_text(
        "Package: salttap\nVersion: 0.0.1-test\nArchitecture: all\n"
        "Maintainer: salttap tests <tests@salttap.example>\nDescription: formula test package\n")
    out = tmp_path / "salttap_0.0.1-test_all.deb"
    r = subprocess.run(["dpkg-deb", "--build", "--root-owner-group", str(pkg), str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return out
