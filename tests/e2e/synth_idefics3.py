"""SmolVLM-shaped files for the idefics3 tests, in pure Python and numpy (CI has neither
llama.cpp nor gguf-py):

write_smolvlm_lm: a language model GGUF with SmolVLM's image tokens. llama.cpp's idefics3 layout
(mtmd.cpp) looks "<fake_token_around_image>" and "<global-img>" up in the model's vocabulary and
tokenizes "<row_R_col_C>": SmolVLM's tokenizer has them, SmolLM2's (the tests' chat model, of
SmolVLM-256M's language model's shape) does not. So the file is a copy of a llama GGUF (the
chat model) with SMOLVLM_TOKENS appended to its vocabulary as control tokens and as many rows
appended to token_embd (random, quantized as the table is: F32, F16 or Q8_0), and a chat
template of SmolVLM's turns taking content parts (CHAT_TEMPLATE); every other key and tensor is
copied byte for byte. (Their ids are not SmolVLM's; tokenizer and model agree.)

write_idefics3_mmproj: a tiny idefics3 projector (clip.projector_type idefics3, the tensors
convert_hf_to_gguf.py's SmolVLM conversion writes: SigLIP with biases, mm.model.fc.weight),
random F32 weights: tiles of TILE pixels, patches of PATCH, pixel shuffle SCALE, so
(TILE / PATCH / SCALE)^2 = 9 rows per tile; clip.vision.preproc_image_size `longest_edge`
(the longer side an image is resized to: 24 gives one tile, 72 up to 3 x 3).

    python tests/e2e/synth_idefics3.py lm SRC.gguf OUT.gguf
    python tests/e2e/synth_idefics3.py mmproj OUT.gguf --projection-dim 576 --longest-edge 72
"""

import argparse
import mmap
import struct

import numpy as np

from synth_moe import ARRAY, BOOL, F32, I32, STRING, _f32, _skip_value, _str, _u32, write_gguf

# SmolVLM's added tokens, as its tokenizer has them (the image layout's, and its turn end).
SMOLVLM_TOKENS = (["<fake_token_around_image>", "<image>", "<global-img>"] +
                  [f"<row_{r}_col_{c}>" for r in range(1, 7) for c in range(1, 7)] +
                  ["<end_of_utterance>"])
CONTROL = 3  # llama.cpp's LLAMA_TOKEN_TYPE_CONTROL
# SmolVLM's turns ("<|im_start|>User:...<end_of_utterance>\nAssistant:"), content parts
# (radixlm gives an image part to the template as a text part holding the media marker).
CHAT_TEMPLATE = (
    "<|im_start|>{% for m in messages %}"
    "{% if m['role'] == 'user' %}User:{% elif m['role'] == 'system' %}System:"
    "{% else %}Assistant:{% endif %}"
    "{% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for p in m['content'] %}{{ p['text'] }}{% endfor %}{% endif %}"
    "<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}")

