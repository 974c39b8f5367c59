#!/usr/bin/env python3
"""Synthetic GGUF of a model family with random weights, for comparing radixlm's next-token
distributions with llama.cpp's on the same file (compare.py, make_fixtures.sh).

--shape real: the shapes (hidden, heads, KV heads, head dim, FFN, expert widths) of one real
member of the family with few layers (and, for mixtures of experts, fewer experts), and
SmolLM2-135M's tokenizer (49152 tokens, from RADIXLM_CHAT_MODEL) in place of the real one.
--shape tiny: a few-KB model of the family (hidden 32, 128 tokens, tokenizer.ggml.model
"no_vocab"), the fixtures under tests/model/testdata/.

Weights: matrices N(0, (gain/sqrt(cols))^2) (unit-gain projections, so the residual stream and
attention scores keep a real model's magnitudes), token_embd N(0, std^2) with std chosen for
logits of a few units through the output head, norm weights 1 + U(-0.1, 0.1). Matrices and
token_embd stored in --type (Q8_0 or F16), 1-D tensors in F32. Needs numpy and llama.cpp's
gguf-py (the peer's vendored copy, GGUF_PY).

Usage: synth_family.py FAMILY OUT.gguf [--shape real|tiny] [--type Q8_0] [--layers N]
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

# Real shapes (hidden, heads, kv heads, head_dim, ffn) of one member of each family; the
# family's own keys; which per-layer tensors it has.
REAL = {
    # gemma-2-2b; sliding_window 4096 -> 128 so the window masks within the compared positions.
    # The head is the embedding (gemma2 has no output.weight) and the embedding enters scaled
    # by sqrt(hidden): a small embedding keeps the residual stream the layers' (else every
    # position predicts its own token with probability 1), a large output_norm weight gives
    # the logits a few units.
    "gemma2": dict(hidden=2304, heads=8, kv=4, hd=256, ffn=9216, layers=4, tied=True,
                   rope=10000.0, eps=1e-6,
                   keys={"attention.sliding_window": 128, "attn_logit_softcapping": 50.0,
                         "final_logit_softcapping": 30.0},
                   tensors=["attn_norm", "qkv", "post_attention_norm", "ffn_norm", "ffn",
                            "post_ffw_norm"], q_gain=2.0, embd_std=0.003, out_norm=20.0),
    # Ministral-3-3B: YaRN x16 and attention temperature 0.1 over an original context of 128
    # (16384 in the real model) so that the temperature's floor steps within the compared
    # positions.
    "mistral3": dict(hidden=3072, heads=32, kv=8, hd=128, ffn=9216, layers=4, tied=True,
                     rope=1000000.0, eps=1e-5,
                     keys={"rope.scaling.type": "yarn", "rope.scaling.factor": 16.0,
                           "rope.scaling.original_context_length": 128,
                           "rope.scaling.yarn_beta_fast": 32.0, "rope.scaling.yarn_beta_slow": 1.0,
                           "rope.scaling.yarn_log_multiplier": 1.0,
                           "attention.temperature_scale": 0.1},
                     tensors=["attn_norm", "qkv", "ffn_norm", "ffn"]),
    # GLM-4-9B-0414: norms before and after each block, fused gate-up, RoPE on half of each
    # head, Q/K/V biases.
    "glm4": dict(hidden=4096, heads=32, kv=2, hd=128, ffn=13696, layers=3, tied=False,
                 rope=10000.0, eps=1e-5, keys={}, rope_dims=64,
                 tensors=["attn_norm", "qkv", "qkv_bias", "post_attention_norm", "ffn_norm",
                          "ffn_fused", "post_ffw_norm"]),
    # granite-3.1-2b-instruct, but with an output.weight: through the tied head, an embedding
    # large enough (times embedding_scale 12) for logits of a few units after the division by
    # logit_scale 8 dominates the residual stream, and every position predicts its own token.
    "granite": dict(hidden=2048, heads=32, kv=8, hd=64, ffn=8192, layers=4, tied=False,
                    rope=5000000.0, eps=1e-5,
                    keys={"embedding_scale": 12.0, "residual_scale": 0.22,
                          "attention.scale": 0.015625, "logit_scale": 8.0},
                    tensors=["attn_norm", "qkv", "ffn_norm", "ffn"], embd_std=0.02,
                    out_gain=24.0),
    # OLMo-2-0425-1B
    "olmo2": dict(hidden=2048, heads=16, kv=16, hd=128, ffn=8192, layers=4, tied=False,
                  rope=500000.0, eps=1e-6, keys={},
                  tensors=["qkv", "qk_norm_row", "post_attention_norm", "ffn",
                           "post_ffw_norm"]),
    # Phi-3.5-mini-instruct: fused QKV and gate-up, LongRoPE factors and attention factor; the
    # original context 512 (4096 in the real model) so that the long factors apply at the
    # compared lengths, as they do at the real model's full context.
    "phi3": dict(hidden=3072, heads=32, kv=32, hd=96, ffn=8192, layers=4, tied=False,
                 rope=10000.0, eps=1e-5,
                 keys={"rope.scaling.original_context_length": 512,
                       "rope.scaling.attn_factor": 1.190238},
                 tensors=["attn_norm", "qkv_fused", "ffn_norm", "ffn_fused"], longrope=True),
    # Qwen3-30B-A3B's widths (128 experts of 768, 8 per token) with 32 experts: per-head Q/K
    # norms, NeoX RoPE, a mixture of experts in every layer.
    "qwen3moe": dict(hidden=2048, heads=32, kv=4, hd=128, ffn=6144, layers=4, tied=False,
                     rope=1000000.0, eps=1e-6,
                     keys={"expert_count": 32, "expert_used_count": 8,
                           "expert_feed_forward_length": 768},
                     tensors=["attn_norm", "qkv", "qk_norm", "ffn_norm", "moe"]),
    # Qwen3-VL-2B's language side: qwen3 with interleaved M-RoPE (sections 24/20/20/0: pairs 61
    # and 62 of each head take the fourth section's position 0 and are not rotated) and 3
    # deepstack layers (text rows add nothing there).
    "qwen3vl": dict(hidden=2048, heads=16, kv=8, hd=128, ffn=6144, layers=4, tied=True,
                    rope=5000000.0, eps=1e-6,
                    keys={"rope.dimension_sections": [24, 20, 20, 0], "n_deepstack_layers": 3},
                    tensors=["attn_norm", "qkv", "qk_norm", "ffn_norm", "ffn"]),
    # Qwen3-VL-30B-A3B's language side: qwen3moe's widths and experts (32 of 128 here) with
    # qwen3vl's interleaved M-RoPE and deepstack.
    "qwen3vlmoe": dict(hidden=2048, heads=32, kv=4, hd=128, ffn=6144, layers=4, tied=False,
                       rope=5000000.0, eps=1e-6,
                       keys={"expert_count": 32, "expert_used_count": 8,
                             "expert_feed_forward_length": 768,
                             "rope.dimension_sections": [24, 20, 20, 0], "n_deepstack_layers": 3},
                       tensors=["attn_norm", "qkv", "qk_norm", "ffn_norm", "moe"]),
    # Mixtral-8x7B's widths (8 experts of 14336, 2 per token) with 4 experts: a llama file with
    # llama.expert_count.
    "mixtral": dict(arch="llama", hidden=4096, heads=32, kv=8, hd=128, ffn=14336, layers=2,
                    tied=False, rope=1000000.0, eps=1e-5,
                    keys={"expert_count": 4, "expert_used_count": 2},
                    tensors=["attn_norm", "qkv", "ffn_norm", "moe"]),
    # gemma-4-E2B: sliding layers (head 256, base 1e4, window 512) and global ones (head 512,
    # base 1e6, proportional RoPE on a quarter of the pairs) four to one, then a sliding and a
    # global layer reading the K/V of layers 3 and 4 with a double-wide FFN; per-layer inputs
    # of 256, one KV head, final soft-cap 30. 7 layers (35 in the real model, the last 20
    # sharing K/V). A tied head, hence gemma2's small embedding and large output_norm weight.
    # Q·K is not scaled (the norms set its size): Q and K norm weights of d^-1/4 keep the scores
    # a unit's spread, as a trained model's norms do (with weights 1, scores of std sqrt(d) make
    # every attention a near-argmax that llama.cpp flips between batch shapes: self-KL 2.3).
    "gemma4": dict(hidden=1536, heads=8, kv=1, hd=512, hd_swa=256, ffn=6144, layers=7,
                   tied=True, rope=1000000.0, eps=1e-6, keys={}, window=512, shared=2,
                   per_layer=256, pattern="SSSSFSF", softcap=30.0, embd_std=0.003,
                   out_norm=20.0, qk_norm=1.0),
    # gemma-4-26B-A4B: hidden 2816, 16 query heads; sliding layers with 8 KV heads of 256
    # (window 1024 -> 128, so that it masks within the compared positions), global ones with 2
    # KV heads of 512 whose V is K's projection (no attn_v); a dense FFN of 2112 beside 128
    # experts of 704 (8 per token) in every layer, the experts' gate and up fused
    # (ffn_gate_up_exps, as the converter writes them); no per-layer inputs, no shared K/V.
    # 6 layers (5 sliding, 1 global, as the real model's 30 repeat) and 32 experts. The router
    # reads RMSNorm(x) / sqrt(hidden) * ffn_gate_inp.scale: router rows N(0, 4^2) give logits of
    # about 4 units' spread, so that the 8th and 9th experts are rarely within rounding of each
    # other (with N(0, 1) llama.cpp's own batch-vs-one-by-one KL is 3.2e-2: README.md).
    "gemma4moe": dict(arch="gemma4", hidden=2816, heads=16, kv=2, kv_swa=8, hd=512, hd_swa=256,
                      ffn=2112, layers=6, tied=True, rope=1000000.0, eps=1e-6, keys={},
                      window=128, shared=0, per_layer=0, pattern="SSSSSF", softcap=30.0,
                      embd_std=0.003, out_norm=20.0, qk_norm=1.0, k_eq_v=True,
                      moe=dict(n_exp=32, used=8, eff=704, fused="all", router_gain=4.0)),
    # gpt-oss-20b's widths (hidden 2880, 64 heads / 8 KV of 64, 32 experts of 2880, 4 per
    # token) with 8 experts and 4 layers: window 128 on layers 0 and 2, YaRN x32 over 4096 on
    # every layer, sinks, biases on attention, router and experts; the experts in MXFP4 (as the
    # published files), the rest in --type.
    "gpt-oss": dict(hidden=2880, heads=64, kv=8, hd=64, ffn=2880, layers=4, tied=False,
                    rope=150000.0, eps=1e-5,
                    keys={"expert_count": 8, "expert_used_count": 4,
                          "expert_feed_forward_length": 2880, "attention.sliding_window": 128,
                          "rope.scaling.type": "yarn", "rope.scaling.factor": 32.0,
                          "rope.scaling.original_context_length": 4096},
                    tensors=["attn_norm", "qkv", "qkv_bias", "attn_output_bias", "sinks",
                             "post_attention_norm", "moe_oss"]),
    # DeepSeek-V2-Lite's widths (hidden 2048, 16 heads; MLA: plain attn_q, latent 512, nope 128 +
    # rope 64 per query head, values of 128; dense FFN 10944; 64 experts of 1408, 6 per token,
    # 2 shared; softmax routing, weights not normalized) with 4 layers (1 dense, as the real
    # model's first) and 16 experts; YaRN x40 over 4096 with mscale_all_dim 0.707. "hd" is the
    # cache row: latent + rope part. (q_lora_rank 0: llama.cpp reads the key unless the model
    # has V2-Lite's 27 layers.)
    "deepseek2": dict(hidden=2048, heads=16, kv=1, hd=576, ffn=10944, layers=4, tied=False,
                      rope=10000.0, eps=1e-6, rope_dims=64,
                      mla=dict(kv_rank=512, q_rank=0, nope=128, v=128, dense=1, n_exp=16,
                               used=6, eff=1408, shared=2, mscale_all_dim=0.707),
                      keys={"expert_gating_func": 1, "expert_weights_scale": 1.0,
                            "rope.scaling.type": "yarn", "rope.scaling.factor": 40.0,
                            "rope.scaling.original_context_length": 4096}),
    # DeepSeek-V3's widths (hidden 7168, 128 heads; MLA with q_lora 1536; dense FFN 18432;
    # experts of 2048, 1 shared; sigmoid scores with the selection bias, 8 groups of which 4 are
    # used, weights normalized and scaled by 2.5) with 2 layers (1 dense) and 16 experts in 8
    # groups of 2, 4 per token; YaRN x40 over 4096 with mscale_all_dim 1.
    "deepseek2-v3": dict(arch="deepseek2", hidden=7168, heads=128, kv=1, hd=576, ffn=18432,
                         layers=2, tied=False, rope=10000.0, eps=1e-6, rope_dims=64,
                         mla=dict(kv_rank=512, q_rank=1536, nope=128, v=128, dense=1, n_exp=16,
                                  used=4, eff=2048, shared=1, mscale_all_dim=1.0, bias=True),
                         keys={"expert_gating_func": 2, "expert_weights_scale": 2.5,
                               "expert_weights_norm": True, "expert_group_count": 8,
                               "expert_group_used_count": 4,
                               "rope.scaling.type": "yarn", "rope.scaling.factor": 40.0,
                               "rope.scaling.original_context_length": 4096}),
    # SmolLM3-3B (layer 3 has no RoPE)
    "smollm3": dict(hidden=2048, heads=16, kv=4, hd=128, ffn=11008, layers=4, tied=True,
                    rope=5000000.0, eps=1e-6, keys={},
                    tensors=["attn_norm", "qkv", "ffn_norm", "ffn"]),
}

# The tiny fixtures: hidden 32, two query heads of 32, 128 tokens; sliding windows of 8 and
# soft-caps low enough that tanh bends, so every block the family uses shows in 64 positions.
TINY_BASE = dict(hidden=32, heads=2, kv=1, hd=32, ffn=64, layers=4, rope=10000.0, eps=1e-6)
TINY = {
    "gemma2": dict(TINY_BASE, tied=True,
                   keys={"attention.sliding_window": 8, "attn_logit_softcapping": 3.0,
                         "final_logit_softcapping": 5.0},
                   tensors=REAL["gemma2"]["tensors"], embd_std=0.6, q_gain=2.0),
    # Untied, so that the embedding (times 12) need not dominate the residual stream for the
    # logits to have a few units after the division by logit_scale.
    "granite": dict(TINY_BASE, layers=3, tied=False,
                    keys={"embedding_scale": 12.0, "residual_scale": 0.22,
                          "attention.scale": 0.125, "logit_scale": 8.0},
                    tensors=REAL["granite"]["tensors"], embd_std=0.02, out_gain=24.0),
    # llama.cpp's olmo2 takes the head dimension as hidden / heads.
    "olmo2": dict(TINY_BASE, hidden=64, kv=2, tied=False, keys={"attention.sliding_window": 8},
                  tensors=REAL["olmo2"]["tensors"]),
    "qwen3moe": dict(TINY_BASE, hidden=64, kv=2, hd=16, heads=4, layers=3, tied=False,
                     keys={"expert_count": 8, "expert_used_count": 3,
                           "expert_feed_forward_length": 32},
                     tensors=REAL["qwen3moe"]["tensors"]),
    # 8 pairs a head in sections 2/2/2/1 (sector 7 of each 7: pair 6 takes position 0).
    "qwen3vl": dict(TINY_BASE, hidden=64, kv=2, hd=16, heads=4, layers=3, tied=False,
                    keys={"rope.dimension_sections": [2, 2, 2, 1], "n_deepstack_layers": 2},
                    tensors=REAL["qwen3vl"]["tensors"]),
    "qwen3vlmoe": dict(TINY_BASE, hidden=64, kv=2, hd=16, heads=4, layers=3, tied=False,
                       keys={"expert_count": 8, "expert_used_count": 3,
                             "expert_feed_forward_length": 32,
                             "rope.dimension_sections": [2, 2, 2, 1], "n_deepstack_layers": 2},
                       tensors=REAL["qwen3vlmoe"]["tensors"]),
    "mixtral": dict(TINY_BASE, arch="llama", layers=3, tied=False,
                    keys={"expert_count": 4, "expert_used_count": 2},
                    tensors=REAL["mixtral"]["tensors"]),
    "smollm3": dict(TINY_BASE, layers=5, tied=True, keys={},
                    tensors=REAL["smollm3"]["tensors"], embd_std=0.6),
    "glm4": dict(TINY_BASE, hidden=64, layers=3, tied=False, keys={}, rope_dims=16,
                 tensors=REAL["glm4"]["tensors"]),
    "mistral3": dict(TINY_BASE, layers=3, tied=False,
                     keys={"rope.scaling.type": "yarn", "rope.scaling.factor": 4.0,
                           "rope.scaling.original_context_length": 8,
                           "rope.scaling.yarn_beta_fast": 32.0, "rope.scaling.yarn_beta_slow": 1.0,
                           "attention.temperature_scale": 0.5},
                     tensors=REAL["mistral3"]["tensors"]),
    # Five layers (sliding, sliding, global, then a sliding and a global reading 1's and 2's
    # K/V), two KV heads on the sliding layers and one on the global ones.
    "gemma4": dict(TINY_BASE, hd=32, hd_swa=16, kv=1, kv_swa=2, layers=5, tied=True, keys={},
                   rope=1000000.0,
                   window=8, shared=2, per_layer=32, pattern="SSFSF", softcap=5.0,
                   embd_std=0.6, qk_norm=16 ** 0.25),
    # Gemma 4's mixture of experts: 4 experts of 32 (2 per token) beside the dense FFN; the
    # experts' gate and up fused on layers 0 and 2, separate on 1 and 4; layer 3 dense (no
    # router: llama.cpp decides per layer). The global layers' V is K's projection.
    "gemma4moe": dict(TINY_BASE, arch="gemma4", hd=32, hd_swa=16, kv=1, kv_swa=2, layers=5,
                      tied=True, keys={}, rope=1000000.0, window=8, shared=0, per_layer=0,
                      pattern="SSFSF", softcap=5.0, embd_std=0.6, qk_norm=16 ** 0.25,
                      k_eq_v=True, moe=dict(n_exp=4, used=2, eff=32, fused=(0, 2), dense=(3,))),
    # Widths that MXFP4's blocks of 32 divide; window 8, YaRN x4 over 16.
    "gpt-oss": dict(TINY_BASE, hidden=64, heads=4, kv=2, hd=16, ffn=64, tied=False,
                    keys=dict(REAL["gpt-oss"]["keys"], **{
                        "expert_count": 4, "expert_used_count": 2,
                        "expert_feed_forward_length": 64, "attention.sliding_window": 8,
                        "rope.scaling.factor": 4.0, "rope.scaling.original_context_length": 16}),
                    tensors=REAL["gpt-oss"]["tensors"]),
    # llama.cpp's phi3 takes Q's width as hidden; original context 32 < the 64 compared
    # positions: the long factors apply in both engines.
    "phi3": dict(TINY_BASE, hidden=64, kv=2, layers=3, tied=False,
                 keys={"rope.scaling.original_context_length": 32,
                       "rope.scaling.attn_factor": 1.19},
                 tensors=REAL["phi3"]["tensors"], longrope=True),
}
TINY_VOCAB = 128


def gemma4_layers(f, layers):
    """Per layer: (sliding, head dim, KV heads, FFN width, has K/V of its own)."""
    n_kv = layers - f["shared"]
    out = []
    for i in range(layers):
        sliding = f["pattern"][i] == "S"
        out.append((sliding, f["hd_swa"] if sliding else f["hd"],
                    f.get("kv_swa", f["kv"]) if sliding else f["kv"],
                    f["ffn"] if i < n_kv else 2 * f["ffn"], i < n_kv))
    return out


def gemma4_metadata(w, f, layers):
    arch = "gemma4"
    spec = gemma4_layers(f, layers)
    w.add_array(f"{arch}.feed_forward_length", [s[3] for s in spec])
    w.add_array(f"{arch}.attention.head_count_kv", [s[2] for s in spec])
    w.add_array(f"{arch}.attention.sliding_window_pattern", [s[0] for s in spec])
    w.add_uint32(f"{arch}.attention.sliding_window", f["window"])
    w.add_uint32(f"{arch}.attention.key_length_swa", f["hd_swa"])
    w.add_uint32(f"{arch}.attention.value_length_swa", f["hd_swa"])
    w.add_uint32(f"{arch}.rope.dimension_count_swa", f["hd_swa"])
    w.add_float32(f"{arch}.rope.freq_base_swa", 10000.0)
    w.add_uint32(f"{arch}.attention.shared_kv_layers", f["shared"])
    w.add_uint32(f"{arch}.embedding_length_per_layer_input", f["per_layer"])
    w.add_float32(f"{arch}.final_logit_softcapping", f["softcap"])
    if "moe" in f:
        w.add_uint32(f"{arch}.expert_count", f["moe"]["n_exp"])
        w.add_uint32(f"{arch}.expert_used_count", f["moe"]["used"])
        w.add_uint32(f"{arch}.expert_feed_forward_length", f["moe"]["eff"])


def gemma4_tensors(f, layers, n_vocab, matrix, norm, w, rng):
    h, heads, pl = f["hidden"], f["heads"], f["per_layer"]
    # Proportional RoPE on the global layers: a quarter of the pairs rotate, the others get
    # factors so large that they stay in place (as the HF converter writes rope_freqs).
    half = f["hd"] // 2
    w.add_tensor("rope_freqs.weight",
                 np.array([1.0] * (half // 4) + [1e30] * (half - half // 4), dtype=np.float32))
    if pl:
        matrix("per_layer_token_embd.weight", n_vocab, pl * layers, 1.0 / np.sqrt(pl))
        matrix("per_layer_model_proj.weight", pl * layers, h, 1.0 / np.sqrt(h))
        norm("per_layer_proj_norm.weight", pl)
    for i, (sliding, hd, kv, ffn, own_kv) in enumerate(gemma4_layers(f, layers)):
        p = f"blk.{i}."
        qs, kvs = heads * hd, kv * hd
        norm(p + "attn_norm.weight", h)
        matrix(p + "attn_q.weight", qs, h, 1.0 / np.sqrt(h))
        if own_kv:
            matrix(p + "attn_k.weight", kvs, h, 1.0 / np.sqrt(h))
            if sliding or not f.get("k_eq_v"):
                matrix(p + "attn_v.weight", kvs, h, 1.0 / np.sqrt(h))
            norm(p + "attn_k_norm.weight", hd, f.get("qk_norm", 1.0) / hd ** 0.25)
        norm(p + "attn_q_norm.weight", hd, f.get("qk_norm", 1.0) / hd ** 0.25)
        matrix(p + "attn_output.weight", h, qs, 1.0 / np.sqrt(qs))
        norm(p + "post_attention_norm.weight", h)
        norm(p + "ffn_norm.weight", h)
        matrix(p + "ffn_gate.weight", ffn, h, 1.0 / np.sqrt(h))
        matrix(p + "ffn_up.weight", ffn, h, 1.0 / np.sqrt(h))
        matrix(p + "ffn_down.weight", h, ffn, 1.0 / np.sqrt(ffn))
        norm(p + "post_ffw_norm.weight", h)
        if "moe" in f and i not in f["moe"].get("dense", ()):
            gemma4_experts(f, p, i, matrix, norm, w, rng)
        if pl:
            matrix(p + "inp_gate.weight", pl, h, 1.0 / np.sqrt(h))
            matrix(p + "proj.weight", h, pl, 1.0 / np.sqrt(pl))
            norm(p + "post_norm.weight", h)
        w.add_tensor(p + "layer_output_scale.weight",
                     np.array([rng.uniform(0.5, 1.0)], dtype=np.float32))


def deepseek2_metadata(w, f):
    arch, m = "deepseek2", f["mla"]
    w.add_uint32(f"{arch}.attention.kv_lora_rank", m["kv_rank"])
    w.add_uint32(f"{arch}.attention.q_lora_rank", m["q_rank"])
    w.add_uint32(f"{arch}.attention.key_length_mla", m["nope"] + f["rope_dims"])
    w.add_uint32(f"{arch}.attention.value_length_mla", m["v"])
    w.add_uint32(f"{arch}.leading_dense_block_count", m["dense"])
    w.add_uint32(f"{arch}.expert_count", m["n_exp"])
    w.add_uint32(f"{arch}.expert_used_count", m["used"])
    w.add_uint32(f"{arch}.expert_feed_forward_length", m["eff"])
    w.add_uint32(f"{arch}.expert_shared_count", m["shared"])
    # (the converter's legacy 0.1 * mscale_all_dim)
    w.add_float32(f"{arch}.rope.scaling.yarn_log_multiplier", 0.1 * m["mscale_all_dim"])


def deepseek2_tensors(f, layers, matrix, norm, w, rng):
    """DeepSeek's MLA and MoE layers: unit-gain projections, attn_k_b scaled so that each
    head's expanded nope key has unit values, the router in F32."""
    m, h, heads = f["mla"], f["hidden"], f["heads"]
    r, rope, key, v = m["kv_rank"], f["rope_dims"], m["nope"] + f["rope_dims"], m["v"]
    for i in range(layers):
        p = f"blk.{i}."
        norm(p + "attn_norm.weight", h)
        if m["q_rank"]:
            matrix(p + "attn_q_a.weight", m["q_rank"], h, 1.0 / np.sqrt(h))
            norm(p + "attn_q_a_norm.weight", m["q_rank"])
            matrix(p + "attn_q_b.weight", heads * key, m["q_rank"], 1.0 / np.sqrt(m["q_rank"]))
        else:
            matrix(p + "attn_q.weight", heads * key, h, 1.0 / np.sqrt(h))
        matrix(p + "attn_kv_a_mqa.weight", r + rope, h, 1.0 / np.sqrt(h))
        norm(p + "attn_kv_a_norm.weight", r)
        matrix(p + "attn_k_b.weight", r, m["nope"], 1.0 / np.sqrt(r), heads)
        matrix(p + "attn_v_b.weight", v, r, 1.0 / np.sqrt(r), heads)
        matrix(p + "attn_output.weight", h, heads * v, 1.0 / np.sqrt(heads * v))
        norm(p + "ffn_norm.weight", h)
        if i < m["dense"]:
            matrix(p + "ffn_gate.weight", f["ffn"], h, 1.0 / np.sqrt(h))
            matrix(p + "ffn_up.weight", f["ffn"], h, 1.0 / np.sqrt(h))
            matrix(p + "ffn_down.weight", h, f["ffn"], 1.0 / np.sqrt(f["ffn"]))
            continue
        n_exp, eff, sf = m["n_exp"], m["eff"], m["eff"] * m["shared"]
        w.add_tensor(p + "ffn_gate_inp.weight",
                     rng.standard_normal((n_exp, h), dtype=np.float32) *
                     np.float32(f.get("router_gain", 1.0) / np.sqrt(h)))
        if m.get("bias"):
            spread = f.get("bias_spread", 0.05)
            w.add_tensor(p + "exp_probs_b.bias",
                         rng.uniform(-spread, spread, n_exp).astype(np.float32))
        matrix(p + "ffn_gate_exps.weight", eff, h, 1.0 / np.sqrt(h), n_exp)
        matrix(p + "ffn_up_exps.weight", eff, h, 1.0 / np.sqrt(h), n_exp)
        matrix(p + "ffn_down_exps.weight", h, eff, 1.0 / np.sqrt(eff), n_exp)
        matrix(p + "ffn_gate_shexp.weight", sf, h, 1.0 / np.sqrt(h))
        matrix(p + "ffn_up_shexp.weight", sf, h, 1.0 / np.sqrt(h))
        matrix(p + "ffn_down_shexp.weight", h, sf, 1.0 / np.sqrt(sf))


