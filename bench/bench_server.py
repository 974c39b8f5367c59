"""`radixlm serve` for the benchmark scripts: one server on 127.0.0.1 at a free port.

  with Server("build/apps/radixlm", model, ["--threads", "2"]) as server:
      requests.post(server.url + "/generate", ...)

Waits for /health (up to 3 minutes; the log file is named in the error), stops the server on
exit. Standard library only, so every bench script can use it.
"""
import socket
import subprocess
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, binary, model, extra=(), log_prefix="bench-server-"):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile(prefix=log_prefix, suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            [binary, "serve", "--model-path", model, "--host", "127.0.0.1", "--port",
             str(self.port), *extra],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                if urllib.request.urlopen(self.url + "/health", timeout=2).status == 200:
                    return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError("server did not start; log: " + self.log.name)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=60)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
