"""A master's pub socket that plays real captures to `salttap run --sock-dir DIR`, for the
engine tests that need `run` on a bus without a Salt master (test_tls_auth_engines.py,
test_ui_attacks.py). Standard library only."""
from __future__ import annotations

import shutil
import socket
import tempfile
import threading
from pathlib import Path


class CaptureBus:
    """A master's pub socket (`master_event_pub.ipc` in a fresh sock_dir) that sends each
    reader the bytes of real captures, then stays open and quiet, as an idle master does."""

    def __init__(self, captures: list[Path], gate: threading.Event | None = None):
        """gate: when given, nothing is sent before it is set (a test's moment to begin)."""
        self.gate = gate
        # A short path: AF_UNIX paths are limited to 108 bytes.
        self.sock_dir = Path(tempfile.mkdtemp(prefix="stbus-", dir="/tmp"))
        self.payload = b"".join(p.read_bytes() for p in captures)
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(self.sock_dir / "master_event_pub.ipc"))
        self.server.listen(4)
        self.readers: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.readers.append(conn)
            if self.gate is not None:
                self.gate.wait()
            try:
                conn.sendall(self.payload)
            except OSError:
                pass

    def close(self) -> None:
        """Stops listening, then hangs up on every reader: a reader that reconnects finds no
        master (shutdown wakes the accept, which close alone would leave waiting for one more)."""
        try:
            self.server.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.server.close()
        self.thread.join(timeout=10)
        for conn in self.readers:
            conn.close()
        shutil.rmtree(self.sock_dir, ignore_errors=True)