def gemma4_experts(f, p, i, matrix, norm, w, rng):
    """A Gemma 4 MoE layer's router (F32, with its input scale), the experts' norms, their
    matrices (gate and up fused where f["moe"]["fused"] says) and per-expert output scales."""
    m, h = f["moe"], f["hidden"]
    n_exp, eff = m["n_exp"], m["eff"]
    w.add_tensor(p + "ffn_gate_inp.weight",
                 rng.standard_normal((n_exp, h), dtype=np.float32) *
                 np.float32(m.get("router_gain", 1.0)))
    norm(p + "ffn_gate_inp.scale", h)
    norm(p + "pre_ffw_norm_2.weight", h)
    norm(p + "post_ffw_norm_1.weight", h)
    norm(p + "post_ffw_norm_2.weight", h)
    if m["fused"] == "all" or i in m["fused"]:  # per expert: the gate's rows, then the up's
        matrix(p + "ffn_gate_up_exps.weight", 2 * eff, h, 1.0 / np.sqrt(h), n_exp)
    else:
        matrix(p + "ffn_gate_exps.weight", eff, h, 1.0 / np.sqrt(h), n_exp)
        matrix(p + "ffn_up_exps.weight", eff, h, 1.0 / np.sqrt(h), n_exp)
    matrix(p + "ffn_down_exps.weight", h, eff, 1.0 / np.sqrt(eff), n_exp)
    w.add_tensor(p + "ffn_down_exps.scale", rng.uniform(0.5, 1.5, n_exp).astype(np.float32))


