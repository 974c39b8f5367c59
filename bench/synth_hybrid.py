"""Synthetic Qwen hybrids (qwen35, qwen35moe, qwen3next) in Q8_0, written directly.

Their F16 form would not fit beside the rest on this machine's disk (Qwen3.5-35B-A3B's 256
experts of 512 are 0.8 B parameters a layer; Qwen3.5-9B is 18 GB in F16), so synth_models.py
calls this writer instead of writing F16 and quantizing: matrices Q8_0 (synth_models.random_q8_0: values of std 0.02), norms
1, routers and the shared experts' gates small normals in F32 (as llama-quantize keeps them),
the DeltaNet's convolution taps N(0, 0.5^2), dt bias U(-4, -2) and a = -exp(U(0, ln 16)) as a
trained model's (per-head decays of about 0.5-0.99 a token). Layers: gated DeltaNet, every
fourth full attention (Q with its output gate, Q/K norms, RoPE on 64 of 256 values); each
with the experts and a shared expert (qwen35moe, qwen3next) or a dense FFN (qwen35). qwen3next: plain NeoX RoPE, one ssm_ba. One tensor in
memory at a time. The weights mean nothing; the shapes, types and bytes per token are the
real models'.
"""
from __future__ import annotations

import math
from pathlib import Path

import synth_models as sm

# Both Qwen hybrids' widths apart from the experts (Shape holds those).
ROPE_DIMS = 64
SECTIONS = [11, 11, 10, 0]  # qwen35moe only
INTERVAL = 4
CONV, STATE, K_HEADS, V_HEADS = 4, 128, 16, 32
SHARED_FFN = 512


def tensor_plan(s: sm.Shape, n_vocab: int) -> list[tuple[str, tuple[int, ...], str]]:
    """(name, numpy shape, kind) of every tensor; kind: q8 (Q8_0 matrix), norm, small (F32
    normals), conv, dt, a."""
    q, kv, e, f = s.n_heads * s.head_dim, s.n_kv_heads * s.head_dim, s.n_experts, s.expert_ffn
    key, value = K_HEADS * STATE, V_HEADS * STATE
    channels = 2 * key + value
    plan = [("token_embd.weight", (n_vocab, s.hidden), "q8"),
            ("output_norm.weight", (s.hidden,), "norm"),
            ("output.weight", (n_vocab, s.hidden), "q8")]
    for i in range(s.n_layers):
        b = f"blk.{i}."
        plan.append((b + "attn_norm.weight", (s.hidden,), "norm"))
        if (i + 1) % INTERVAL != 0:
            plan += [(b + "attn_qkv.weight", (channels, s.hidden), "q8"),
                     (b + "attn_gate.weight", (value, s.hidden), "q8"),
                     (b + "ssm_conv1d.weight", (channels, CONV), "conv"),
                     (b + "ssm_dt.bias", (V_HEADS,), "dt"),
                     (b + "ssm_a", (V_HEADS,), "a")]
            if s.arch == "qwen3next":
                plan.append((b + "ssm_ba.weight", (2 * V_HEADS, s.hidden), "q8"))
            else:
                plan += [(b + "ssm_beta.weight", (V_HEADS, s.hidden), "q8"),
                         (b + "ssm_alpha.weight", (V_HEADS, s.hidden), "q8")]
            plan += [(b + "ssm_norm.weight", (STATE,), "norm"),
                     (b + "ssm_out.weight", (s.hidden, value), "q8")]
        else:
            plan += [(b + "attn_q.weight", (2 * q, s.hidden), "q8"),
                     (b + "attn_k.weight", (kv, s.hidden), "q8"),
                     (b + "attn_v.weight", (kv, s.hidden), "q8"),
                     (b + "attn_q_norm.weight", (s.head_dim,), "norm"),
                     (b + "attn_k_norm.weight", (s.head_dim,), "norm"),
                     (b + "attn_output.weight", (s.hidden, q), "q8")]
        plan.append((b + "post_attention_norm.weight", (s.hidden,), "norm"))
        if not e:  # qwen35: a dense FFN
            plan += [(b + "ffn_gate.weight", (s.ffn, s.hidden), "q8"),
                     (b + "ffn_up.weight", (s.ffn, s.hidden), "q8"),
                     (b + "ffn_down.weight", (s.hidden, s.ffn), "q8")]
            continue
        plan += [(b + "ffn_gate_inp.weight", (e, s.hidden), "small"),
                 (b + "ffn_gate_exps.weight", (e, f, s.hidden), "q8"),
                 (b + "ffn_up_exps.weight", (e, f, s.hidden), "q8"),
                 (b + "ffn_down_exps.weight", (e, s.hidden, f), "q8"),
                 (b + "ffn_gate_inp_shexp.weight", (s.hidden,), "small"),
                 (b + "ffn_gate_shexp.weight", (SHARED_FFN, s.hidden), "q8"),
                 (b + "ffn_up_shexp.weight", (SHARED_FFN, s.hidden), "q8"),
                 (b + "ffn_down_shexp.weight", (s.hidden, SHARED_FFN), "q8")]
    return plan


def write(s: sm.Shape, out: Path) -> None:
    import numpy as np
    gguf = sm._gguf()

    def hybrid_keys(w):
        a = s.arch
        if s.arch != "qwen3next":
            w.add_array(f"{a}.rope.dimension_sections", SECTIONS)
        w.add_uint32(f"{a}.full_attention_interval", INTERVAL)
        w.add_uint32(f"{a}.ssm.conv_kernel", CONV)
        w.add_uint32(f"{a}.ssm.state_size", STATE)
        w.add_uint32(f"{a}.ssm.group_count", K_HEADS)
        w.add_uint32(f"{a}.ssm.time_step_rank", V_HEADS)
        w.add_uint32(f"{a}.ssm.inner_size", V_HEADS * STATE)
        if s.n_experts:
            w.add_expert_shared_feed_forward_length(SHARED_FFN)

    w, n_vocab = sm.start_file(gguf, s, out, "synth_hybrid.py", 7,  # MOSTLY_Q8_0
                               hybrid_keys)
    Q = gguf.GGMLQuantizationType
    plan = tensor_plan(s, n_vocab)
    for name, shape, kind in plan:
        if kind == "q8":
            byte_shape = (*shape[:-1], shape[-1] // 32 * 34)
            w.add_tensor_info(name, byte_shape, np.dtype(np.uint8), math.prod(byte_shape),
                              raw_dtype=Q.Q8_0)
        else:
            w.add_tensor_info(name, shape, np.dtype(np.float32), math.prod(shape) * 4)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for idx, (name, shape, kind) in enumerate(plan):
        rng = np.random.default_rng([sm.SEED, idx])
        if kind == "norm":
            arr = np.ones(shape, dtype=np.float32)
        elif kind == "small":
            arr = rng.standard_normal(shape, dtype=np.float32) * np.float32(0.05)
        elif kind == "conv":
            arr = rng.standard_normal(shape, dtype=np.float32) * np.float32(0.5)
        elif kind == "dt":
            arr = rng.uniform(-4.0, -2.0, shape).astype(np.float32)
        elif kind == "a":
            arr = -np.exp(rng.uniform(0.0, np.log(16.0), shape)).astype(np.float32)
        else:
            arr = sm.random_q8_0(rng, shape)
        w.write_tensor_data(arr)
        del arr
    w.close()
