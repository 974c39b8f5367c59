"""A Hugging Face checkpoint folder for the end-to-end tests, written in Python: random numpy
weights of a tiny Llama (LlamaForCausalLM) in model.safetensors (the `safetensors` package), a
tokenizer.json built with the `tokenizers` package from SmolLM2-135M-Instruct's vocabulary and
merges (read from its GGUF, the tests' chat model), and that model's chat template and special
tokens in tokenizer_config.json.

The weights are random, so the text is noise; the tests check that the folder loads, tokenizes
as the `tokenizers` package does and serves chat completions."""

import json
import mmap
import pathlib
import struct

import numpy as np

U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
_SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f",
           BOOL: "<?", U64: "<Q", I64: "<q", F64: "<d"}
CONTROL = 3

SHAPE = dict(layers=2, hidden=64, heads=4, kv_heads=2, ffn=128)


def _read_value(buf, pos, vtype):
    """(value, position after it) of a GGUF metadata value."""
    if vtype in _SCALAR:
        fmt = _SCALAR[vtype]
        return struct.unpack_from(fmt, buf, pos)[0], pos + struct.calcsize(fmt)
    if vtype == STRING:
        (n,) = struct.unpack_from("<Q", buf, pos)
        return bytes(buf[pos + 8:pos + 8 + n]).decode("utf-8"), pos + 8 + n
    if vtype == ARRAY:
        etype, count = struct.unpack_from("<IQ", buf, pos)
        pos += 12
        items = []
        for _ in range(count):
            item, pos = _read_value(buf, pos, etype)
            items.append(item)
        return items, pos
    raise ValueError(f"GGUF value type {vtype} unknown")


def gguf_tokenizer(path):
    """The tokenizer.* metadata of a GGUF, decoded."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        magic, version, _, n_kv = struct.unpack_from("<4sIQQ", buf, 0)
        if magic != b"GGUF" or version not in (2, 3):
            raise ValueError(f"{path}: not a GGUF v2/v3 file")
        pos, out = 24, {}
        for _ in range(n_kv):
            (n,) = struct.unpack_from("<Q", buf, pos)
            key = bytes(buf[pos + 8:pos + 8 + n]).decode()
            (vtype,) = struct.unpack_from("<I", buf, pos + 8 + n)
            value, pos = _read_value(buf, pos + 12 + n, vtype)
            if key.startswith("tokenizer."):
                out[key] = value
        return out


# The Split patterns of Llama-3's and Qwen2's tokenizer.json files.
SPLIT_PATTERNS = {
    "llama3": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    "qwen2": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
}


def build_tokenizer(meta, pre="smollm"):
    """A `tokenizers.Tokenizer` over SmolLM2's vocabulary and merges, its control tokens as
    special added tokens. `pre`: SmolLM2's own pre-tokenizer (single digits, then GPT-2's
    pattern), or Llama-3's ("llama3": its Split pattern, ignore_merges) or Qwen2's ("qwen2":
    with Qwen2's NFC normalizer)."""
    from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models, normalizers,
                            pre_tokenizers)

    tokens, types = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]
    vocab = {t: i for i, t in enumerate(tokens)}
    merges = [tuple(m.split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=pre == "llama3"))
    if pre == "smollm":
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    else:
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(SPLIT_PATTERNS[pre]), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    if pre == "qwen2":
        tok.normalizer = normalizers.NFC()
    tok.decoder = decoders.ByteLevel()
    specials = [(i, t) for i, t in enumerate(tokens) if types[i] == CONTROL]
    for i, t in sorted(specials):
        tok.add_special_tokens([AddedToken(t, special=True, normalized=False)])
        assert tok.token_to_id(t) == i, f"special token {t!r} landed at {tok.token_to_id(t)}, not {i}"
    return tok