def mxfp4_experts(w, rng, name, n_exp, rows, cols, std):
    """n_exp stacked [cols, rows] matrices N(0, std^2) in MXFP4, quantized 256 rows at a time
    (gguf-py's quantizer holds 16 candidates per value)."""
    qtype = gguf.GGMLQuantizationType.MXFP4
    out = np.empty((n_exp, rows, cols // 32 * 17), dtype=np.uint8)
    for e in range(n_exp):
        for r in range(0, rows, 256):
            a = rng.standard_normal((min(256, rows - r), cols), dtype=np.float32) * np.float32(std)
            out[e, r:r + a.shape[0]] = quants.quantize(a, qtype)
    w.add_tensor(name, out, raw_dtype=qtype)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("family", choices=REAL)
    ap.add_argument("out")
    ap.add_argument("--shape", default="real", choices=["real", "tiny"])
    ap.add_argument("--type", default="Q8_0", choices=["Q8_0", "F16"])
    ap.add_argument("--layers", type=int, default=0)  # (gemma4: its pattern's)
    ap.add_argument("--seed", type=int, default=1234)
    # Tensors go to a temporary file as they are made (TMPDIR): memory stays at about one
    # tensor, for whole-model shapes; needs the file's size again in free disk.
    ap.add_argument("--spool", action="store_true")
    # Router rows N(0, (gain / sqrt(hidden))^2) for the llama / qwen3moe / gpt-oss / deepseek2
    # routers (gemma4moe sets its own). Random routers of unit gain put the k-th and (k+1)-th
    # experts within rounding of each other at many positions, so the last bits of the hidden
    # state (batch shape, summation order) pick other experts; trained routers are decisive.
    ap.add_argument("--router-gain", type=float, default=None)
    # deepseek2-v3: the selection bias exp_probs_b U(-spread, spread) (0.05 by default)
    ap.add_argument("--bias-spread", type=float, default=None)
    # deepseek2: the routed expert count (the real V2-Lite's 64 for speed files; 16 by default)
    ap.add_argument("--experts", type=int, default=0)
    ap.add_argument("--context", type=int, default=4096, help="<arch>.context_length written")
    args = ap.parse_args()
    f = dict((REAL if args.shape == "real" else TINY)[args.family])
    if args.router_gain is not None:
        f["router_gain"] = args.router_gain
    if args.bias_spread is not None:
        f["bias_spread"] = args.bias_spread
    if args.experts:
        if "mla" not in f:
            raise SystemExit("--experts is for the deepseek2 shapes")
        f["mla"] = dict(f["mla"], n_exp=args.experts)
    layers = args.layers or f["layers"]
    if f.get("arch", args.family) == "gemma4":
        layers = len(f["pattern"])
    rng = np.random.default_rng(args.seed)
    qtype = {"Q8_0": gguf.GGMLQuantizationType.Q8_0,
             "F16": gguf.GGMLQuantizationType.F16}[args.type]

    arch = f.get("arch", args.family)  # mixtral is written as llama
    w = gguf.GGUFWriter(args.out, arch, use_temp_file=args.spool)
    # (not the family in the name: llama.cpp keys vocabulary fix-ups on phi3 / phi-3 in it)
    w.add_name(f"synthetic GGUF ({args.shape} shape, {layers} layers, random weights)")
    h, hd = f["hidden"], f["hd"]
    w.add_context_length(args.context)
    w.add_embedding_length(h)
    w.add_block_count(layers)
    w.add_head_count(f["heads"])
    if f.get("arch", args.family) == "gemma4":
        gemma4_metadata(w, f, layers)
    else:
        w.add_feed_forward_length(f["ffn"])
        w.add_head_count_kv(f["kv"])
    w.add_key_length(hd)
    w.add_value_length(f["mla"]["kv_rank"] if "mla" in f else hd)
    if "mla" in f:
        deepseek2_metadata(w, f)
    w.add_rope_dimension_count(f.get("rope_dims", hd))
    w.add_rope_freq_base(f["rope"])
    w.add_layer_norm_rms_eps(f["eps"])
    for key, value in f["keys"].items():
        full = f"{arch}.{key}"
        if isinstance(value, str):
            w.add_string(full, value)
        elif isinstance(value, list):
            w.add_array(full, value)
        elif isinstance(value, bool):
            w.add_bool(full, value)
        elif isinstance(value, int):
            w.add_uint32(full, value)
        else:
            w.add_float32(full, value)
    if args.shape == "tiny":
        n_vocab = TINY_VOCAB
        w.add_tokenizer_model("no_vocab")
        w.add_vocab_size(n_vocab)
    else:
        if not TOKENIZER:
            sys.exit("set RADIXLM_CHAT_MODEL to SmolLM2-135M-Instruct's GGUF (scripts/setup.sh)")
        n_vocab = 0
        for key, field in gguf.GGUFReader(TOKENIZER).fields.items():
            if key.startswith("tokenizer."):
                vtype = field.types[0]
                sub = field.types[1] if vtype == gguf.GGUFValueType.ARRAY else None
                w.add_key_value(key, field.contents(), vtype, sub_type=sub)
                if key == "tokenizer.ggml.tokens":
                    n_vocab = len(field.contents())

    def matrix(name, rows, cols, std, experts=0):
        shape = (experts, rows, cols) if experts else (rows, cols)  # ggml: [cols, rows, n]
        a = rng.standard_normal(shape, dtype=np.float32) * np.float32(std)
        if qtype == gguf.GGMLQuantizationType.F16:
            w.add_tensor(name, a.astype(np.float16))
        else:
            w.add_tensor(name, quants.quantize(a, qtype), raw_dtype=qtype)

    def norm(name, n, scale=1.0):
        w.add_tensor(name, (scale * (1.0 + rng.uniform(-0.1, 0.1, n))).astype(np.float32))

    qs, kvs = f["heads"] * hd, f["kv"] * hd
    matrix("token_embd.weight", n_vocab, h, f.get("embd_std", 0.06))
    if not f["tied"]:
        matrix("output.weight", n_vocab, h, f.get("out_gain", 3.0) / np.sqrt(h))
    norm("output_norm.weight", h, f.get("out_norm", 1.0))
    if f.get("longrope"):  # long factors grow with the pair index, short ones stay near 1
        half = f.get("rope_dims", hd) // 2
        w.add_tensor("rope_factors_long.weight",
                     (1.0 + 0.5 * np.arange(half)).astype(np.float32))
        w.add_tensor("rope_factors_short.weight",
                     (1.0 + rng.uniform(0.0, 0.1, half)).astype(np.float32))
    if f.get("arch", args.family) == "gemma4":
        gemma4_tensors(f, layers, n_vocab, matrix, norm, w, rng)
    if "mla" in f:
        deepseek2_tensors(f, layers, matrix, norm, w, rng)
    for i in range(layers if f.get("arch", args.family) != "gemma4" and "mla" not in f else 0):
        p = f"blk.{i}."
        for t in f["tensors"]:
            if t in ("attn_norm", "ffn_norm", "post_attention_norm", "post_ffw_norm"):
                norm(p + t + ".weight", h)
            elif t == "qkv":
                matrix(p + "attn_q.weight", qs, h, f.get("q_gain", 1.0) / np.sqrt(h))
                matrix(p + "attn_k.weight", kvs, h, 1.0 / np.sqrt(h))
                matrix(p + "attn_v.weight", kvs, h, 1.0 / np.sqrt(h))
                matrix(p + "attn_output.weight", h, qs, 1.0 / np.sqrt(qs))
            elif t == "qkv_fused":
                matrix(p + "attn_qkv.weight", qs + 2 * kvs, h, 1.0 / np.sqrt(h))
                matrix(p + "attn_output.weight", h, qs, 1.0 / np.sqrt(qs))
            elif t == "ffn_fused":  # the gate's rows, then the up's
                matrix(p + "ffn_up.weight", 2 * f["ffn"], h, 1.0 / np.sqrt(h))
                matrix(p + "ffn_down.weight", h, f["ffn"], 1.0 / np.sqrt(f["ffn"]))
            elif t == "qkv_bias":
                for name, n in (("attn_q.bias", qs), ("attn_k.bias", kvs), ("attn_v.bias", kvs)):
                    w.add_tensor(p + name, rng.uniform(-0.5, 0.5, n).astype(np.float32))
            elif t == "qk_norm":
                norm(p + "attn_q_norm.weight", hd)
                norm(p + "attn_k_norm.weight", hd)
            elif t == "moe":  # the router in F32 (as converters and llama-quantize keep it)
                n_exp = f["keys"]["expert_count"]
                eff = f["keys"].get("expert_feed_forward_length", f["ffn"])
                w.add_tensor(p + "ffn_gate_inp.weight",
                             (rng.standard_normal((n_exp, h), dtype=np.float32) *
                              np.float32(f.get("router_gain", 1.0) / np.sqrt(h))))
                matrix(p + "ffn_gate_exps.weight", eff, h, 1.0 / np.sqrt(h), n_exp)
                matrix(p + "ffn_up_exps.weight", eff, h, 1.0 / np.sqrt(h), n_exp)
                matrix(p + "ffn_down_exps.weight", h, eff, 1.0 / np.sqrt(eff), n_exp)
            elif t == "attn_output_bias":
                w.add_tensor(p + "attn_output.bias", rng.uniform(-0.1, 0.1, h).astype(np.float32))
            elif t == "sinks":  # around the scores' size: some heads mostly attend to nothing
                w.add_tensor(p + "attn_sinks.weight",
                             rng.uniform(-1.0, 3.0, f["heads"]).astype(np.float32))
            elif t == "moe_oss":  # gpt-oss: biased router and experts, MXFP4 expert matrices
                n_exp = f["keys"]["expert_count"]
                eff = f["keys"]["expert_feed_forward_length"]
                w.add_tensor(p + "ffn_gate_inp.weight",
                             (rng.standard_normal((n_exp, h), dtype=np.float32) *
                              np.float32(f.get("router_gain", 1.0) / np.sqrt(h))))
                w.add_tensor(p + "ffn_gate_inp.bias", rng.uniform(-0.5, 0.5, n_exp).astype(np.float32))
                mxfp4_experts(w, rng, p + "ffn_gate_exps.weight", n_exp, eff, h, 1.0 / np.sqrt(h))
                mxfp4_experts(w, rng, p + "ffn_up_exps.weight", n_exp, eff, h, 1.0 / np.sqrt(h))
                mxfp4_experts(w, rng, p + "ffn_down_exps.weight", n_exp, h, eff, 1.0 / np.sqrt(eff))
                for name, n in (("ffn_gate_exps.bias", eff), ("ffn_up_exps.bias", eff),
                                ("ffn_down_exps.bias", h)):
                    w.add_tensor(p + name, rng.uniform(-0.1, 0.1, (n_exp, n)).astype(np.float32))
            elif t == "qk_norm_row":
                norm(p + "attn_q_norm.weight", qs)
                norm(p + "attn_k_norm.weight", kvs)
            elif t == "ffn":
                matrix(p + "ffn_gate.weight", f["ffn"], h, 1.0 / np.sqrt(h))
                matrix(p + "ffn_up.weight", f["ffn"], h, 1.0 / np.sqrt(h))
                matrix(p + "ffn_down.weight", h, f["ffn"], 1.0 / np.sqrt(f["ffn"]))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
