"""SGLang's model gateway (`smg`, PyPI) as a test and benchmark fixture.

`Gateway` starts `smg launch` on 127.0.0.1 in front of worker URLs and waits until every worker
is registered and ready; `stop()` ends it (SIGTERM with a 1 s grace period, then SIGKILL).
`smg_binary()` finds the executable installed next to the running Python (scripts/setup.sh
installs it from scripts/requirements.txt) and says why it cannot run when it cannot.
"""

import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import requests

READY_TIMEOUT_S = 120


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def smg_binary():
    """(path, None) when `smg` runs here, else (None, the reason it does not)."""
    candidate = pathlib.Path(sys.executable).parent / "smg"
    path = str(candidate) if candidate.exists() else shutil.which("smg")
    if path is None:
        return None, "the smg gateway is not installed (pip install smg; scripts/setup.sh does)"
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{path} cannot run on this machine: {e}"
    if out.returncode != 0:
        return None, f"{path} --version failed ({out.returncode}): {out.stderr.strip()[-500:]}"
    return path, None


class Gateway:
    """A running `smg launch --worker-urls ...`."""

    def __init__(self, worker_urls, policy="cache_aware", extra_args=(), ready=True,
                 routing_args=None):
        """routing_args replaces `--worker-urls URL...` (PD mode: `--pd-disaggregation
        --prefill URL PORT --decode URL`); worker_urls still counts the workers to wait for."""
        binary, why = smg_binary()
        if binary is None:
            raise RuntimeError(why)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.worker_urls = list(worker_urls)
        self.log = tempfile.NamedTemporaryFile(prefix="smg-", suffix=".log", delete=False)
        cmd = [binary, "launch", "--host", "127.0.0.1", "--port", str(self.port),
               "--prometheus-host", "127.0.0.1", "--prometheus-port", str(free_port()),
               *(routing_args if routing_args is not None
                 else ["--worker-urls", *self.worker_urls]), "--policy", policy,
               "--shutdown-grace-period-secs", "1", "--log-level", "warn", *extra_args]
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=dict(os.environ, NO_COLOR="1"))
        if ready:
            self.wait_ready(len(self.worker_urls))

    def log_tail(self, n=40):
        with open(self.log.name, "r", errors="replace") as f:
            return "".join(f.readlines()[-n:])

    def workers(self):
        return requests.get(self.url + "/workers", timeout=10).json()["workers"]

    def wait_ready(self, n):
        deadline = time.time() + READY_TIMEOUT_S
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"smg exited with {self.proc.returncode}:\n" + self.log_tail())
            try:
                workers = self.workers()
                if len(workers) == n and all(w["status"] == "ready" for w in workers):
                    return
            except (requests.RequestException, ValueError, KeyError):
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"smg did not register {n} ready workers:\n" + self.log_tail())

    def stop(self, timeout=15):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode
