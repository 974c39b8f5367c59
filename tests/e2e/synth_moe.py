"""Small synthetic mixture-of-experts GGUFs for the end-to-end tests, written in pure Python and
numpy (CI has neither llama.cpp nor gguf-py): random F32 weights in a tiny shape of `qwen3moe`
(8 experts, 2 per token, Q/K norms), `gpt-oss` (4 experts, 2 per token, biases, attention
sinks, sliding and full layers alternating), Mixtral's (`llama` with 4 experts, 2 per token) or
Gemma 4's mixture of experts (`gemma4` with 4 experts, 2 per token, beside each layer's dense
FFN: a sliding layer with heads of 16 and a global one with heads of 32 whose V is K's
projection, the experts' gate and up fused on the first), and the tokenizer of
SmolLM2-135M-Instruct (the tests' chat model) copied key by key from its GGUF, with the chat
template the caller gives.

The weights are random, so the text is noise; the tests check what the server does with it
(cache reuse, constraints, speculation, parsing), not what a model says."""

import mmap
import struct

import numpy as np

ALIGNMENT = 32
# GGUF metadata value types.
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
SCALAR_BYTES = {U8: 1, I8: 1, U16: 2, I16: 2, U32: 4, I32: 4, F32: 4, BOOL: 1, U64: 8, I64: 8,
                F64: 8}
GGML_F32 = 0


def _skip_value(buf, pos, vtype):
    if vtype in SCALAR_BYTES:
        return pos + SCALAR_BYTES[vtype]
    if vtype == STRING:
        (n,) = struct.unpack_from("<Q", buf, pos)
        return pos + 8 + n
    if vtype == ARRAY:
        etype, count = struct.unpack_from("<IQ", buf, pos)
        pos += 12
        if etype in SCALAR_BYTES:
            return pos + count * SCALAR_BYTES[etype]
        for _ in range(count):
            pos = _skip_value(buf, pos, etype)
        return pos
    raise ValueError(f"GGUF value type {vtype} unknown")


def tokenizer_metadata(path):
    """{key: the raw bytes of its value type and value} for the tokenizer.* keys of a GGUF."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        magic, version, _, n_kv = struct.unpack_from("<4sIQQ", buf, 0)
        if magic != b"GGUF" or version not in (2, 3):
            raise ValueError(f"{path}: not a GGUF v2/v3 file")
        pos, out = 24, {}
        for _ in range(n_kv):
            (n,) = struct.unpack_from("<Q", buf, pos)
            key = bytes(buf[pos + 8:pos + 8 + n]).decode()
            pos += 8 + n
            (vtype,) = struct.unpack_from("<I", buf, pos)
            end = _skip_value(buf, pos + 4, vtype)
            if key.startswith("tokenizer."):
                out[key] = bytes(buf[pos:end])
            pos = end
        return out


def _string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def _kv(key, raw):
    return _string(key) + raw


def _u32(v):
    return struct.pack("<II", U32, v)


def _f32(v):
    return struct.pack("<If", F32, v)


def _str(v):
    return struct.pack("<I", STRING) + _string(v)


def _bools(values):
    return struct.pack("<IIQ", ARRAY, BOOL, len(values)) + bytes(int(v) for v in values)


def _pad(n):
    return (-n) % ALIGNMENT


def write_gguf(path, metadata, tensors):
    """metadata: {key: raw type+value bytes}; tensors: [(name, float32 array)] (a GGUF's dims
    are the array's shape reversed: ne0 is the last axis)."""
    infos, offset, blobs = b"", 0, []
    for name, array in tensors:
        array = np.ascontiguousarray(array, dtype=np.float32)
        dims = array.shape[::-1]
        infos += (_string(name) + struct.pack("<I", len(dims)) +
                  b"".join(struct.pack("<Q", d) for d in dims) +
                  struct.pack("<IQ", GGML_F32, offset))
        blobs.append(array.tobytes())
        offset += array.nbytes + _pad(array.nbytes)
    head = (b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata)) +
            b"".join(_kv(k, v) for k, v in metadata.items()) + infos)
    with open(path, "wb") as f:
        f.write(head + b"\0" * _pad(len(head)))
        for blob in blobs:
            f.write(blob + b"\0" * _pad(len(blob)))


