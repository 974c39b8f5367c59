"""A tiny synthetic Qwen3-VL pair for the end-to-end tests, in pure Python and numpy (random
weights, synth_moe.py's writer, all F32):

write_model: the language side, `qwen3vl` (qwen3 with interleaved M-RoPE and deepstack): hidden
64, three layers of 4 query and 2 KV heads of 16, per-head Q / K norms, rope.dimension_sections
3/2/2/0 (8 pairs per head; the real models' 24/20/20 of 64, scaled down), n_deepstack_layers 2,
SmolLM2-135M-Instruct's tokenizer.

write_mmproj: its vision projector, clip.projector_type `qwen3vl_merger` (the tensors
conversion/qwen3vl.py's Qwen3VLVisionModel writes) with projection_dim 64: a ViT of width 32,
two layers with LayerNorms, a fused attn_qkv, a patch bias and 16 learned positions (4 x 4,
resized to the grid), patches of 8, so one token per 16x16 pixels after the 2x2 merger, and a
deepstack merger after each layer (`deepstack` of them, 2 by default): rows of 64 x (1 + 2).
"""

import struct

import numpy as np

import synth_moe
from synth_moe import ARRAY, BOOL, F32, I32, _f32, _str, _u32, write_gguf

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, LAYERS, FFN, DEEPSTACK = 64, 4, 2, 16, 3, 128, 2
SECTIONS = [3, 2, 2, 0]
VIT_WIDTH, VIT_FFN, VIT_LAYERS, VIT_HEADS, PATCH, POSITIONS = 32, 40, 2, 4, 8, 16


def _i32_array(values):
    return struct.pack("<IIQ", ARRAY, I32, len(values)) + b"".join(
        struct.pack("<i", v) for v in values)


def _f32s(values):
    return struct.pack("<IIQ", ARRAY, F32, len(values)) + struct.pack(f"<{len(values)}f", *values)


def _bool(v):
    return struct.pack("<IB", BOOL, int(v))


def write_model(path, tokenizer_gguf, chat_template, seed=0, deepstack=DEEPSTACK):
    rng = np.random.default_rng(seed)
    a = "qwen3vl"
    meta = {"general.architecture": _str(a),
            "general.name": _str("synthetic qwen3vl (random weights, SmolLM2 tokenizer)")}
    for key, value in {"block_count": _u32(LAYERS), "context_length": _u32(4096),
                       "embedding_length": _u32(HIDDEN), "feed_forward_length": _u32(FFN),
                       "attention.head_count": _u32(HEADS),
                       "attention.head_count_kv": _u32(KV_HEADS),
                       "attention.key_length": _u32(HEAD_DIM),
                       "attention.value_length": _u32(HEAD_DIM),
                       "attention.layer_norm_rms_epsilon": _f32(1e-6),
                       "rope.freq_base": _f32(10000.0),
                       "rope.dimension_count": _u32(HEAD_DIM),
                       "rope.dimension_sections": _i32_array(SECTIONS),
                       "n_deepstack_layers": _u32(deepstack)}.items():
        meta[f"{a}.{key}"] = value
    tok = synth_moe.tokenizer_metadata(tokenizer_gguf)
    tok["tokenizer.chat_template"] = _str(chat_template)
    meta.update(tok)
    n_vocab = struct.unpack_from("<IQ", tok["tokenizer.ggml.tokens"], 4)[1]

    def matrix(rows, cols, scale=1.0):  # numpy [rows, cols]: GGUF dims {cols, rows}
        return rng.normal(0.0, scale / np.sqrt(cols), (rows, cols))

    def norm(n):
        return 1.0 + rng.uniform(-0.1, 0.1, n)

    q, kv = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    tensors = [("token_embd.weight", rng.normal(0.0, 1.0, (n_vocab, HIDDEN))),
               ("output_norm.weight", norm(HIDDEN))]
    for i in range(LAYERS):
        p = f"blk.{i}."
        tensors += [(p + "attn_norm.weight", norm(HIDDEN)),
                    (p + "attn_q.weight", matrix(q, HIDDEN)),
                    (p + "attn_k.weight", matrix(kv, HIDDEN)),
                    (p + "attn_v.weight", matrix(kv, HIDDEN)),
                    (p + "attn_q_norm.weight", norm(HEAD_DIM)),
                    (p + "attn_k_norm.weight", norm(HEAD_DIM)),
                    (p + "attn_output.weight", matrix(HIDDEN, q)),
                    (p + "ffn_norm.weight", norm(HIDDEN)),
                    (p + "ffn_gate.weight", matrix(FFN, HIDDEN)),
                    (p + "ffn_up.weight", matrix(FFN, HIDDEN)),
                    (p + "ffn_down.weight", matrix(HIDDEN, FFN))]
    write_gguf(path, meta, tensors)


