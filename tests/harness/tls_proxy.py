"""A real nginx terminating TLS and checking credentials in front of a test engine.

The certificates are made by the `openssl` command in a directory the test gives (`Pki`):
a CA, a second CA that signed nothing the proxy shows (the "wrong CA"), a server certificate
for 127.0.0.1 and localhost (subjectAltName), and a client certificate from the first CA.

`Nginx` runs one foreground nginx (`daemon off;`, its own pid file, error and access logs
under the same directory), bound to 127.0.0.1 only, with one server per door:

  basic    TLS, HTTP basic auth (one user from an htpasswd file), no client certificate
  mtls     TLS, HTTP basic auth, and a client certificate from the CA required
           (`ssl_verify_client on`)
  api_key  TLS, `Authorization: ApiKey <key>` required (401 otherwise)

Each proxies to the engine's plain HTTP port. `stop()` ends nginx by its PID.
Needs the Debian packages nginx-light (or nginx) and openssl (scripts/install-deps).
Standard library only.
"""
from __future__ import annotations

import base64
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from http_calls import free_port

DOORS = ("basic", "mtls", "api_key")


def _run(argv: list[str], cwd: Path) -> str:
    r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: rc={r.returncode}\n{r.stderr[-2000:]}")
    return r.stdout


class Pki:
    """CA, wrong CA, server and client key pairs as PEM files in `directory`."""

    def __init__(self, directory: Path):
        self.dir = directory
        directory.mkdir(parents=True, exist_ok=True)
        openssl = shutil.which("openssl")
        if not openssl:
            raise RuntimeError("openssl not found (Debian package openssl: scripts/install-deps)")
        self.ca, self.ca_key = directory / "ca.pem", directory / "ca.key"
        self.wrong_ca, self.wrong_ca_key = directory / "wrong-ca.pem", directory / "wrong-ca.key"
        self.server_cert, self.server_key = directory / "server.pem", directory / "server.key"
        self.client_cert, self.client_key = directory / "client.pem", directory / "client.key"
        for cert, key, name in ((self.ca, self.ca_key, "salttap test CA"),
                                (self.wrong_ca, self.wrong_ca_key, "salttap test other CA")):
            _run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                  "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", f"/CN={name}",
                  "-addext", "basicConstraints=critical,CA:TRUE",
                  "-addext", "keyUsage=critical,keyCertSign,cRLSign"], directory)
        self._leaf(openssl, self.server_cert, self.server_key, "127.0.0.1",
                   ["subjectAltName=IP:127.0.0.1,DNS:localhost", "extendedKeyUsage=serverAuth"])
        self._leaf(openssl, self.client_cert, self.client_key, "salttap-client",
                   ["extendedKeyUsage=clientAuth"])

    def _leaf(self, openssl: str, cert: Path, key: Path, cn: str, extensions: list[str]) -> None:
        csr = cert.with_suffix(".csr")
        ext = cert.with_suffix(".ext")
        ext.write_text("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                       + "".join(e + "\n" for e in extensions))
        _run([openssl, "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
              "-keyout", str(key), "-out", str(csr), "-subj", f"/CN={cn}"], self.dir)
        _run([openssl, "x509", "-req", "-in", str(csr), "-CA", str(self.ca), "-CAkey", str(self.ca_key),
              "-CAcreateserial", "-days", "2", "-extfile", str(ext), "-out", str(cert)], self.dir)


class Nginx:
    """One foreground nginx with a server per door (DOORS), each on its own 127.0.0.1 port."""

    def __init__(self, directory: Path, pki: Pki, upstream_port: int, username: str, password: str,
                 api_key: str):
        self.dir = directory
        self.pki = pki
        self.upstream_port = upstream_port
        self.ports = {door: free_port() for door in DOORS}
        self.proc: subprocess.Popen | None = None
        directory.mkdir(parents=True, exist_ok=True)
        for sub in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (directory / "temp" / sub).mkdir(parents=True, exist_ok=True)
        openssl = shutil.which("openssl")
        hashed = subprocess.run([openssl, "passwd", "-apr1", "-stdin"], input=password, capture_output=True,
                                text=True, check=True, timeout=30).stdout.strip()
        (directory / "htpasswd").write_text(f"{username}:{hashed}\n")
        self.conf = directory / "nginx.conf"
        self.conf.write_text(self._config(api_key))

    def url(self, door: str, host: str = "127.0.0.1") -> str:
        return f"https://{host}:{self.ports[door]}"

    def _config(self, api_key: str) -> str:
        d, p = self.dir, self.pki
        common = (f"        ssl_certificate {p.server_cert};\n"
                  f"        ssl_certificate_key {p.server_key};\n"
                  "        ssl_protocols TLSv1.2 TLSv1.3;\n"
                  "        client_max_body_size 100m;\n"
                  "        location / {\n"
                  f"            proxy_pass http://127.0.0.1:{self.upstream_port};\n"
                  "            proxy_http_version 1.1;\n"
                  "            proxy_set_header Connection \"\";\n"
                  "            proxy_read_timeout 120s;\n"
                  "        }\n")
        basic = ("        auth_basic \"salttap test\";\n"
                 f"        auth_basic_user_file {d / 'htpasswd'};\n")
        servers = {
            "basic": basic,
            "mtls": basic + f"        ssl_client_certificate {p.ca};\n        ssl_verify_client on;\n",
            "api_key": ("        if ($http_authorization != \"ApiKey " + api_key + "\") {\n"
                        "            return 401;\n        }\n"),
        }
        # As root the workers would switch to `nobody`, who may not read the test's tmp dir.
        user = "user root;\n" if os.geteuid() == 0 else ""
        return (
            f"{user}daemon off;\nworker_processes 1;\npid {d / 'nginx.pid'};\n"
            f"error_log {d / 'error.log'} info;\n"
            "events { worker_connections 256; }\n"
            "http {\n"
            f"    access_log {d / 'access.log'};\n"
            f"    client_body_temp_path {d / 'temp/client_body'};\n"
            f"    proxy_temp_path {d / 'temp/proxy'};\n"
            f"    fastcgi_temp_path {d / 'temp/fastcgi'};\n"
            f"    uwsgi_temp_path {d / 'temp/uwsgi'};\n"
            f"    scgi_temp_path {d / 'temp/scgi'};\n"
            + "".join(f"    server {{  # {door}\n"
                      f"        listen 127.0.0.1:{self.ports[door]} ssl;\n"
                      f"        server_name localhost;\n"
                      + servers[door] + common + "    }\n" for door in DOORS)
            + "}\n")

    def start(self, timeout: float = 60) -> "Nginx":
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if not os.access(nginx, os.X_OK):
            raise RuntimeError("nginx not found (Debian package nginx-light: scripts/install-deps)")
        # -e: the error log before the config is read (else nginx opens /var/log/nginx/error.log)
        argv = [nginx, "-e", str(self.dir / "error.log"), "-p", str(self.dir), "-c", str(self.conf)]
        _run(argv + ["-t"], self.dir)
        out = open(self.dir / "nginx.out", "ab")
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True, cwd=self.dir)
        finally:
            out.close()
        deadline = time.monotonic() + timeout
        pid_file = self.dir / "nginx.pid"
        while not (pid_file.exists() and pid_file.read_text().strip() == str(self.proc.pid)
                   and all(self._accepts(port) for port in self.ports.values())):
            if self.proc.poll() is not None:
                raise RuntimeError(f"nginx exited with {self.proc.returncode}:\n{self.error_log()[-3000:]}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"nginx did not listen within {timeout:.0f}s:\n{self.error_log()[-3000:]}")
            time.sleep(0.05)
        return self

    @staticmethod
    def _accepts(port: int) -> bool:
        with socket.socket() as s:
            s.settimeout(1)
            return s.connect_ex(("127.0.0.1", port)) == 0

    def error_log(self) -> str:
        try:
            return (self.dir / "error.log").read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        """SIGQUIT (graceful), then SIGKILL to the process group nginx leads."""
        if self.proc is None:
            return
        for sig, wait in ((signal.SIGQUIT, 15), (signal.SIGKILL, 10)):
            if self.proc.poll() is not None:
                break
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
        self.proc = None


class TlsProxy:
    """A Pki and an Nginx in `directory`, with credentials made fresh for each instance."""

    def __init__(self, directory: Path, upstream_port: int):
        self.username = "salttap"
        self.password = "pw-" + secrets.token_urlsafe(18)
        self.api_key = base64.b64encode(f"salttap-key:{secrets.token_urlsafe(18)}".encode()).decode()
        self.pki = Pki(directory / "pki")
        self.nginx = Nginx(directory / "nginx", self.pki, upstream_port, self.username, self.password,
                           self.api_key).start()

    def url(self, door: str, host: str = "127.0.0.1") -> str:
        return self.nginx.url(door, host)

    def access_log(self) -> str:
        try:
            return (self.nginx.dir / "access.log").read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        self.nginx.stop()
