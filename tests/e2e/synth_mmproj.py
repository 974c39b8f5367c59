"""A tiny synthetic gemma3 vision projector GGUF (llama.cpp's mmproj form: general.architecture
clip, clip.projector_type gemma3, the tensor names convert_hf_to_gguf.py's Gemma3VisionModel
writes), random weights, written in pure Python and numpy; the tiny shape of
tests/vision/tiny_projector.cc with the output width of the language model it serves
(projection_dim: 640 for the default model gemma-3-270m).

Images are 32x32 (resized to it), patches of 4, pooled by 2: 16 tokens per image.

write_gemma4v_mmproj: a tiny gemma4v projector (Gemma 4's vision tower as
convert_hf_to_gguf.py's Gemma4VisionAudioModel writes it: no patch bias, x / y position tables,
per-head q / k norms, post norms, the gated FFN, out_scale, clamp scalars, std_bias /
std_scale) in the tiny shape of tests/vision/tiny_gemma4v.cc: patches of 4 pooled by 2, so an
image becomes (w / 8) * (h / 8) tokens of the size it is resized to (70 to 1120 tokens, sides
multiples of 8; at most 64 patches a side).

    python tests/e2e/synth_mmproj.py OUT.gguf --projection-dim 640 --seed 1
"""

import argparse
import struct

import numpy as np

from synth_moe import ARRAY, BOOL, F32, _f32, _str, _u32, write_gguf

