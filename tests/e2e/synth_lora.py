"""Synthetic LoRA adapters for the end-to-end tests and the llama.cpp oracle, in llama.cpp's GGUF
adapter form (general.type adapter, adapter.type lora, adapter.lora.alpha, <matrix>.lora_a of
ggml shape [in, rank] and <matrix>.lora_b of [rank, out], F32), written in pure Python and numpy
for a real base model: every attn_q / attn_k / attn_v / attn_output / ffn_gate / ffn_up /
ffn_down of its layers gets random A ~ N(0, 1/in) and B ~ N(0, b_std^2), so the adapter moves
each matrix's output by a few percent: outputs change, text stays text.

    python tests/e2e/synth_lora.py BASE.gguf OUT.gguf --rank 8 --seed 1
"""

import argparse
import mmap
import struct

import numpy as np

from synth_moe import F32, STRING, _f32, _skip_value, _str, write_gguf

TARGETS = ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")


def base_tensors(path):
    """(general.architecture, {tensor name: ggml dims}) of a GGUF."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        magic, version, n_tensors, n_kv = struct.unpack_from("<4sIQQ", buf, 0)
        if magic != b"GGUF" or version not in (2, 3):
            raise ValueError(f"{path}: not a GGUF v2/v3 file")
        pos, arch = 24, None
        for _ in range(n_kv):
            (n,) = struct.unpack_from("<Q", buf, pos)
            key = bytes(buf[pos + 8:pos + 8 + n]).decode()
            pos += 8 + n
            (vtype,) = struct.unpack_from("<I", buf, pos)
            if key == "general.architecture" and vtype == STRING:
                (m,) = struct.unpack_from("<Q", buf, pos + 4)
                arch = bytes(buf[pos + 12:pos + 12 + m]).decode()
            pos = _skip_value(buf, pos + 4, vtype)
        shapes = {}
        for _ in range(n_tensors):
            (n,) = struct.unpack_from("<Q", buf, pos)
            name = bytes(buf[pos + 8:pos + 8 + n]).decode()
            pos += 8 + n
            (n_dims,) = struct.unpack_from("<I", buf, pos)
            dims = struct.unpack_from("<" + "Q" * n_dims, buf, pos + 4)
            pos += 4 + 8 * n_dims + 12  # dims, type (u32), offset (u64)
            shapes[name] = dims
        return arch, shapes


def write_adapter(base_path, out_path, rank=8, seed=1, alpha=None, b_std=0.01,
                  targets=TARGETS):
    """Writes the adapter; alpha defaults to rank (scale 1)."""
    arch, shapes = base_tensors(base_path)
    rng = np.random.default_rng(seed)
    tensors = []
    for name, dims in shapes.items():
        stem = name.split(".")[2] if name.startswith("blk.") and name.count(".") == 3 else None
        if stem not in targets or not name.endswith(".weight") or len(dims) != 2:
            continue
        n_in, n_out = dims
        a = rng.normal(0.0, 1.0 / np.sqrt(n_in), size=(rank, n_in)).astype(np.float32)
        b = rng.normal(0.0, b_std, size=(n_out, rank)).astype(np.float32)
        tensors += [(name + ".lora_a", a), (name + ".lora_b", b)]
    metadata = {
        "general.architecture": _str(arch),
        "general.type": _str("adapter"),
        "adapter.type": _str("lora"),
        "adapter.lora.alpha": _f32(float(alpha if alpha is not None else rank)),
    }
    write_gguf(out_path, metadata, tensors)
    return len(tensors) // 2


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("base")
    p.add_argument("out")
    p.add_argument("--rank", type=int, default=8)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--b-std", type=float, default=0.01)
    a = p.parse_args()
    n = write_adapter(a.base, a.out, a.rank, a.seed, b_std=a.b_std)
    print(f"{a.out}: {n} adapted matrices, rank {a.rank}")


if __name__ == "__main__":
    main()