# The tiny shapes: hidden 64, 4 query heads and 2 KV heads of 16, 2 layers (gpt-oss and gemma4:
# one sliding-window layer of 128 and one full; gemma4's full layer has heads of 32).
HIDDEN, HEADS, KV_HEADS, HEAD_DIM, LAYERS = 64, 4, 2, 16, 2
GEMMA4_GLOBAL_HEAD_DIM = 32
SHAPES = {
    "qwen3moe": dict(experts=8, used=2, expert_ffn=32),
    "gpt-oss": dict(experts=4, used=2, expert_ffn=32),
    "llama": dict(experts=4, used=2, expert_ffn=64),  # Mixtral: experts as wide as the FFN
    "gemma4": dict(experts=4, used=2, expert_ffn=32),  # beside a dense FFN of 64
}


def write_model(path, arch, tokenizer_gguf, chat_template, seed=0):
    """Writes a synthetic `arch` model to `path` with the tokenizer of `tokenizer_gguf` and
    `chat_template` as tokenizer.chat_template."""
    s = SHAPES[arch]
    rng = np.random.default_rng(seed)
    meta = {"general.architecture": _str(arch),
            "general.name": _str(f"synthetic {arch} (random weights, SmolLM2 tokenizer)")}
    for key, value in {"block_count": _u32(LAYERS), "context_length": _u32(4096),
                       "embedding_length": _u32(HIDDEN),
                       "feed_forward_length": _u32(64),
                       "attention.head_count": _u32(HEADS),
                       "attention.head_count_kv": _u32(KV_HEADS),
                       "attention.key_length": _u32(HEAD_DIM),
                       "attention.value_length": _u32(HEAD_DIM),
                       "attention.layer_norm_rms_epsilon": _f32(1e-5),
                       "rope.freq_base": _f32(10000.0), "expert_count": _u32(s["experts"]),
                       "expert_used_count": _u32(s["used"])}.items():
        meta[f"{arch}.{key}"] = value
    if arch != "llama":
        meta[f"{arch}.expert_feed_forward_length"] = _u32(s["expert_ffn"])
    if arch == "gpt-oss":
        meta["gpt-oss.attention.sliding_window"] = _u32(128)
    if arch == "gemma4":  # layer 0 sliding (heads of 16), layer 1 global (heads of 32)
        meta.update({"gemma4.attention.sliding_window": _u32(128),
                     "gemma4.attention.sliding_window_pattern": _bools([True, False]),
                     "gemma4.attention.key_length": _u32(GEMMA4_GLOBAL_HEAD_DIM),
                     "gemma4.attention.value_length": _u32(GEMMA4_GLOBAL_HEAD_DIM),
                     "gemma4.attention.key_length_swa": _u32(HEAD_DIM),
                     "gemma4.attention.value_length_swa": _u32(HEAD_DIM),
                     "gemma4.rope.freq_base": _f32(1000000.0),
                     "gemma4.rope.freq_base_swa": _f32(10000.0),
                     "gemma4.final_logit_softcapping": _f32(30.0)})
    tok = tokenizer_metadata(tokenizer_gguf)
    tok["tokenizer.chat_template"] = _str(chat_template)
    meta.update(tok)
    n_vocab = struct.unpack_from("<IQ", tok["tokenizer.ggml.tokens"], 4)[1]

    def matrix(rows, cols, scale=None):  # [rows, cols]: ne0 = cols
        return rng.normal(0.0, scale if scale else 1.0 / np.sqrt(cols), (rows, cols))

    def norm(n):
        return 1.0 + rng.uniform(-0.1, 0.1, n)

    def bias(*shape):
        return rng.uniform(-0.2, 0.2, shape)

    q, kv, e, f = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM, s["experts"], s["expert_ffn"]
    tensors = [("token_embd.weight", matrix(n_vocab, HIDDEN, 1.0)),
               ("output_norm.weight", norm(HIDDEN)),
               ("output.weight", matrix(n_vocab, HIDDEN))]
    if arch == "gemma4":
        write_gguf(path, meta, tensors[:2] + _gemma4_layers(rng, matrix, norm, e, f))
        return
    for i in range(LAYERS):
        p = f"blk.{i}."
        layer = [("attn_norm.weight", norm(HIDDEN)), ("attn_q.weight", matrix(q, HIDDEN)),
                 ("attn_k.weight", matrix(kv, HIDDEN)), ("attn_v.weight", matrix(kv, HIDDEN)),
                 ("attn_output.weight", matrix(HIDDEN, q)),
                 ("ffn_gate_inp.weight", matrix(e, HIDDEN)),
                 ("ffn_gate_exps.weight", rng.normal(0, HIDDEN ** -0.5, (e, f, HIDDEN))),
                 ("ffn_up_exps.weight", rng.normal(0, HIDDEN ** -0.5, (e, f, HIDDEN))),
                 ("ffn_down_exps.weight", rng.normal(0, f ** -0.5, (e, HIDDEN, f)))]
        if arch == "qwen3moe":
            layer += [("attn_q_norm.weight", norm(HEAD_DIM)),
                      ("attn_k_norm.weight", norm(HEAD_DIM)), ("ffn_norm.weight", norm(HIDDEN))]
        elif arch == "llama":
            layer += [("ffn_norm.weight", norm(HIDDEN))]
        else:
            layer += [("post_attention_norm.weight", norm(HIDDEN)), ("attn_q.bias", bias(q)),
                      ("attn_k.bias", bias(kv)), ("attn_v.bias", bias(kv)),
                      ("attn_output.bias", bias(HIDDEN)),
                      ("attn_sinks.weight", rng.uniform(-1.0, 3.0, HEADS)),
                      ("ffn_gate_inp.bias", bias(e)), ("ffn_gate_exps.bias", bias(e, f)),
                      ("ffn_up_exps.bias", bias(e, f)), ("ffn_down_exps.bias", bias(e, HIDDEN))]
        tensors += [(p + name, a) for name, a in layer]
    write_gguf(path, meta, tensors)


