"""Synthetic files for bench/vision_oracle.py's and bench/image_kl_oracle.py's comparisons
(random weights, numpy seed 0).

write_qwen25vl_projector: a projector GGUF as convert_hf_to_gguf.py's Qwen2VLVisionModel writes
it for Qwen2.5-VL (clip.projector_type "qwen2.5vl_merger", clip.use_silu, n_wa_pattern; the
Conv3D patch kernel split into v.patch_embd.weight and .weight.1; q / k / v with biases,
RMSNorm weights ln1 / ln2 / post_ln, the gated FFN with biases, the merger mm.0 / mm.2 with
biases): F16 matrices and patch kernels, F32 norms and biases.

write_gemma4v_projector: a projector GGUF as convert_hf_to_gguf.py's Gemma4VisionAudioModel
writes Gemma 4's vision tower (clip.projector_type "gemma4v", no use_gelu / use_silu key so
llama.cpp's gelu_quick, image_size 224 as the converter's placeholder, mean 0 / std 1; the patch
kernel without bias, F32 x / y position tables [2, positions, n_embd], q / k / v / out without
biases, per-head q / k norms (weights about head^-1/4), ln1 / ln2 / attn_post_norm / ffn_post_norm, the gated FFN,
out_scale, mm.input_projection [out, n_embd]); with standardize, v.std_bias / v.std_scale; with
clamps, Gemma4ClippableLinear's input / output min / max scalars on every linear. F16 matrices,
F32 the rest.

write_text_model: the text-model GGUF libmtmd's context needs beside a projector (it checks
that the model's width is the projector's output width and tokenizes the prompt around the
image): a 1-layer llama of the given width, zero weights, SmolLM2's tokenizer (as
bench/synth_models.py's files); nothing is decoded with it.

write_qwen2vl_text_model: a qwen2vl language model of a given shape (random weights) for
bench/image_kl_oracle.py's Qwen2.5-VL comparison.

write_qwen3vl_projector / write_qwen3vl_text_model: Qwen3-VL's pair (clip.projector_type
"qwen3vl_merger" with deepstack mergers; a qwen3vl language model with as many
n_deepstack_layers), for the --type qwen3vl comparisons and vision_oracle.py's golden.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import synth_models  # noqa: E402


def write_qwen25vl_projector(path: Path, layers: int, width: int, ffn: int, heads: int,
                             patch: int, out_width: int, n_wa_pattern: int, gguf_py: Path,
                             window_size: int = 0) -> None:
    sys.path.insert(0, str(gguf_py))
    import gguf  # noqa: PLC0415
    rng = np.random.default_rng(0)
    w = gguf.GGUFWriter(str(path), "clip")
    w.add_bool("clip.has_vision_encoder", True)
    w.add_string("clip.projector_type", "qwen2.5vl_merger")
    w.add_bool("clip.use_silu", True)
    w.add_uint32("clip.vision.n_wa_pattern", n_wa_pattern)
    if window_size:
        w.add_uint32("clip.vision.window_size", window_size)
    w.add_uint32("clip.vision.projection_dim", out_width)
    w.add_uint32("clip.vision.image_size", 560)  # the converter's default (llama.cpp's warmup)
    w.add_uint32("clip.vision.patch_size", patch)
    w.add_uint32("clip.vision.embedding_length", width)
    w.add_uint32("clip.vision.feed_forward_length", ffn)
    w.add_uint32("clip.vision.block_count", layers)
    w.add_uint32("clip.vision.attention.head_count", heads)
    w.add_float32("clip.vision.attention.layer_norm_epsilon", 1e-6)
    w.add_array("clip.vision.image_mean", [0.48145466, 0.4578275, 0.40821073])
    w.add_array("clip.vision.image_std", [0.26862954, 0.26130258, 0.27577711])

    def t(name, shape, scale, offset=0.0, f16=False):
        a = (offset + scale * rng.standard_normal(shape, dtype=np.float32)).astype(np.float32)
        w.add_tensor(name, a.astype(np.float16) if f16 else a)

    for suffix in ("", ".1"):
        t("v.patch_embd.weight" + suffix, (width, 3, patch, patch), 0.05, f16=True)
    s = width ** -0.5
    for i in range(layers):
        b = f"v.blk.{i}."
        for m in ("attn_q", "attn_k", "attn_v", "attn_out"):
            t(b + m + ".weight", (width, width), s, f16=True)
            t(b + m + ".bias", (width,), 0.05)
        t(b + "ln1.weight", (width,), 0.1, 1.0)
        t(b + "ln2.weight", (width,), 0.1, 1.0)
        for m in ("ffn_up", "ffn_gate"):
            t(b + m + ".weight", (ffn, width), s, f16=True)
            t(b + m + ".bias", (ffn,), 0.05)
        t(b + "ffn_down.weight", (width, ffn), ffn ** -0.5, f16=True)
        t(b + "ffn_down.bias", (width,), 0.05)
    t("v.post_ln.weight", (width,), 0.1, 1.0)
    merged = 4 * width
    t("mm.0.weight", (merged, merged), merged ** -0.5, f16=True)
    t("mm.0.bias", (merged,), 0.05)
    t("mm.2.weight", (out_width, merged), merged ** -0.5, f16=True)
    t("mm.2.bias", (out_width,), 0.05)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_gemma4v_projector(path: Path, layers: int, width: int, ffn: int, heads: int,
                            patch: int, out_width: int, gguf_py: Path, merge: int = 0,
                            positions: int = 10240, standardize: bool = True,
                            clamps: bool = False) -> None:
    sys.path.insert(0, str(gguf_py))
    import gguf  # noqa: PLC0415
    rng = np.random.default_rng(0)
    w = gguf.GGUFWriter(str(path), "clip")
    w.add_bool("clip.has_vision_encoder", True)
    w.add_string("clip.projector_type", "gemma4v")
    w.add_uint32("clip.vision.projection_dim", out_width)
    w.add_uint32("clip.vision.image_size", 224)
    w.add_uint32("clip.vision.patch_size", patch)
    w.add_uint32("clip.vision.embedding_length", width)
    w.add_uint32("clip.vision.feed_forward_length", ffn)
    w.add_uint32("clip.vision.block_count", layers)
    w.add_uint32("clip.vision.attention.head_count", heads)
    w.add_float32("clip.vision.attention.layer_norm_epsilon", 1e-6)
    w.add_array("clip.vision.image_mean", [0.0, 0.0, 0.0])
    w.add_array("clip.vision.image_std", [1.0, 1.0, 1.0])
    if merge:
        w.add_uint32("clip.vision.projector.scale_factor", merge)

    def t(name, shape, scale, offset=0.0, f16=False):
        a = (offset + scale * rng.standard_normal(shape, dtype=np.float32)).astype(np.float32)
        w.add_tensor(name, a.astype(np.float16) if f16 else a)

    def clip(base):
        if clamps:  # tight enough that some inputs and outputs are clipped
            for suffix, centre in (("input_min", -1.5), ("input_max", 1.5),
                                   ("output_min", -2.0), ("output_max", 2.0)):
                t(f"{base}.{suffix}", (1,), 0.1, centre)

    head = width // heads
    t("v.patch_embd.weight", (width, 3, patch, patch), 0.05, f16=True)
    t("v.position_embd.weight", (2, positions, width), 0.3)
    s = width ** -0.5
    for i in range(layers):
        b = f"v.blk.{i}."
        for m in ("attn_q", "attn_k", "attn_v", "attn_out"):
            t(b + m + ".weight", (width, width), s, f16=True)
            clip(b + m)
        # Q / K norm weights of head^-1/4: the unscaled scores get a unit's spread, as a trained
        # model's norms give them (weights 1 give scores of std sqrt(head): near-argmax
        # attention in every layer, where rounding flips the winner and 27 layers diverge).
        t(b + "attn_q_norm.weight", (head,), 0.1 * head ** -0.25, head ** -0.25)
        t(b + "attn_k_norm.weight", (head,), 0.1 * head ** -0.25, head ** -0.25)
        for n in ("ln1", "ln2", "attn_post_norm", "ffn_post_norm"):
            t(b + n + ".weight", (width,), 0.1, 1.0)
        for m in ("ffn_up", "ffn_gate"):
            t(b + m + ".weight", (ffn, width), s, f16=True)
            clip(b + m)
        t(b + "ffn_down.weight", (width, ffn), ffn ** -0.5, f16=True)
        clip(b + "ffn_down")
        t(b + "out_scale.weight", (1,), 0.05, 0.9)
    if standardize:
        t("v.std_bias", (width,), 0.3)
        t("v.std_scale", (width,), 0.1, 1.0)
    t("mm.input_projection.weight", (out_width, width), s, f16=True)
    clip("mm.input_projection")
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_text_model(path: Path, width: int, gguf_py: Path) -> None:
    sys.path.insert(0, str(gguf_py))
    import gguf  # noqa: PLC0415
    fields = synth_models.tokenizer_fields(gguf)
    n_vocab = synth_models.vocab_size(fields)
    # Heads of 128 and 4 KV heads where the width allows, else heads of 64, each its own KV head
    # (SmolLM2's 576: 9 heads).
    head_dim = 128 if width % 128 == 0 else 64
    kv_heads = 4 if head_dim == 128 else width // head_dim
    ffn = 256
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name(f"width-{width} stand-in (synthetic: zero weights, SmolLM2 tokenizer)")
    w.add_context_length(4096)
    w.add_embedding_length(width)
    w.add_block_count(1)
    w.add_feed_forward_length(ffn)
    w.add_head_count(width // head_dim)
    w.add_head_count_kv(kv_heads)
    w.add_rope_dimension_count(head_dim)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_vocab_size(n_vocab)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    for key, value, vtype, sub in fields:
        w.add_key_value(key, value, vtype, sub_type=sub)
    f16, f32 = np.float16, np.float32
    kv = kv_heads * head_dim
    w.add_tensor("token_embd.weight", np.zeros((n_vocab, width), f16))
    w.add_tensor("output_norm.weight", np.ones(width, f32))
    w.add_tensor("blk.0.attn_norm.weight", np.ones(width, f32))
    w.add_tensor("blk.0.ffn_norm.weight", np.ones(width, f32))
    for name, shape in (("attn_q", (width, width)), ("attn_k", (kv, width)),
                        ("attn_v", (kv, width)), ("attn_output", (width, width)),
                        ("ffn_gate", (ffn, width)), ("ffn_up", (ffn, width)),
                        ("ffn_down", (width, ffn))):
        w.add_tensor(f"blk.0.{name}.weight", np.zeros(shape, f16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_qwen2vl_text_model(path: Path, width: int, layers: int, heads: int, kv_heads: int,
                             ffn: int, gguf_py: Path, seed: int = 0) -> None:
    """A qwen2vl language model (Qwen2.5-VL's: qwen2 with M-RoPE sections 16/24/24/0 of 64
    pairs, heads of 128, rope base 1e6, Q/K/V biases) of the given shape, random weights (numpy
    `seed`; F16 matrices, F32 norms and biases), SmolLM2's tokenizer: the language side of
    bench/image_kl_oracle.py's --type qwen25vl, which quantizes it with the peer's
    llama-quantize."""
    sys.path.insert(0, str(gguf_py))
    import gguf  # noqa: PLC0415
    rng = np.random.default_rng(seed)
    fields = synth_models.tokenizer_fields(gguf)
    n_vocab = synth_models.vocab_size(fields)
    head_dim = 128
    w = gguf.GGUFWriter(str(path), "qwen2vl")
    w.add_name(f"qwen2vl width {width}, {layers} layers "
               "(synthetic: random weights, SmolLM2 tokenizer)")
    w.add_context_length(32768)
    w.add_embedding_length(width)
    w.add_block_count(layers)
    w.add_feed_forward_length(ffn)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_dimension_sections([16, 24, 24, 0])
    w.add_rope_freq_base(1000000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_vocab_size(n_vocab)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    for key, value, vtype, sub in fields:
        w.add_key_value(key, value, vtype, sub_type=sub)

    def matrix(rows, cols):
        a = rng.standard_normal((rows, cols), dtype=np.float32) / np.sqrt(cols)
        return a.astype(np.float16)

    def norm(n):
        return (1.0 + 0.1 * rng.standard_normal(n, dtype=np.float32)).astype(np.float32)

    def bias(n):
        return (0.1 * rng.standard_normal(n, dtype=np.float32)).astype(np.float32)

    q, kv = heads * head_dim, kv_heads * head_dim
    w.add_tensor("token_embd.weight", rng.standard_normal((n_vocab, width), dtype=np.float32)
                 .astype(np.float16))
    w.add_tensor("output_norm.weight", norm(width))
    w.add_tensor("output.weight", matrix(n_vocab, width))
    for i in range(layers):
        b = f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", norm(width))
        w.add_tensor(b + "attn_q.weight", matrix(q, width))
        w.add_tensor(b + "attn_k.weight", matrix(kv, width))
        w.add_tensor(b + "attn_v.weight", matrix(kv, width))
        w.add_tensor(b + "attn_q.bias", bias(q))
        w.add_tensor(b + "attn_k.bias", bias(kv))
        w.add_tensor(b + "attn_v.bias", bias(kv))
        w.add_tensor(b + "attn_output.weight", matrix(width, q))
        w.add_tensor(b + "ffn_norm.weight", norm(width))
        w.add_tensor(b + "ffn_gate.weight", matrix(ffn, width))
        w.add_tensor(b + "ffn_up.weight", matrix(ffn, width))
        w.add_tensor(b + "ffn_down.weight", matrix(width, ffn))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_qwen3vl_projector(path: Path, layers: int, width: int, ffn: int, heads: int,
                            patch: int, out_width: int, positions: int,
                            deepstack: tuple[int, ...], gguf_py: Path) -> None:
    """A projector GGUF as conversion/qwen3vl.py's Qwen3VLVisionModel writes Qwen3-VL's vision
    tower (clip.projector_type "qwen3vl_merger", clip.use_gelu, spatial_merge_size 2,
    is_deepstack_layers; the Conv3D patch kernel split into v.patch_embd.weight and .weight.1,
    with v.patch_embd.bias; learned v.position_embd.weight [positions, width] (positions a
    square: the converter's num_position_embeddings); per layer the fused attn_qkv, attn_out,
    LayerNorms ln1 / ln2 and the plain FFN ffn_up / ffn_down, all with biases; the merger's norm
    as v.post_ln, mm.0 / mm.2; for each layer in `deepstack`, v.deepstack.<layer>.norm / fc1 /
    fc2 over 4 * width). F16 matrices and patch kernels, F32 the rest; numpy seed 0."""
    sys.path.insert(0, str(gguf_py))
    import gguf  # noqa: PLC0415
    rng = np.random.default_rng(0)
    side = int(round(positions ** 0.5))
    assert side * side == positions
    w = gguf.GGUFWriter(str(path), "clip")
    w.add_bool("clip.has_vision_encoder", True)
    w.add_string("clip.projector_type", "qwen3vl_merger")
    w.add_bool("clip.use_gelu", True)
    w.add_uint32("clip.vision.spatial_merge_size", 2)
    w.add_uint32("clip.vision.projection_dim", out_width)
    w.add_uint32("clip.vision.image_size", side * patch)
    w.add_uint32("clip.vision.patch_size", patch)
    w.add_uint32("clip.vision.embedding_length", width)
    w.add_uint32("clip.vision.feed_forward_length", ffn)
    w.add_uint32("clip.vision.block_count", layers)
    w.add_uint32("clip.vision.attention.head_count", heads)
    w.add_float32("clip.vision.attention.layer_norm_epsilon", 1e-6)
    w.add_array("clip.vision.image_mean", [0.5, 0.5, 0.5])
    w.add_array("clip.vision.image_std", [0.5, 0.5, 0.5])
    w.add_array("clip.vision.is_deepstack_layers", [i in deepstack for i in range(layers)])

    def t(name, shape, scale, offset=0.0, f16=False):
        a = (offset + scale * rng.standard_normal(shape, dtype=np.float32)).astype(np.float32)
        w.add_tensor(name, a.astype(np.float16) if f16 else a)

    for suffix in ("", ".1"):
        t("v.patch_embd.weight" + suffix, (width, 3, patch, patch), 0.05, f16=True)
    t("v.patch_embd.bias", (width,), 0.05)
    t("v.position_embd.weight", (positions, width), 0.3)
    s = width ** -0.5
    for i in range(layers):
        b = f"v.blk.{i}."
        t(b + "attn_qkv.weight", (3 * width, width), s, f16=True)
        t(b + "attn_qkv.bias", (3 * width,), 0.05)
        t(b + "attn_out.weight", (width, width), s, f16=True)
        t(b + "attn_out.bias", (width,), 0.05)
        for n in ("ln1", "ln2"):
            t(b + n + ".weight", (width,), 0.1, 1.0)
            t(b + n + ".bias", (width,), 0.05)
        t(b + "ffn_up.weight", (ffn, width), s, f16=True)
        t(b + "ffn_up.bias", (ffn,), 0.05)
        t(b + "ffn_down.weight", (width, ffn), ffn ** -0.5, f16=True)
        t(b + "ffn_down.bias", (width,), 0.05)
    t("v.post_ln.weight", (width,), 0.1, 1.0)
    t("v.post_ln.bias", (width,), 0.05)
    merged = 4 * width
    t("mm.0.weight", (merged, merged), merged ** -0.5, f16=True)
    t("mm.0.bias", (merged,), 0.05)
    t("mm.2.weight", (out_width, merged), merged ** -0.5, f16=True)
    t("mm.2.bias", (out_width,), 0.05)
    for i in deepstack:
        b = f"v.deepstack.{i}."
        t(b + "norm.weight", (merged,), 0.1, 1.0)
        t(b + "norm.bias", (merged,), 0.05)
        t(b + "fc1.weight", (merged, merged), merged ** -0.5, f16=True)
        t(b + "fc1.bias", (merged,), 0.05)
        t(b + "fc2.weight", (out_width, merged), merged ** -0.5, f16=True)
        t(b + "fc2.bias", (out_width,), 0.05)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_qwen3vl_text_model(path: Path, width: int, layers: int, heads: int, kv_heads: int,
                             ffn: int, deepstack: int, gguf_py: Path, head_dim: int = 128,
                             seed: int = 0) -> None:
    """A qwen3vl language model (Qwen3-VL's: qwen3 with per-head Q / K RMSNorms, no biases,
    interleaved M-RoPE sections 24/20/20/0 of 64 pairs for heads of 128, scaled for smaller
    heads, rope base 5e6, qwen3vl.n_deepstack_layers = `deepstack`) of the given shape, random
    weights (numpy `seed`; F16 matrices, F32 norms), SmolLM2's tokenizer: the language side of
    bench/image_kl_oracle.py's --type qwen3vl and the stand-in libmtmd needs beside a qwen3vl
    projector in bench/vision_oracle.py (whose input width is width * (1 + deepstack))."""
    sys.path.insert(0, str(gguf_py))
    import gguf  # noqa: PLC0415
    rng = np.random.default_rng(seed)
    fields = synth_models.tokenizer_fields(gguf)
    n_vocab = synth_models.vocab_size(fields)
    pairs = head_dim // 2
    sections = [pairs * 24 // 64, pairs * 20 // 64, pairs * 20 // 64, 0]
    w = gguf.GGUFWriter(str(path), "qwen3vl")
    w.add_name(f"qwen3vl width {width}, {layers} layers, {deepstack} deepstack "
               "(synthetic: random weights, SmolLM2 tokenizer)")
    w.add_context_length(32768)
    w.add_embedding_length(width)
    w.add_block_count(layers)
    w.add_feed_forward_length(ffn)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_dimension_sections(sections)
    w.add_rope_freq_base(5000000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_uint32("qwen3vl.n_deepstack_layers", deepstack)
    w.add_vocab_size(n_vocab)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    for key, value, vtype, sub in fields:
        w.add_key_value(key, value, vtype, sub_type=sub)

    def matrix(rows, cols):
        a = rng.standard_normal((rows, cols), dtype=np.float32) / np.sqrt(cols)
        return a.astype(np.float16)

    def norm(n):
        return (1.0 + 0.1 * rng.standard_normal(n, dtype=np.float32)).astype(np.float32)

    q, kv = heads * head_dim, kv_heads * head_dim
    w.add_tensor("token_embd.weight", rng.standard_normal((n_vocab, width), dtype=np.float32)
                 .astype(np.float16))
    w.add_tensor("output_norm.weight", norm(width))
    w.add_tensor("output.weight", matrix(n_vocab, width))
    for i in range(layers):
        b = f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", norm(width))
        w.add_tensor(b + "attn_q.weight", matrix(q, width))
        w.add_tensor(b + "attn_k.weight", matrix(kv, width))
        w.add_tensor(b + "attn_v.weight", matrix(kv, width))
        w.add_tensor(b + "attn_q_norm.weight", norm(head_dim))
        w.add_tensor(b + "attn_k_norm.weight", norm(head_dim))
        w.add_tensor(b + "attn_output.weight", matrix(width, q))
        w.add_tensor(b + "ffn_norm.weight", norm(width))
        w.add_tensor(b + "ffn_gate.weight", matrix(ffn, width))
        w.add_tensor(b + "ffn_up.weight", matrix(ffn, width))
        w.add_tensor(b + "ffn_down.weight", matrix(width, ffn))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