def bf16_bytes(a):
    """float32 -> bfloat16 (round to nearest even), as uint16."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def save_safetensors(path, tensors, dtype):
    """model.safetensors with every matrix in `dtype` ("F32", "F16" or "BF16"; numpy has no bfloat16,
    so the file is written by hand: a little-endian header length, the JSON header, the bytes)
    and every vector in F32."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, a in tensors.items():
        half = dtype in ("BF16", "F16") and a.ndim == 2
        if half and dtype == "BF16":
            data = bf16_bytes(a).tobytes()
        else:
            data = a.astype("<f2" if half else "<f4").tobytes()
        header[name] = {"dtype": dtype if half else "F32", "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def write_folder(folder, chat_gguf, seed=0, generation_config=True, shape=None, dtype="F32",
                 pre="smollm"):
    """Writes the folder (matrices in `dtype`, F32 or BF16; `shape` overrides SHAPE's keys;
    `pre` chooses the tokenizer's pre-tokenizer, see build_tokenizer); returns the
    `tokenizers.Tokenizer` it holds."""
    meta = gguf_tokenizer(chat_gguf)
    tok = build_tokenizer(meta, pre)
    tok.save(str(folder / "tokenizer.json"))
    tokens = meta["tokenizer.ggml.tokens"]
    vocab = len(tokens)
    s = {**SHAPE, **(shape or {})}
    head_dim = s["hidden"] // s["heads"]
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "num_hidden_layers": s["layers"], "hidden_size": s["hidden"],
        "intermediate_size": s["ffn"], "num_attention_heads": s["heads"],
        "num_key_value_heads": s["kv_heads"], "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
        "max_position_embeddings": 2048, "vocab_size": vocab, "tie_word_embeddings": False,
        "torch_dtype": {"BF16": "bfloat16", "F16": "float16"}.get(dtype, "float32"),
        "bos_token_id": meta["tokenizer.ggml.bos_token_id"],
        "eos_token_id": meta["tokenizer.ggml.eos_token_id"]}
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    tokenizer_config = {
        "bos_token": tokens[meta["tokenizer.ggml.bos_token_id"]],
        "eos_token": tokens[meta["tokenizer.ggml.eos_token_id"]],
        "add_bos_token": False,
        "chat_template": meta["tokenizer.chat_template"]}
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2))
    if generation_config:
        (folder / "generation_config.json").write_text(json.dumps(
            {"bos_token_id": config["bos_token_id"], "eos_token_id": config["eos_token_id"],
             "temperature": 0.0, "top_p": 0.9}))

    rng = np.random.default_rng(seed)

    def w(*dims, scale=None):
        # Unit-variance outputs for unit-variance inputs (1 / sqrt(fan-in)); vectors 0.1.
        if scale is None:
            scale = 1 / np.sqrt(dims[-1]) if len(dims) == 2 else 0.1
        return (rng.standard_normal(dims) * scale).astype(np.float32)

    h, kv = s["hidden"], s["kv_heads"] * head_dim
    # An untied head of logits with a spread of about 3 (a tied one would repeat the input).
    tensors = {"model.embed_tokens.weight": w(vocab, h, scale=1.0),
               "lm_head.weight": w(vocab, h, scale=3 / np.sqrt(h)),
               "model.norm.weight": 1 + w(h)}
    for layer in range(s["layers"]):
        p = f"model.layers.{layer}."
        tensors.update({
            p + "input_layernorm.weight": 1 + w(h),
            p + "post_attention_layernorm.weight": 1 + w(h),
            p + "self_attn.q_proj.weight": w(h, h),
            p + "self_attn.k_proj.weight": w(kv, h),
            p + "self_attn.v_proj.weight": w(kv, h),
            p + "self_attn.o_proj.weight": w(h, h),
            p + "mlp.gate_proj.weight": w(s["ffn"], h),
            p + "mlp.up_proj.weight": w(s["ffn"], h),
            p + "mlp.down_proj.weight": w(h, s["ffn"])})
    save_safetensors(folder / "model.safetensors", tensors, dtype)
    return tok


def load_safetensors_f32(path):
    """{name: float32 array} of a safetensors file whose tensors are all F32."""
    raw = pathlib.Path(path).read_bytes()
    (n,) = struct.unpack_from("<Q", raw, 0)
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            raise ValueError(f"{name}: {info['dtype']}, only F32 is read")
        begin, end = info["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + begin:8 + n + end], dtype="<f4").reshape(
            info["shape"])
    return out