def _gemma4_layers(rng, matrix, norm, e, f):
    """Gemma 4's MoE layers (a tied head: the embedding is the output matrix): a sliding layer
    and a global one (proportional RoPE: rope_freqs leaves half its pairs in place; V is K's
    projection), each with the dense FFN beside the routed experts (the router's input scale,
    the experts' pre-norm, both branches' post-norms, per-expert output scales), the experts'
    gate and up fused in layer 0 and separate in layer 1."""
    half = GEMMA4_GLOBAL_HEAD_DIM // 2
    tensors = [("rope_freqs.weight", np.array([1.0] * (half // 2) + [1e30] * (half - half // 2)))]
    for i, hd in enumerate([HEAD_DIM, GEMMA4_GLOBAL_HEAD_DIM]):
        q, kv = HEADS * hd, KV_HEADS * hd
        layer = [("attn_norm.weight", norm(HIDDEN)), ("attn_q.weight", matrix(q, HIDDEN)),
                 ("attn_k.weight", matrix(kv, HIDDEN)),
                 ("attn_q_norm.weight", norm(hd) / hd ** 0.25),
                 ("attn_k_norm.weight", norm(hd) / hd ** 0.25),
                 ("attn_output.weight", matrix(HIDDEN, q)),
                 ("post_attention_norm.weight", norm(HIDDEN)), ("ffn_norm.weight", norm(HIDDEN)),
                 ("ffn_gate.weight", matrix(64, HIDDEN)), ("ffn_up.weight", matrix(64, HIDDEN)),
                 ("ffn_down.weight", matrix(HIDDEN, 64)), ("post_ffw_norm.weight", norm(HIDDEN)),
                 ("ffn_gate_inp.weight", matrix(e, HIDDEN, 4.0)),
                 ("ffn_gate_inp.scale", norm(HIDDEN)), ("pre_ffw_norm_2.weight", norm(HIDDEN)),
                 ("post_ffw_norm_1.weight", norm(HIDDEN)),
                 ("post_ffw_norm_2.weight", norm(HIDDEN)),
                 ("ffn_down_exps.weight", rng.normal(0, f ** -0.5, (e, HIDDEN, f))),
                 ("ffn_down_exps.scale", rng.uniform(0.5, 1.5, e)),
                 ("layer_output_scale.weight", rng.uniform(0.5, 1.0, 1))]
        if i == 0:  # sliding: a V of its own; the experts' gate and up fused (gate rows first)
            layer += [("attn_v.weight", matrix(kv, HIDDEN)),
                      ("ffn_gate_up_exps.weight",
                       rng.normal(0, HIDDEN ** -0.5, (e, 2 * f, HIDDEN)))]
        else:
            layer += [("ffn_gate_exps.weight", rng.normal(0, HIDDEN ** -0.5, (e, f, HIDDEN))),
                      ("ffn_up_exps.weight", rng.normal(0, HIDDEN ** -0.5, (e, f, HIDDEN)))]
        tensors += [(f"blk.{i}.{name}", a) for name, a in layer]
    return tensors
