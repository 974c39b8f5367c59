#!/usr/bin/env python3
"""Synthetic qwen35 (Qwen 3.5 dense, hybrid), qwen35moe and qwen3next GGUFs with random weights,
for comparing radixlm's next-token distributions with llama.cpp's on the same file
(compare.py).

Qwen3.5-0.8B's widths with few layers: hidden 1024, FFN 3584; the full-attention layers (every
4th) with 8 heads / 2 KV heads of 256, Q with its output gate, RoPE on 64 of 256 values
(sections 11/11/10/0, base 1e7); the gated DeltaNet layers with a 4-tap convolution, 16 key and
16 value heads of 128. SmolLM2-135M's tokenizer (49152 tokens, from RADIXLM_CHAT_MODEL) in
place of the real one, and an untied output head (the real model ties it) so the logits have a
few units without a large embedding. Matrices in --type, the convolution and 1-D tensors in
F32, as llama.cpp's converter stores them. Weights as synth_family.py draws them; the DeltaNet
gates as a trained model's: a = -exp(A_log) with A_log ~ U(0, ln 16), dt bias ~ U(-4, -2) (per
head decays between about 0.5 and 0.99 per token), convolution taps N(0, 0.5^2).

--arch qwen35moe: Qwen3.5-35B-A3B's widths (hidden 2048; full attention with 16 heads / 2 KV of
256, RoPE on 64 values, sections 11/11/10/0; DeltaNet with 16 key and 32 value heads of 128;
256 experts of 512, 8 per token, and a shared expert of 512 behind its sigmoid gate).
--arch qwen3next: Qwen3-Next-80B-A3B's (as qwen35moe but 512 experts, 10 per token, plain NeoX
RoPE, the DeltaNet's beta / alpha rows in one ssm_ba grouped by key head); --experts N keeps
only the first N experts (a smaller file; the per-token work is the same). The router and the
shared expert's gate are F32 (llama-quantize keeps them so); router rows N(0, 4/hidden).

--shape tiny: a few-hundred-KB model of the architecture for the fixtures of
tests/model/llama_cpp_reference_test.cc (make_fixtures.py): hidden 64, 128 tokens (tokenizer
"no_vocab"), 5 layers (full attention at index 3), full attention with 4 heads / 2 KV of 16 and
RoPE on 8 values (sections 2/1/1/0 but qwen3next's), DeltaNet with 2 key / 4 value heads of 16;
8 experts of 32, 3 per token, a shared expert of 32.

Usage: synth_qwen35.py OUT.gguf [--arch qwen35] [--shape real|tiny] [--layers 4] [--type Q8_0]
       [--experts N]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.environ.get("GGUF_PY", os.path.expanduser(
    "~/.cache/radixlm/llama-peer/0.3.36/src/vendor/llama.cpp/gguf-py")))
import gguf  # noqa: E402
from gguf import quants  # noqa: E402

TOKENIZER = os.environ.get("RADIXLM_CHAT_MODEL", "")

TINY_VOCAB = 128  # (synth_family.TINY_VOCAB, make_fixtures.VOCAB)

SHAPES = {
    "qwen35": dict(hidden=1024, ffn=3584, heads=8, kv=2, hd=256, rope_dims=64, rope=1e7,
                   sections=[11, 11, 10, 0], interval=4, conv=4, state=128, k_heads=16,
                   v_heads=16, eps=1e-6),
    "qwen35moe": dict(hidden=2048, ffn=512, heads=16, kv=2, hd=256, rope_dims=64, rope=1e7,
                      sections=[11, 11, 10, 0], interval=4, conv=4, state=128, k_heads=16,
                      v_heads=32, eps=1e-6, experts=256, used=8, expert_ffn=512,
                      shared_ffn=512),
    "qwen3next": dict(hidden=2048, ffn=5120, heads=16, kv=2, hd=256, rope_dims=64, rope=1e7,
                      sections=None, interval=4, conv=4, state=128, k_heads=16, v_heads=32,
                      eps=1e-6, experts=512, used=10, expert_ffn=512, shared_ffn=512),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--type", default="Q8_0", choices=["Q8_0", "F16"])
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--arch", default="qwen35", choices=sorted(SHAPES))
    ap.add_argument("--experts", type=int, default=0, help="keep only this many experts")
    ap.add_argument("--shape", default="real", choices=["real", "tiny"])
    args = ap.parse_args()
    tiny = args.shape == "tiny"
    if not TOKENIZER and not tiny:
        sys.exit("set RADIXLM_CHAT_MODEL to SmolLM2-135M-Instruct's GGUF (scripts/setup.sh)")
    arch = args.arch
    f = dict(SHAPES[arch])
    if tiny:
        f.update(hidden=64, ffn=64, heads=4, kv=2, hd=16, rope_dims=8, rope=1e7, conv=4,
                 state=16, k_heads=2, v_heads=4)
        if f["sections"]:
            f["sections"] = [2, 1, 1, 0]
        if "experts" in f:
            f.update(experts=8, used=3, expert_ffn=32, shared_ffn=32)
        if args.layers == 4:  # (the default) a linear layer after the full one too
            args.layers = 5
    if args.experts:
        f["experts"] = args.experts
    rng = np.random.default_rng(args.seed)
    qtype = {"Q8_0": gguf.GGMLQuantizationType.Q8_0, "F16": gguf.GGMLQuantizationType.F16}[args.type]
    w = gguf.GGUFWriter(args.out, arch)
    real = {"qwen35": "Qwen3.5-0.8B", "qwen35moe": "Qwen3.5-35B-A3B",
            "qwen3next": "Qwen3-Next-80B-A3B"}[arch]
    shape = "tiny shape" if tiny else f"{real} widths"
    w.add_name(f"synthetic GGUF ({shape}, {args.layers} layers, random weights)")
    h, hd = f["hidden"], f["hd"]
    w.add_context_length(4096)
    w.add_embedding_length(h)
    w.add_block_count(args.layers)
    w.add_feed_forward_length(f["ffn"])
    w.add_head_count(f["heads"])
    w.add_head_count_kv(f["kv"])
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_rope_dimension_count(f["rope_dims"])
    w.add_rope_freq_base(f["rope"])
    w.add_layer_norm_rms_eps(f["eps"])
    if f["sections"]:
        w.add_array(f"{arch}.rope.dimension_sections", f["sections"])
    w.add_uint32(f"{arch}.full_attention_interval", f["interval"])
    moe = "experts" in f
    if moe:
        w.add_expert_count(f["experts"])
        w.add_expert_used_count(f["used"])
        w.add_expert_feed_forward_length(f["expert_ffn"])
        w.add_expert_shared_feed_forward_length(f["shared_ffn"])
    w.add_uint32(f"{arch}.ssm.conv_kernel", f["conv"])
    w.add_uint32(f"{arch}.ssm.state_size", f["state"])
    w.add_uint32(f"{arch}.ssm.group_count", f["k_heads"])
    w.add_uint32(f"{arch}.ssm.time_step_rank", f["v_heads"])
    w.add_uint32(f"{arch}.ssm.inner_size", f["v_heads"] * f["state"])
    n_vocab = 0
    if tiny:
        n_vocab = TINY_VOCAB
        w.add_tokenizer_model("no_vocab")
        w.add_vocab_size(n_vocab)
    for key, field in ([] if tiny else gguf.GGUFReader(TOKENIZER).fields.items()):
        if key.startswith("tokenizer."):
            vtype = field.types[0]
            sub = field.types[1] if vtype == gguf.GGUFValueType.ARRAY else None
            w.add_key_value(key, field.contents(), vtype, sub_type=sub)
            if key == "tokenizer.ggml.tokens":
                n_vocab = len(field.contents())

    def matrix(name, rows, cols, std, experts=0):  # ggml [cols, rows] or [cols, rows, experts]
        def one():
            a = rng.standard_normal((rows, cols), dtype=np.float32) * np.float32(std)
            if qtype == gguf.GGMLQuantizationType.F16:
                return a.astype(np.float16)
            return quants.quantize(a, qtype)
        a = np.stack([one() for _ in range(experts)]) if experts else one()
        if qtype == gguf.GGMLQuantizationType.F16:
            w.add_tensor(name, a)
        else:
            w.add_tensor(name, a, raw_dtype=qtype)

    def f32(name, a):
        w.add_tensor(name, np.ascontiguousarray(a, dtype=np.float32))

    def norm(name, n, scale=1.0):
        f32(name, scale * (1.0 + rng.uniform(-0.1, 0.1, n)))

    qs, kvs = f["heads"] * hd, f["kv"] * hd
    key, value = f["k_heads"] * f["state"], f["v_heads"] * f["state"]
    channels = 2 * key + value
    matrix("token_embd.weight", n_vocab, h, 0.06)
    matrix("output.weight", n_vocab, h, 3.0 / np.sqrt(h))
    norm("output_norm.weight", h)
    for i in range(args.layers):
        p = f"blk.{i}."
        norm(p + "attn_norm.weight", h)
        if (i + 1) % f["interval"] != 0:
            matrix(p + "attn_qkv.weight", channels, h, 1.0 / np.sqrt(h))
            matrix(p + "attn_gate.weight", value, h, 1.0 / np.sqrt(h))
            f32(p + "ssm_conv1d.weight", rng.standard_normal((channels, f["conv"])) * 0.5)
            f32(p + "ssm_dt.bias", rng.uniform(-4.0, -2.0, f["v_heads"]))
            f32(p + "ssm_a", -np.exp(rng.uniform(0.0, np.log(16.0), f["v_heads"])))
            if arch == "qwen3next":  # per key head: its value heads' beta rows, then alpha's
                matrix(p + "ssm_ba.weight", 2 * f["v_heads"], h, 1.0 / np.sqrt(h))
            else:
                matrix(p + "ssm_beta.weight", f["v_heads"], h, 1.0 / np.sqrt(h))
                matrix(p + "ssm_alpha.weight", f["v_heads"], h, 1.0 / np.sqrt(h))
            norm(p + "ssm_norm.weight", f["state"])
            matrix(p + "ssm_out.weight", h, value, 1.0 / np.sqrt(value))
        else:
            matrix(p + "attn_q.weight", 2 * qs, h, 1.0 / np.sqrt(h))
            matrix(p + "attn_k.weight", kvs, h, 1.0 / np.sqrt(h))
            matrix(p + "attn_v.weight", kvs, h, 1.0 / np.sqrt(h))
            norm(p + "attn_q_norm.weight", hd)
            norm(p + "attn_k_norm.weight", hd)
            matrix(p + "attn_output.weight", h, qs, 1.0 / np.sqrt(qs))
        norm(p + "post_attention_norm.weight", h)
        if not moe:
            matrix(p + "ffn_gate.weight", f["ffn"], h, 1.0 / np.sqrt(h))
            matrix(p + "ffn_up.weight", f["ffn"], h, 1.0 / np.sqrt(h))
            matrix(p + "ffn_down.weight", h, f["ffn"], 1.0 / np.sqrt(f["ffn"]))
            continue
        n_exp, eff, sf = f["experts"], f["expert_ffn"], f["shared_ffn"]
        f32(p + "ffn_gate_inp.weight", rng.standard_normal((n_exp, h)) * (2.0 / np.sqrt(h)))
        matrix(p + "ffn_gate_exps.weight", eff, h, 1.0 / np.sqrt(h), n_exp)
        matrix(p + "ffn_up_exps.weight", eff, h, 1.0 / np.sqrt(h), n_exp)
        matrix(p + "ffn_down_exps.weight", h, eff, 1.0 / np.sqrt(eff), n_exp)
        f32(p + "ffn_gate_inp_shexp.weight", rng.standard_normal(h) * (1.0 / np.sqrt(h)))
        matrix(p + "ffn_gate_shexp.weight", sf, h, 1.0 / np.sqrt(h))
        matrix(p + "ffn_up_shexp.weight", sf, h, 1.0 / np.sqrt(h))
        matrix(p + "ffn_down_shexp.weight", h, sf, 1.0 / np.sqrt(sf))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