def _permute(w, n_head):
    """convert_hf_to_gguf.py's LlamaModel.permute: each head's two halves interleaved."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(
        w.shape)


def _q8_0_bytes(a):
    """gguf-py's Q8_0.quantize_blocks (ggml's quantize_row_q8_0_ref) of a float32 matrix."""
    blocks = np.ascontiguousarray(a, dtype=np.float32).reshape(-1, 32)
    d = abs(blocks).max(axis=1, keepdims=True) / np.float32(127)
    with np.errstate(divide="ignore"):
        inv = np.where(d == 0, np.float32(0), np.float32(1) / d).astype(np.float32)
    x = blocks * inv
    ax = abs(x)
    floored = np.floor(ax)
    qs = (np.sign(x) * (floored + np.floor(np.float32(2) * (ax - floored)))).astype(np.int8)
    return np.concatenate([d.astype(np.float16).view(np.uint8), qs.view(np.uint8)],
                          axis=1).tobytes()


def write_gguf_of_folder(folder, chat_gguf, path, outtype="f32"):
    """The GGUF convert_hf_to_gguf.py makes of a folder write_folder wrote (F32 safetensors), in
    pure Python: its tensor names, Q/K rows permuted, its llama.* keys, the tokenizer.* keys of
    `chat_gguf` (the folder's vocabulary) with add_bos_token as the folder's
    tokenizer_config.json says. outtype "f32", or "q8_0" (matrices as gguf-py quantizes them;
    vectors F32)."""
    from synth_moe import (BOOL, _f32, _kv, _pad, _str, _string, _u32,
                           tokenizer_metadata)
    config = json.loads((pathlib.Path(folder) / "config.json").read_text())
    tok_config = json.loads((pathlib.Path(folder) / "tokenizer_config.json").read_text())
    heads, kv_heads = config["num_attention_heads"], config["num_key_value_heads"]
    meta = {"general.architecture": _str("llama"), "general.name": _str("tiny-llama")}
    for key, value in {"block_count": _u32(config["num_hidden_layers"]),
                       "context_length": _u32(config["max_position_embeddings"]),
                       "embedding_length": _u32(config["hidden_size"]),
                       "feed_forward_length": _u32(config["intermediate_size"]),
                       "attention.head_count": _u32(heads),
                       "attention.head_count_kv": _u32(kv_heads),
                       "attention.layer_norm_rms_epsilon": _f32(config["rms_norm_eps"]),
                       "rope.freq_base": _f32(config["rope_theta"]),
                       "rope.dimension_count": _u32(config["hidden_size"] // heads)}.items():
        meta["llama." + key] = value
    meta.update(tokenizer_metadata(chat_gguf))
    meta["tokenizer.ggml.add_bos_token"] = struct.pack("<I?", BOOL, tok_config["add_bos_token"])
    names = {"model.embed_tokens.weight": "token_embd.weight", "lm_head.weight": "output.weight",
             "model.norm.weight": "output_norm.weight"}
    layer_names = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm",
                   "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
                   "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
                   "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
                   "mlp.down_proj": "ffn_down"}
    infos, blobs, offset = b"", [], 0
    for name, a in load_safetensors_f32(pathlib.Path(folder) / "model.safetensors").items():
        if name in names:
            gguf_name = names[name]
        else:
            _, _, layer, part = name.split(".", 3)
            gguf_name = f"blk.{layer}.{layer_names[part.rsplit('.', 1)[0]]}.weight"
        if name.endswith("q_proj.weight"):
            a = _permute(a, heads)
        elif name.endswith("k_proj.weight"):
            a = _permute(a, kv_heads)
        if outtype == "q8_0" and a.ndim == 2:
            ggml_type, data = 8, _q8_0_bytes(a)
        else:
            ggml_type, data = 0, np.ascontiguousarray(a, dtype="<f4").tobytes()
        dims = a.shape[::-1]
        infos += (_string(gguf_name) + struct.pack("<I", len(dims)) +
                  b"".join(struct.pack("<Q", d) for d in dims) +
                  struct.pack("<IQ", ggml_type, offset))
        blobs.append(data)
        offset += len(data) + _pad(len(data))
    head = (b"GGUF" + struct.pack("<IQQ", 3, len(blobs), len(meta)) +
            b"".join(_kv(k, v) for k, v in meta.items()) + infos)
    with open(path, "wb") as f:
        f.write(head + b"\0" * _pad(len(head)))
        for blob in blobs:
            f.write(blob + b"\0" * _pad(len(blob)))
