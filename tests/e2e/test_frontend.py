"""The C++ frontend language's examples on the real server: the same program gives the same
text in-process (its own Engine) and remote (the session's `radixlm serve`, via /generate) at
temperature 0, and a forked program's branches find the committed prefix cached.

The example binaries are looked up next to the radixlm binary (<build>/examples/<name>), or in
RADIXLM_EXAMPLES_DIR."""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _example(name):
    base = os.environ.get("RADIXLM_EXAMPLES_DIR")
    if not base:
        binary = os.environ.get("RADIXLM_BIN") or str(ROOT / "build" / "apps" / "radixlm")
        base = str(pathlib.Path(binary).resolve().parents[1] / "examples")
    path = os.path.join(base, name)
    if not os.path.exists(path):
        pytest.skip(f"example binary {path} not built")
    return path


def _run(name, *args):
    model = os.environ.get("RADIXLM_DEFAULT_MODEL") or "default"
    cmd = [_example(name), "--json", *args]
    if "--remote" not in args:
        cmd += ["--model-path", model]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout}\n{done.stderr}"
    out = json.loads(done.stdout)
    assert out["ok"], out
    return out


@pytest.mark.parametrize("example", ["tree_of_thought", "llm_judge", "few_shot_qa",
                                     "json_extraction"])
def test_same_text_in_process_and_remote(server, example):
    local = _run(example)
    remote = _run(example, "--remote", server.url)
    assert [p["label"] for p in local["programs"]] == [p["label"] for p in remote["programs"]]
    for a, b in zip(local["programs"], remote["programs"]):
        assert a["text"] == b["text"], a["label"]
        assert a["variables"] == b["variables"], a["label"]
    # The same model calls: selects count their prefix's tokens (in process with the tokenizer,
    # remotely with /tokenize) and commit nothing.
    for kind in ("generate", "score", "commit"):
        assert local["calls"][kind] == remote["calls"][kind], kind


def test_remote_fork_branches_reuse_the_committed_prefix(server):
    out = _run("tree_of_thought", "--remote", server.url)
    calls = out["calls"]
    assert calls["commit"] >= 4  # the root fork and one per approach
    # Most prompt tokens of the program were served from the radix cache.
    assert calls["cached_tokens"] > 0.7 * calls["prompt_tokens"], calls
