"""A child process with its output in a log file, as the end-to-end tests start them (the
radixlm server in conftest.py, SGLang's gateway in gateway.py): start it, wait until it says it
is ready, read the end of its log, stop it with SIGTERM (SIGKILL after a timeout).
Imports nothing from pytest, so bench/ scripts can use it too."""

import signal
import socket
import subprocess
import tempfile
import time


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# How many fresh ports start_on_free_port tries in all.
PORT_ATTEMPTS = 3


def start_on_free_port(start, taken, attempts=PORT_ATTEMPTS):
    """Returns start(port) for a port free_port() found. free_port() closes its socket before
    the child binds the port, so another process (a transport binding an ephemeral port, say)
    can take it in between: when start raises a RuntimeError whose text holds taken(port) (case
    aside), it runs again with a fresh port, `attempts` times at most. Any other error is raised
    at once."""
    for _ in range(attempts - 1):
        port = free_port()
        try:
            return start(port)
        except RuntimeError as e:
            if taken(port).lower() not in str(e).lower():
                raise
    return start(free_port())


class LoggedProcess:
    """`cmd` started with stdout and stderr in a temporary log file named `log_prefix`..."""

    def __init__(self, cmd, log_prefix, env=None):
        self.log = tempfile.NamedTemporaryFile(prefix=log_prefix, suffix=".log", delete=False)
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env)

    def log_text(self):
        with open(self.log.name, "r", errors="replace") as f:
            return f.read()

    def log_tail(self, n=40):
        return "".join(self.log_text().splitlines(keepends=True)[-n:])

    def wait_until(self, ready, timeout, name, goal):
        """Polls `ready()` until it is true. RuntimeError with the log's tail when the process
        exits first, or when `timeout` seconds pass (it is then stopped): "<name> did not
        <goal>"."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {self.proc.returncode}:\n"
                                   + self.log_tail())
            if ready():
                return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"{name} did not {goal}:\n" + self.log_tail())

    def stop(self, timeout=30):
        """SIGTERM, then wait; returns the exit code (SIGKILL after the timeout)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode
