"""A tiny synthetic Qwen2.5-VL pair for the end-to-end tests, in pure Python and numpy (random
weights, synth_moe.py's writer, all F32):

write_model: the language side, `qwen2vl` (qwen2 with M-RoPE): hidden 64, two layers of 4 query
and 2 KV heads of 16, Q/K/V biases, rope.dimension_sections 2/3/3/0 (8 pairs per head; the real
models' 16/24/24 of 64, scaled down), SmolLM2-135M-Instruct's tokenizer.

write_mmproj: its vision projector, clip.projector_type `qwen2.5vl_merger` (the tensors
convert_hf_to_gguf.py's Qwen2VLVisionModel writes) with projection_dim 64: a ViT of width 32,
two layers (window attention every other: n_wa_pattern 2), patches of 8, so one token per 16x16
pixels after the 2x2 merger (a 64x48 image is a grid of 3 rows of 4 tokens).
"""

import struct

import numpy as np

import synth_moe
from synth_moe import ARRAY, BOOL, F32, I32, _f32, _str, _u32, write_gguf

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, LAYERS, FFN = 64, 4, 2, 16, 2, 128
SECTIONS = [2, 3, 3, 0]
VIT_WIDTH, VIT_FFN, VIT_LAYERS, VIT_HEADS, PATCH = 32, 40, 2, 4, 8


def _i32_array(values):
    return struct.pack("<IIQ", ARRAY, I32, len(values)) + b"".join(
        struct.pack("<i", v) for v in values)


def _f32s(values):
    return struct.pack("<IIQ", ARRAY, F32, len(values)) + struct.pack(f"<{len(values)}f", *values)


def _bool(v):
    return struct.pack("<IB", BOOL, int(v))


def write_model(path, tokenizer_gguf, chat_template, seed=0):
    rng = np.random.default_rng(seed)
    a = "qwen2vl"
    meta = {"general.architecture": _str(a),
            "general.name": _str("synthetic qwen2vl (random weights, SmolLM2 tokenizer)")}
    for key, value in {"block_count": _u32(LAYERS), "context_length": _u32(4096),
                       "embedding_length": _u32(HIDDEN), "feed_forward_length": _u32(FFN),
                       "attention.head_count": _u32(HEADS),
                       "attention.head_count_kv": _u32(KV_HEADS),
                       "attention.layer_norm_rms_epsilon": _f32(1e-6),
                       "rope.freq_base": _f32(10000.0),
                       "rope.dimension_count": _u32(HEAD_DIM),
                       "rope.dimension_sections": _i32_array(SECTIONS)}.items():
        meta[f"{a}.{key}"] = value
    tok = synth_moe.tokenizer_metadata(tokenizer_gguf)
    tok["tokenizer.chat_template"] = _str(chat_template)
    meta.update(tok)
    n_vocab = struct.unpack_from("<IQ", tok["tokenizer.ggml.tokens"], 4)[1]

    def matrix(rows, cols, scale=1.0):  # numpy [rows, cols]: GGUF dims {cols, rows}
        return rng.normal(0.0, scale / np.sqrt(cols), (rows, cols))

    def norm(n):
        return 1.0 + rng.uniform(-0.1, 0.1, n)

    def bias(n):
        return rng.uniform(-0.2, 0.2, n)

    q, kv = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    tensors = [("token_embd.weight", rng.normal(0.0, 1.0, (n_vocab, HIDDEN))),
               ("output_norm.weight", norm(HIDDEN))]
    for i in range(LAYERS):
        p = f"blk.{i}."
        tensors += [(p + "attn_norm.weight", norm(HIDDEN)),
                    (p + "attn_q.weight", matrix(q, HIDDEN)),
                    (p + "attn_k.weight", matrix(kv, HIDDEN)),
                    (p + "attn_v.weight", matrix(kv, HIDDEN)), (p + "attn_q.bias", bias(q)),
                    (p + "attn_k.bias", bias(kv)), (p + "attn_v.bias", bias(kv)),
                    (p + "attn_output.weight", matrix(HIDDEN, q)),
                    (p + "ffn_norm.weight", norm(HIDDEN)),
                    (p + "ffn_gate.weight", matrix(FFN, HIDDEN)),
                    (p + "ffn_up.weight", matrix(FFN, HIDDEN)),
                    (p + "ffn_down.weight", matrix(HIDDEN, FFN))]
    write_gguf(path, meta, tensors)


def write_mmproj(path, projection_dim=HIDDEN, seed=1):
    rng = np.random.default_rng(seed)
    w = VIT_WIDTH
    metadata = {
        "general.architecture": _str("clip"),
        "clip.has_vision_encoder": _bool(True),
        "clip.projector_type": _str("qwen2.5vl_merger"),
        "clip.use_silu": _bool(True),
        "clip.vision.n_wa_pattern": _u32(2),
        "clip.vision.projection_dim": _u32(projection_dim),
        "clip.vision.image_size": _u32(560),
        "clip.vision.patch_size": _u32(PATCH),
        "clip.vision.embedding_length": _u32(w),
        "clip.vision.feed_forward_length": _u32(VIT_FFN),
        "clip.vision.block_count": _u32(VIT_LAYERS),
        "clip.vision.attention.head_count": _u32(VIT_HEADS),
        "clip.vision.attention.layer_norm_epsilon": _f32(1e-6),
        "clip.vision.image_mean": _f32s([0.48145466, 0.4578275, 0.40821073]),
        "clip.vision.image_std": _f32s([0.26862954, 0.26130258, 0.27577711]),
    }

    def t(shape, scale, offset=0.0):  # numpy shape: the GGUF dims reversed
        return offset + scale * rng.standard_normal(shape)

    tensors = [("v.patch_embd.weight", t((w, 3, PATCH, PATCH), 0.05)),
               ("v.patch_embd.weight.1", t((w, 3, PATCH, PATCH), 0.05))]
    s = w ** -0.5
    for i in range(VIT_LAYERS):
        b = f"v.blk.{i}."
        for m in ("attn_q", "attn_k", "attn_v", "attn_out"):
            tensors += [(b + m + ".weight", t((w, w), s)), (b + m + ".bias", t((w,), 0.05))]
        tensors += [(b + "ln1.weight", t((w,), 0.1, 1.0)), (b + "ln2.weight", t((w,), 0.1, 1.0))]
        for m in ("ffn_up", "ffn_gate"):
            tensors += [(b + m + ".weight", t((VIT_FFN, w), s)),
                        (b + m + ".bias", t((VIT_FFN,), 0.05))]
        tensors += [(b + "ffn_down.weight", t((w, VIT_FFN), VIT_FFN ** -0.5)),
                    (b + "ffn_down.bias", t((w,), 0.05))]
    merged = 4 * w
    tensors += [("v.post_ln.weight", t((w,), 0.1, 1.0)),
                ("mm.0.weight", t((merged, merged), merged ** -0.5)),
                ("mm.0.bias", t((merged,), 0.05)),
                ("mm.2.weight", t((projection_dim, merged), merged ** -0.5)),
                ("mm.2.bias", t((projection_dim,), 0.05))]
    write_gguf(path, metadata, tensors)