IMAGE_SIZE, PATCH, SCALE, WIDTH, HEADS, FFN, LAYERS = 32, 4, 2, 32, 4, 48, 2
TOKENS_PER_IMAGE = (IMAGE_SIZE // PATCH // SCALE) ** 2


def _bool(v):
    return struct.pack("<IB", BOOL, int(v))


def _f32s(values):
    return struct.pack("<IIQ", ARRAY, F32, len(values)) + struct.pack(f"<{len(values)}f", *values)


def write_mmproj(path, projection_dim=640, seed=1):
    rng = np.random.default_rng(seed)
    h, side = WIDTH, IMAGE_SIZE // PATCH
    metadata = {
        "general.architecture": _str("clip"),
        "clip.has_vision_encoder": _bool(True),
        "clip.projector_type": _str("gemma3"),
        "clip.use_gelu": _bool(True),
        "clip.vision.projection_dim": _u32(projection_dim),
        "clip.vision.image_size": _u32(IMAGE_SIZE),
        "clip.vision.patch_size": _u32(PATCH),
        "clip.vision.embedding_length": _u32(h),
        "clip.vision.feed_forward_length": _u32(FFN),
        "clip.vision.block_count": _u32(LAYERS),
        "clip.vision.attention.head_count": _u32(HEADS),
        "clip.vision.attention.layer_norm_epsilon": _f32(1e-6),
        "clip.vision.image_mean": _f32s([0.5, 0.5, 0.5]),
        "clip.vision.image_std": _f32s([0.5, 0.5, 0.5]),
        "clip.vision.projector.scale_factor": _u32(SCALE),
    }

    def t(shape, scale, offset=0.0):  # numpy shape: the GGUF dims reversed
        return (offset + scale * rng.standard_normal(shape)).astype(np.float32)

    w = 1.0 / np.sqrt(h)
    tensors = [("v.patch_embd.weight", t((h, 3, PATCH, PATCH), 0.3)),
               ("v.patch_embd.bias", t((h,), 0.1)),
               ("v.position_embd.weight", t((side * side, h), 0.5))]
    for i in range(LAYERS):
        b = f"v.blk.{i}."
        for m in ("attn_q", "attn_k", "attn_v", "attn_out"):
            tensors += [(b + m + ".weight", t((h, h), w)), (b + m + ".bias", t((h,), 0.1))]
        tensors += [(b + "ln1.weight", t((h,), 0.1, 1.0)), (b + "ln1.bias", t((h,), 0.1)),
                    (b + "ln2.weight", t((h,), 0.1, 1.0)), (b + "ln2.bias", t((h,), 0.1)),
                    (b + "ffn_up.weight", t((FFN, h), w)), (b + "ffn_up.bias", t((FFN,), 0.1)),
                    (b + "ffn_down.weight", t((h, FFN), 1.0 / np.sqrt(FFN))),
                    (b + "ffn_down.bias", t((h,), 0.1))]
    tensors += [("v.post_ln.weight", t((h,), 0.1, 1.0)), ("v.post_ln.bias", t((h,), 0.1)),
                ("mm.soft_emb_norm.weight", t((h,), 0.1, 1.0)),
                ("mm.input_projection.weight", t((h, projection_dim), w))]
    write_gguf(path, metadata, tensors)



G4_PATCH, G4_MERGE, G4_WIDTH, G4_HEADS, G4_FFN, G4_LAYERS, G4_POSITIONS = 4, 2, 32, 4, 40, 2, 64


def write_gemma4v_mmproj(path, projection_dim, seed=1):
    rng = np.random.default_rng(seed)
    h, hd = G4_WIDTH, G4_WIDTH // G4_HEADS
    metadata = {
        "general.architecture": _str("clip"),
        "clip.has_vision_encoder": _bool(True),
        "clip.projector_type": _str("gemma4v"),
        "clip.vision.projection_dim": _u32(projection_dim),
        "clip.vision.image_size": _u32(224),
        "clip.vision.patch_size": _u32(G4_PATCH),
        "clip.vision.embedding_length": _u32(h),
        "clip.vision.feed_forward_length": _u32(G4_FFN),
        "clip.vision.block_count": _u32(G4_LAYERS),
        "clip.vision.attention.head_count": _u32(G4_HEADS),
        "clip.vision.attention.layer_norm_epsilon": _f32(1e-6),
        "clip.vision.image_mean": _f32s([0.0, 0.0, 0.0]),
        "clip.vision.image_std": _f32s([1.0, 1.0, 1.0]),
        "clip.vision.projector.scale_factor": _u32(G4_MERGE),
    }

    def t(shape, scale, offset=0.0):  # numpy shape: the GGUF dims reversed
        return (offset + scale * rng.standard_normal(shape)).astype(np.float32)

    def clamps(base):
        return [(f"{base}.input_min", t((1,), 0.1, -1.5)), (f"{base}.input_max", t((1,), 0.1, 1.5)),
                (f"{base}.output_min", t((1,), 0.2, -2.0)),
                (f"{base}.output_max", t((1,), 0.2, 2.0))]

    w = 1.0 / np.sqrt(h)
    tensors = [("v.patch_embd.weight", t((h, 3, G4_PATCH, G4_PATCH), 0.2)),
               ("v.position_embd.weight", t((2, G4_POSITIONS, h), 0.3))]
    for i in range(G4_LAYERS):
        b = f"v.blk.{i}."
        for m in ("attn_q", "attn_k", "attn_v", "attn_out"):
            tensors += [(b + m + ".weight", t((h, h), w))] + clamps(b + m)
        tensors += [(b + "attn_q_norm.weight", t((hd,), 0.1, 1.0)),
                    (b + "attn_k_norm.weight", t((hd,), 0.1, 1.0))]
        for n in ("ln1", "ln2", "attn_post_norm", "ffn_post_norm"):
            tensors += [(b + n + ".weight", t((h,), 0.1, 1.0))]
        for m in ("ffn_up", "ffn_gate"):
            tensors += [(b + m + ".weight", t((G4_FFN, h), w))] + clamps(b + m)
        tensors += [(b + "ffn_down.weight", t((h, G4_FFN), 1.0 / np.sqrt(G4_FFN)))]
        tensors += clamps(b + "ffn_down") + [(b + "out_scale.weight", t((1,), 0.1, 0.8))]
    tensors += [("v.std_bias", t((h,), 0.3)), ("v.std_scale", t((h,), 0.1, 1.0)),
                ("mm.input_projection.weight", t((projection_dim, h), w))]
    tensors += clamps("mm.input_projection")
    write_gguf(path, metadata, tensors)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--projection-dim", type=int, default=640)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    write_mmproj(args.out, args.projection_dim, args.seed)
