"""Servers for the benchmark scripts (`radixlm serve`, llama.cpp's llama-server): one process on
127.0.0.1 at a free port.

  with Server("build/apps/radixlm", model, ["--threads", "2"]) as server:
      requests.post(server.url + "/generate", ...)

Waits for /health (3 minutes unless start_timeout says otherwise; the log file is named in the error), stops the server on
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


class Process:
    """A server process on 127.0.0.1 at a free port: cmd(port) gives its command line."""

    def __init__(self, cmd, log_prefix, start_timeout=180):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile(prefix=log_prefix, suffix=".log", delete=False)
        self.proc = subprocess.Popen([str(c) for c in cmd(self.port)], stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + start_timeout
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
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Server(Process):
    """`radixlm serve --model-path MODEL` plus extra flags."""

    def __init__(self, binary, model, extra=(), log_prefix="bench-server-", start_timeout=180):
        super().__init__(lambda port: [binary, "serve", "--model-path", model, "--host",
                                       "127.0.0.1", "--port", port, *extra], log_prefix,
                         start_timeout)


class LlamaServer(Process):
    """llama.cpp's `llama-server -m MODEL` plus extra flags (bench/llama_peer.py builds it)."""

    def __init__(self, binary, model, extra=(), start_timeout=180):
        super().__init__(lambda port: [binary, "-m", model, "--host", "127.0.0.1", "--port",
                                       port, *extra], "llama-server-", start_timeout)