def write_mmproj(path, projection_dim=HIDDEN, deepstack=DEEPSTACK, seed=1,
                 deepstack_bias_seed=None):
    """deepstack_bias_seed: the deepstack mergers' fc2 biases drawn anew from this seed (the
    rest, the main merger's output included, as without it)."""
    rng = np.random.default_rng(seed)
    w = VIT_WIDTH
    metadata = {
        "general.architecture": _str("clip"),
        "clip.has_vision_encoder": _bool(True),
        "clip.projector_type": _str("qwen3vl_merger"),
        "clip.use_gelu": _bool(True),
        "clip.vision.spatial_merge_size": _u32(2),
        "clip.vision.projection_dim": _u32(projection_dim),
        "clip.vision.image_size": _u32(4 * PATCH),
        "clip.vision.patch_size": _u32(PATCH),
        "clip.vision.embedding_length": _u32(w),
        "clip.vision.feed_forward_length": _u32(VIT_FFN),
        "clip.vision.block_count": _u32(VIT_LAYERS),
        "clip.vision.attention.head_count": _u32(VIT_HEADS),
        "clip.vision.attention.layer_norm_epsilon": _f32(1e-6),
        "clip.vision.image_mean": _f32s([0.5, 0.5, 0.5]),
        "clip.vision.image_std": _f32s([0.5, 0.5, 0.5]),
    }

    def t(shape, scale, offset=0.0):  # numpy shape: the GGUF dims reversed
        return offset + scale * rng.standard_normal(shape)

    tensors = [("v.patch_embd.weight", t((w, 3, PATCH, PATCH), 0.05)),
               ("v.patch_embd.weight.1", t((w, 3, PATCH, PATCH), 0.05)),
               ("v.patch_embd.bias", t((w,), 0.05)),
               ("v.position_embd.weight", t((POSITIONS, w), 0.3))]
    s = w ** -0.5
    for i in range(VIT_LAYERS):
        b = f"v.blk.{i}."
        tensors += [(b + "attn_qkv.weight", t((3 * w, w), s)), (b + "attn_qkv.bias", t((3 * w,), 0.05)),
                    (b + "attn_out.weight", t((w, w), s)), (b + "attn_out.bias", t((w,), 0.05))]
        for n in ("ln1", "ln2"):
            tensors += [(b + n + ".weight", t((w,), 0.1, 1.0)), (b + n + ".bias", t((w,), 0.05))]
        tensors += [(b + "ffn_up.weight", t((VIT_FFN, w), s)),
                    (b + "ffn_up.bias", t((VIT_FFN,), 0.05)),
                    (b + "ffn_down.weight", t((w, VIT_FFN), VIT_FFN ** -0.5)),
                    (b + "ffn_down.bias", t((w,), 0.05))]
    merged = 4 * w
    tensors += [("v.post_ln.weight", t((w,), 0.1, 1.0)), ("v.post_ln.bias", t((w,), 0.05)),
                ("mm.0.weight", t((merged, merged), merged ** -0.5)),
                ("mm.0.bias", t((merged,), 0.05)),
                ("mm.2.weight", t((projection_dim, merged), merged ** -0.5)),
                ("mm.2.bias", t((projection_dim,), 0.05))]
    for i in range(deepstack):
        b = f"v.deepstack.{i}."
        tensors += [(b + "norm.weight", t((merged,), 0.1, 1.0)), (b + "norm.bias", t((merged,), 0.05)),
                    (b + "fc1.weight", t((merged, merged), merged ** -0.5)),
                    (b + "fc1.bias", t((merged,), 0.05)),
                    (b + "fc2.weight", t((projection_dim, merged), merged ** -0.5)),
                    (b + "fc2.bias", t((projection_dim,), 0.05))]
    if deepstack_bias_seed is not None:
        other = np.random.default_rng(deepstack_bias_seed)
        tensors = [(name, other.standard_normal(value.shape)
                    if name.startswith("v.deepstack.") and name.endswith("fc2.bias") else value)
                   for name, value in tensors]
    write_gguf(path, metadata, tensors)
