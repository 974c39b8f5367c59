"""A synthetic gpt-oss GGUF in the types the published files use, written directly.

Its F16 form would take 40 GB of disk for gpt-oss-20b (20 B parameters, 19 B of them in the
experts), so synth_models.py calls this writer instead of writing F16 and quantizing: the
expert matrices are MXFP4 (a fixed power-of-two scale per block of 32, E8M0 exponent 120, i.e.
levels of +-2^-8 * {0.5, 1, ..., 6}, and random 4-bit codes: values of about 0.02, like the
dense matrices), the other matrices Q8_0 (synth_models.random_q8_0: values of std 0.02), norms
1, and biases, router rows and attention sinks small normals in F32. One tensor in memory at a
time (an expert tensor: 141 MB). The weights mean nothing; the shapes, types and bytes per
token are gpt-oss's, so the file loads and runs as the real one does.
"""
from __future__ import annotations

import math
from pathlib import Path

import synth_models as sm

MXFP4_EXPONENT = 120


def tensor_plan(s: sm.Shape, n_vocab: int) -> list[tuple[str, tuple[int, ...], str]]:
    """(name, numpy shape, kind) of every tensor; kind: q8 (Q8_0 matrix), mxfp4 (experts),
    norm, small (F32 normals: biases, router, sinks)."""
    q, kv, e, f = s.n_heads * s.head_dim, s.n_kv_heads * s.head_dim, s.n_experts, s.expert_ffn
    plan = [("token_embd.weight", (n_vocab, s.hidden), "q8"),
            ("output_norm.weight", (s.hidden,), "norm"),
            ("output.weight", (n_vocab, s.hidden), "q8")]
    for i in range(s.n_layers):
        b = f"blk.{i}."
        plan += [(b + "attn_norm.weight", (s.hidden,), "norm"),
                 (b + "attn_q.weight", (q, s.hidden), "q8"), (b + "attn_q.bias", (q,), "small"),
                 (b + "attn_k.weight", (kv, s.hidden), "q8"), (b + "attn_k.bias", (kv,), "small"),
                 (b + "attn_v.weight", (kv, s.hidden), "q8"), (b + "attn_v.bias", (kv,), "small"),
                 (b + "attn_output.weight", (s.hidden, q), "q8"),
                 (b + "attn_output.bias", (s.hidden,), "small"),
                 (b + "attn_sinks.weight", (s.n_heads,), "small"),
                 (b + "post_attention_norm.weight", (s.hidden,), "norm"),
                 (b + "ffn_gate_inp.weight", (e, s.hidden), "small"),
                 (b + "ffn_gate_inp.bias", (e,), "small"),
                 (b + "ffn_gate_exps.weight", (e, f, s.hidden), "mxfp4"),
                 (b + "ffn_gate_exps.bias", (e, f), "small"),
                 (b + "ffn_up_exps.weight", (e, f, s.hidden), "mxfp4"),
                 (b + "ffn_up_exps.bias", (e, f), "small"),
                 (b + "ffn_down_exps.weight", (e, s.hidden, f), "mxfp4"),
                 (b + "ffn_down_exps.bias", (e, s.hidden), "small")]
    return plan


def write(s: sm.Shape, out: Path) -> None:
    import numpy as np
    gguf = sm._gguf()

    def yarn_and_window(w):
        w.add_uint32(f"{s.arch}.attention.sliding_window", 128)
        w.add_string(f"{s.arch}.rope.scaling.type", "yarn")
        w.add_float32(f"{s.arch}.rope.scaling.factor", 32.0)
        w.add_uint32(f"{s.arch}.rope.scaling.original_context_length", 4096)

    w, n_vocab = sm.start_file(gguf, s, out, "synth_gpt_oss.py", 38,  # MOSTLY_MXFP4_MOE
                               yarn_and_window)
    Q = gguf.GGMLQuantizationType
    plan = tensor_plan(s, n_vocab)
    for name, shape, kind in plan:
        if kind in ("q8", "mxfp4"):
            qtype = Q.Q8_0 if kind == "q8" else Q.MXFP4
            byte_shape = (*shape[:-1], shape[-1] // 32 * (34 if kind == "q8" else 17))
            w.add_tensor_info(name, byte_shape, np.dtype(np.uint8), math.prod(byte_shape),
                              raw_dtype=qtype)
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
        elif kind == "q8":
            arr = sm.random_q8_0(rng, shape)
        else:  # mxfp4: each block its exponent byte, then 16 bytes of two codes each
            blocks = math.prod(shape[:-1]) * (shape[-1] // 32)
            arr = rng.integers(0, 256, size=(blocks, 17), dtype=np.uint8)
            arr[:, 0] = MXFP4_EXPONENT
            arr = arr.reshape(*shape[:-1], shape[-1] // 32 * 17)
        w.write_tensor_data(arr)
        del arr
    w.close()
