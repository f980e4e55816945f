#!/usr/bin/env python3
"""What the Debian package ships, without building it: `cmake --install` of the
build tree into a temporary DESTDIR (prefix /usr, as CPack installs), then the
files the package must hold, checked by path and, for the shared Salt files,
by content (tests/package checks the .deb itself, opt-in).

  check_install_manifest.py SOURCE_DIR BUILD_DIR CMAKE
"""
import pathlib
import subprocess
import sys
import tempfile

# path in the package -> the source file it must be a copy of (None: only present)
EXPECTED = {
    "usr/bin/salttap": None,
    "lib/systemd/system/salttap.service": "deploy/systemd/salttap.service",
    "etc/salttap/salttap.yaml": "deploy/salttap.yaml",
    "usr/share/salttap/mappings/jobs.json": "mappings/jobs.json",
    "usr/share/salttap/dashboards/kibana/salttap.ndjson": "deploy/kibana/salttap.ndjson",
    "usr/share/salttap/dashboards/opensearch-dashboards/salttap.ndjson":
        "deploy/opensearch-dashboards/salttap.ndjson",
    "usr/share/salttap/alerting/watcher-watch.json": "deploy/alerting/watcher-watch.json",
    "usr/share/salttap/prometheus/salttap-rules.yml": "deploy/prometheus/salttap-rules.yml",
    "usr/share/salttap/salt/reactor/salttap_rerun.sls": "deploy/salt/reactor/salttap_rerun.sls",
    "usr/share/salttap/salt/formula/salttap/init.sls": "deploy/salt/formula/salttap/init.sls",
    "usr/share/salttap/salt/formula/salttap/map.jinja": "deploy/salt/formula/salttap/map.jinja",
    "usr/share/salttap/salt/formula/salttap/defaults.yaml": "deploy/salt/formula/salttap/defaults.yaml",
    "usr/share/salttap/salt/formula/salttap/files/salttap.yaml.jinja":
        "deploy/salt/formula/salttap/files/salttap.yaml.jinja",
    "usr/share/doc/salttap/install.md": "docs/install.md",
}


def main() -> int:
    source, build = (pathlib.Path(a) for a in sys.argv[1:3])
    cmake = sys.argv[3]
    with tempfile.TemporaryDirectory(prefix="salttap-install-") as tmp:
        root = pathlib.Path(tmp)
        r = subprocess.run([cmake, "--install", str(build), "--prefix", "/usr"],
                           env={"DESTDIR": str(root), "PATH": "/usr/bin:/bin", "LC_ALL": "C"},
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"cmake --install failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
            return 1
        installed = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
        bad = []
        for path, src in EXPECTED.items():
            f = root / path
            if not f.is_file():
                bad.append(f"missing: /{path}")
            elif src and f.read_bytes() != (source / src).read_bytes():
                bad.append(f"differs from {src}: /{path}")
        # every formula file of the source tree is shipped
        formula = source / "deploy/salt/formula"
        for f in formula.rglob("*"):
            if f.is_file() and not (root / "usr/share/salttap/salt/formula" / f.relative_to(formula)).is_file():
                bad.append(f"formula file not installed: {f.relative_to(source)}")
        if bad:
            print("\n".join(bad) + "\ninstalled:\n  " + "\n  ".join(installed))
            return 1
        print(f"install manifest: {len(installed)} files, the {len(EXPECTED)} checked ones as expected")
        return 0


if __name__ == "__main__":
    sys.exit(main())
