"""SGLang's model gateway (`smg`, PyPI) as a test and benchmark fixture.

`Gateway` starts `smg launch` on 127.0.0.1 in front of worker URLs and waits until every worker
is registered and ready; `stop()` ends it (SIGTERM with a 1 s grace period, then SIGKILL).
`smg_binary()` finds the executable installed next to the running Python (scripts/setup.sh
installs it from scripts/requirements.txt) and says why it cannot run when it cannot.
"""

import os
import pathlib
import shutil
import subprocess
import sys

import requests

from processes import LoggedProcess, free_port, start_on_free_port

READY_TIMEOUT_S = 120


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


class Gateway(LoggedProcess):
    """A running `smg launch --worker-urls ...`."""

    def __init__(self, worker_urls, policy="cache_aware", extra_args=(), ready=True,
                 routing_args=None):
        """routing_args replaces `--worker-urls URL...` (PD mode: `--pd-disaggregation
        --prefill URL PORT --decode URL`); worker_urls still counts the workers to wait for."""
        binary, why = smg_binary()
        if binary is None:
            raise RuntimeError(why)
        self.worker_urls = list(worker_urls)
        # smg exits at once when a port free_port() found was taken before it bound it
        # ("Failed to bind the HTTP listener ... Address already in use").
        start_on_free_port(
            lambda port: self._start(binary, port, policy, extra_args, ready, routing_args),
            lambda port: "Address already in use")

    def _start(self, binary, port, policy, extra_args, ready, routing_args):
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        cmd = [binary, "launch", "--host", "127.0.0.1", "--port", str(port),
               "--prometheus-host", "127.0.0.1", "--prometheus-port", str(free_port()),
               *(routing_args if routing_args is not None
                 else ["--worker-urls", *self.worker_urls]), "--policy", policy,
               "--shutdown-grace-period-secs", "1", "--log-level", "warn", *extra_args]
        super().__init__(cmd, "smg-", env=dict(os.environ, NO_COLOR="1"))
        if ready:
            self.wait_ready(len(self.worker_urls))

    def workers(self):
        return requests.get(self.url + "/workers", timeout=10).json()["workers"]

    def wait_ready(self, n):
        def registered():
            try:
                workers = self.workers()
            except (requests.RequestException, ValueError, KeyError):
                return False
            return len(workers) == n and all(w["status"] == "ready" for w in workers)

        self.wait_until(registered, READY_TIMEOUT_S, "smg", f"register {n} ready workers")

    def stop(self, timeout=15):
        return super().stop(timeout)
