"""A second server with --api-key: authentication, a second server on its port, then SIGTERM
while a stream is running (test_faults.py checks the drain itself)."""

import signal
import subprocess
import threading

import pytest
import requests

from conftest import Server, _binary, _model


@pytest.fixture(scope="module")
def keyed_server():
    # A 1 s drain, so the SIGTERM test below sees what happens to requests still running then.
    s = Server(extra_args=["--max-total-tokens", "8192", "--schedule-policy", "fcfs",
                           "--graceful-shutdown-timeout", "1"],
               api_key="sekrit")
    yield s
    s.stop()


def test_api_key(keyed_server):
    url = keyed_server.url
    body = {"text": "hi", "sampling_params": {"max_new_tokens": 1}}
    missing = requests.post(url + "/generate", json=body, timeout=60)
    assert missing.status_code == 401 and "error" in missing.json()
    wrong = requests.post(url + "/generate", json=body, timeout=60,
                          headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert requests.get(url + "/v1/models", timeout=60).status_code == 401
    ok = requests.post(url + "/generate", json=body, timeout=60,
                       headers={"Authorization": "Bearer sekrit"})
    assert ok.status_code == 200
    assert requests.get(url + "/health", timeout=60).status_code == 200  # open, as in SGLang
    info = requests.get(url + "/get_server_info", timeout=60,
                        headers={"Authorization": "Bearer sekrit"}).json()
    assert info["max_total_num_tokens"] == 8192 and info["schedule_policy"] == "fcfs"


def test_a_port_in_use_fails_before_the_model_loads(keyed_server):
    out = subprocess.run([_binary(), "serve", "--model-path", _model(), "--host", "127.0.0.1",
                          "--port", str(keyed_server.port)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert (f"cannot listen on 127.0.0.1:{keyed_server.port}: Address already in use"
            in out.stderr), out.stderr
    assert "loading" not in out.stderr, out.stderr
    assert requests.get(keyed_server.url + "/health", timeout=60).status_code == 200


def test_sigterm_aborts_streams_still_running_at_the_drain_deadline_and_exits_0(keyed_server):
    events = []
    started = threading.Event()

    def stream():
        with requests.post(keyed_server.url + "/generate", stream=True, timeout=120,
                           headers=keyed_server.headers(),
                           json={"text": "A long story:", "stream": True,
                                 "sampling_params": {"max_new_tokens": 3000,
                                                     "ignore_eos": True}}) as r:
            for line in r.iter_lines():
                if line:
                    events.append(line.decode())
                    started.set()

    t = threading.Thread(target=stream)
    t.start()
    assert started.wait(60)
    assert keyed_server.stop(timeout=60) == 0
    t.join(timeout=60)
    assert not t.is_alive()
    assert events[-1] == "data: [DONE]"
    assert '"abort"' in events[-2]



def test_a_crashing_server_exits_instead_of_hanging():
    # A fatal signal ends the process (the default action; UCX's handlers, which print a
    # backtrace from inside the handler and can deadlock after heap corruption, are replaced), so
    # its clients see the connection close and a supervisor sees the exit.
    s = Server()
    try:
        assert requests.get(s.url + "/health", timeout=60).status_code == 200
        s.proc.send_signal(signal.SIGSEGV)
        s.proc.wait(timeout=60)
        assert s.proc.returncode != 0
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()