TILE, PATCH, SCALE, WIDTH, HEADS, FFN, LAYERS = 24, 4, 2, 32, 4, 48, 2
ROWS_PER_TILE = (TILE // PATCH // SCALE) ** 2

# ggml types whose rows write_smolvlm_lm can append: (block elements, block bytes).
GGML_BLOCKS = {0: (1, 4), 1: (1, 2), 8: (32, 34)}


def _string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def _read_string(buf, pos):
    (n,) = struct.unpack_from("<Q", buf, pos)
    return bytes(buf[pos + 8:pos + 8 + n]).decode(), pos + 8 + n


def _rows(ggml_type, values):
    """values [n, cols] float -> the bytes of n rows of that ggml type."""
    if ggml_type == 0:
        return values.astype("<f4").tobytes()
    if ggml_type == 1:
        return values.astype("<f2").tobytes()
    blocks = values.reshape(-1, 32)  # Q8_0: an f16 scale and 32 int8 per block
    d = np.abs(blocks).max(axis=1) / 127.0
    q = np.round(blocks / np.where(d == 0, 1, d)[:, None]).astype(np.int8)
    out = bytearray()
    for scale, quants in zip(d.astype("<f2"), q):
        out += scale.tobytes() + quants.tobytes()
    return bytes(out)


def write_smolvlm_lm(src, dst, seed=0):
    with open(src, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        magic, version, n_tensors, n_kv = struct.unpack_from("<4sIQQ", buf, 0)
        if magic != b"GGUF" or version not in (2, 3):
            raise ValueError(f"{src}: not a GGUF v2/v3 file")
        pos, kvs, alignment = 24, [], 32
        for _ in range(n_kv):
            key, pos = _read_string(buf, pos)
            (vtype,) = struct.unpack_from("<I", buf, pos)
            end = _skip_value(buf, pos + 4, vtype)
            kvs.append((key, bytes(buf[pos:end])))
            if key == "general.alignment":
                (alignment,) = struct.unpack_from("<I", buf, pos + 4)
            pos = end
        infos = []
        for _ in range(n_tensors):
            name, pos = _read_string(buf, pos)
            (n_dims,) = struct.unpack_from("<I", buf, pos)
            dims = list(struct.unpack_from(f"<{n_dims}Q", buf, pos + 4))
            ggml_type, offset = struct.unpack_from("<IQ", buf, pos + 4 + 8 * n_dims)
            pos += 4 + 8 * n_dims + 12
            infos.append([name, dims, ggml_type, offset])
        data_start = (pos + alignment - 1) // alignment * alignment
        ends = sorted(i[3] for i in infos)[1:] + [len(buf) - data_start]
        size_of = {o: e - o for o, e in zip(sorted(i[3] for i in infos), ends)}
        n_vocab = None
        out_kvs = []
        for key, raw in kvs:
            if key == "tokenizer.ggml.tokens":
                _, n_vocab = struct.unpack_from("<IQ", raw, 4)
                raw = (struct.pack("<IIQ", ARRAY, STRING, n_vocab + len(SMOLVLM_TOKENS)) +
                       raw[16:] + b"".join(_string(t) for t in SMOLVLM_TOKENS))
            elif key == "tokenizer.ggml.token_type":
                (count,) = struct.unpack_from("<Q", raw, 8)
                raw = (struct.pack("<IIQ", ARRAY, I32, count + len(SMOLVLM_TOKENS)) + raw[16:] +
                       struct.pack(f"<{len(SMOLVLM_TOKENS)}i", *[CONTROL] * len(SMOLVLM_TOKENS)))
            elif key == "tokenizer.ggml.scores":
                (count,) = struct.unpack_from("<Q", raw, 8)
                raw = (struct.pack("<IIQ", ARRAY, F32, count + len(SMOLVLM_TOKENS)) + raw[16:] +
                       struct.pack(f"<{len(SMOLVLM_TOKENS)}f", *[0.0] * len(SMOLVLM_TOKENS)))
            elif key.endswith(".vocab_size"):
                continue  # rewritten below
            elif key == "tokenizer.chat_template":
                raw = _str(CHAT_TEMPLATE)
            elif key == "general.name":
                raw = _str("SmolVLM-shaped language model: " + src.split("/")[-1] +
                           " with SmolVLM's image tokens")
            out_kvs.append((key, raw))
        arch = next(raw for key, raw in kvs if key == "general.architecture")
        arch = arch[12:].decode()
        out_kvs.append((f"{arch}.vocab_size", _u32(n_vocab + len(SMOLVLM_TOKENS))))
        rng = np.random.default_rng(seed)
        blobs, offset = [], 0
        for info in infos:
            name, dims, ggml_type, old = info
            elements_per_block, block_bytes = GGML_BLOCKS.get(ggml_type, (0, 0))
            data = bytes(buf[data_start + old:data_start + old + size_of[old]])
            if name in ("token_embd.weight", "output.weight") and dims[1] == n_vocab:
                if ggml_type not in GGML_BLOCKS:
                    raise ValueError(f"{name}: ggml type {ggml_type} rows cannot be appended")
                row_bytes = dims[0] // elements_per_block * block_bytes
                data = data[:row_bytes * n_vocab] + _rows(
                    ggml_type, rng.normal(0.0, 0.05, (len(SMOLVLM_TOKENS), dims[0])))
                info[1] = [dims[0], n_vocab + len(SMOLVLM_TOKENS)]
            info[3] = offset
            data += b"\0" * (-len(data) % alignment)
            blobs.append(data)
            offset += len(data)
        head = b"GGUF" + struct.pack("<IQQ", 3, len(infos), len(out_kvs))
        head += b"".join(_string(k) + raw for k, raw in out_kvs)
        for name, dims, ggml_type, off in infos:
            head += (_string(name) + struct.pack("<I", len(dims)) +
                     struct.pack(f"<{len(dims)}Q", *dims) + struct.pack("<IQ", ggml_type, off))
    with open(dst, "wb") as f:
        f.write(head + b"\0" * (-len(head) % alignment))
        for blob in blobs:
            f.write(blob)


def _bool(v):
    return struct.pack("<IB", BOOL, int(v))


def _f32s(values):
    return struct.pack("<IIQ", ARRAY, F32, len(values)) + struct.pack(f"<{len(values)}f", *values)


def write_idefics3_mmproj(path, projection_dim, longest_edge, seed=1):
    rng = np.random.default_rng(seed)
    h, side = WIDTH, TILE // PATCH
    metadata = {
        "general.architecture": _str("clip"),
        "clip.has_vision_encoder": _bool(True),
        "clip.projector_type": _str("idefics3"),
        "clip.use_gelu": _bool(True),
        "clip.vision.projection_dim": _u32(projection_dim),
        "clip.vision.image_size": _u32(TILE),
        "clip.vision.patch_size": _u32(PATCH),
        "clip.vision.embedding_length": _u32(h),
        "clip.vision.feed_forward_length": _u32(FFN),
        "clip.vision.block_count": _u32(LAYERS),
        "clip.vision.attention.head_count": _u32(HEADS),
        "clip.vision.attention.layer_norm_epsilon": _f32(1e-6),
        "clip.vision.image_mean": _f32s([0.5, 0.5, 0.5]),
        "clip.vision.image_std": _f32s([0.5, 0.5, 0.5]),
        "clip.vision.projector.scale_factor": _u32(SCALE),
        "clip.vision.preproc_image_size": _u32(longest_edge),
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
    merged = h * SCALE * SCALE
    tensors += [("v.post_ln.weight", t((h,), 0.1, 1.0)), ("v.post_ln.bias", t((h,), 0.1)),
                ("mm.model.fc.weight", t((projection_dim, merged), 1.0 / np.sqrt(merged)))]
    write_gguf(path, metadata, tensors)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    lm = sub.add_parser("lm")
    lm.add_argument("src")
    lm.add_argument("out")
    mm = sub.add_parser("mmproj")
    mm.add_argument("out")
    mm.add_argument("--projection-dim", type=int, default=576)
    mm.add_argument("--longest-edge", type=int, default=72)
    mm.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.what == "lm":
        write_smolvlm_lm(args.src, args.out)
    else:
        write_idefics3_mmproj(args.out, args.projection_dim, args.longest_edge, args.seed)
