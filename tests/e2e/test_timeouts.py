"""--waiting-timeout and --running-timeout: a request that never left the queue in time fails
with 503 (an abort event with status_code 503 when streaming); one that ran too long ends with
finish_reason abort. Bad flag values stop the server at start-up."""

import concurrent.futures
import json
import subprocess

import pytest

from conftest import Server, _binary, _model, sse_events

WAITING_TIMEOUT_S = 1
RUNNING_TIMEOUT_S = 6
WAITING_ABORT = {"type": "abort", "message": "Request waiting timeout reached.",
                 "status_code": 503}


@pytest.fixture(scope="module")
def srv():
    # One request runs at a time, so a second one has to wait.
    s = Server(extra_args=["--max-running-requests", "1",
                           "--waiting-timeout", str(WAITING_TIMEOUT_S),
                           "--running-timeout", str(RUNNING_TIMEOUT_S)])
    yield s
    assert s.stop() == 0, s.log_tail()


def long_body(stream):
    return {"text": "Write a very long story about a lighthouse keeper:", "stream": stream,
            "sampling_params": {"max_new_tokens": 20000, "ignore_eos": True, "temperature": 0}}


def short_body(stream):
    return {"text": "The capital of France is", "stream": stream,
            "sampling_params": {"max_new_tokens": 4, "temperature": 0}}


def test_queued_requests_time_out_and_the_running_one_is_aborted(srv):
    info = srv.server_info()
    assert info["waiting_timeout"] == WAITING_TIMEOUT_S
    assert info["running_timeout"] == RUNNING_TIMEOUT_S
    with srv.post("/generate", long_body(True), stream=True, timeout=300) as running:
        assert running.status_code == 200
        lines = running.iter_lines()
        first = next(line for line in lines if line)  # it is running now
        assert first.startswith(b"data: ")

        def plain():
            return srv.post("/generate", short_body(False))

        def streamed():
            with srv.post("/generate", short_body(True), stream=True) as r:
                return r.status_code, sse_events(r)

        def openai():
            return srv.post("/v1/completions", {"model": "default", "prompt": "Hello",
                                                "max_tokens": 4})

        with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
            f_plain, f_streamed, f_openai = (pool.submit(plain), pool.submit(streamed),
                                             pool.submit(openai))
            r = f_plain.result()
            assert r.status_code == 503, r.text
            # SGLang's flat error body, which its clients (and its timeout test) check.
            assert r.json() == {"object": "error", "message": "Request waiting timeout reached.",
                                "type": "503", "param": None, "code": 503}
            status, events = f_streamed.result()
            assert status == 200
            assert events[-1]["meta_info"]["finish_reason"] == WAITING_ABORT
            assert events[-1]["text"] == ""
            r = f_openai.result()
            assert r.status_code == 503 and "waiting timeout" in r.json()["error"]["message"]

        # The long request goes on until its running timeout.
        last = None
        for line in lines:
            if line and line != b"data: [DONE]":
                last = json.loads(line[len(b"data: "):])
    finish = last["meta_info"]["finish_reason"]
    assert finish == {"type": "abort", "message": "Request running timeout reached."}
    assert 0 < last["meta_info"]["completion_tokens"] < 20000


def test_a_non_streaming_request_over_its_running_time_is_aborted_with_200(srv):
    r = srv.post("/generate", long_body(False), timeout=300)
    assert r.status_code == 200, r.text
    meta = r.json()["meta_info"]
    assert meta["finish_reason"] == {"type": "abort", "message": "Request running timeout reached."}
    assert meta["completion_tokens"] > 0


def test_requests_within_the_limits_are_unaffected(srv):
    r = srv.post("/generate", short_body(False))
    assert r.status_code == 200
    assert r.json()["meta_info"]["finish_reason"]["type"] in ("length", "stop")


@pytest.mark.parametrize("flag", ["--waiting-timeout", "--running-timeout"])
def test_negative_timeouts_are_rejected_at_start_up(flag):
    p = subprocess.run([_binary(), "serve", "--model-path", _model(), "--port", "0", flag, "-1"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode != 0
    assert flag in p.stdout + p.stderr


@pytest.mark.parametrize("flag,value", [("--keep-alive-timeout", "0"), ("--read-timeout", "-1"),
                                        ("--write-timeout", "0"),
                                        ("--max-stream-buffer-bytes", "10"),
                                        ("--graceful-shutdown-timeout", "-1")])
def test_connection_limits_out_of_range_are_rejected_at_start_up(flag, value):
    p = subprocess.run([_binary(), "serve", "--model-path", _model(), "--port", "0", flag, value],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode != 0
    assert flag in p.stdout + p.stderr and "not in range" in p.stdout + p.stderr
