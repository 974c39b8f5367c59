#!/usr/bin/env python3
"""Writes the low-bit quant test files: tiny GGUFs quantized by llama.cpp and the values
llama.cpp's own dequantizer gives for them.

For each type T in TYPES it writes, beside this script:
  lowbit_<T>.gguf          two matrices (token_embd.weight, output.weight), 8 x 512 each,
                           quantized to T by the peer's llama-quantize
  lowbit_<T>.expected.f32  the dequantized values of both matrices (little-endian float32,
                           tensors in file order), from gguf-py's numpy dequantizers
                           (gguf.quants.dequantize: llama.cpp's reference in Python)

Usage (see README.md for the exact commands):
  PYTHONPATH=$LLAMA_CPP/gguf-py python make_lowbit_testdata.py --quantize $BIN/llama-quantize
"""
import argparse
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import gguf

TYPES = ["Q2_K", "Q3_K", "IQ4_NL", "IQ4_XS", "IQ3_S", "IQ3_XXS", "IQ2_XXS", "IQ2_XS",
         "IQ2_S", "IQ1_S", "IQ1_M", "MXFP4"]
ROWS, COLS = 8, 512
TENSORS = ["token_embd.weight", "output.weight"]


def write_f32_model(path):
    """A llama-architecture GGUF header (llama-quantize reads the hyperparameters) with only
    the two matrices that llama-quantize never asks an importance matrix for."""
    rng = np.random.default_rng(20240607)
    w = gguf.GGUFWriter(path, "llama")
    w.add_block_count(1)
    w.add_context_length(64)
    w.add_embedding_length(COLS)
    w.add_feed_forward_length(COLS)
    w.add_head_count(4)
    w.add_head_count_kv(4)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(ROWS)
    for name in TENSORS:
        # Gaussian rows of varied scale with a few outliers, so blocks get different scales.
        x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
        x *= np.exp(rng.uniform(-2.0, 1.0, size=(ROWS, 1))).astype(np.float32)
        spikes = rng.integers(0, ROWS * COLS, size=12)
        x.flat[spikes] *= 6.0
        w.add_tensor(name, x)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_uniform_imatrix(path):
    """A legacy-format importance matrix of all ones (no weighting): the IQ1/IQ2/IQ3_XXS
    file types refuse to run without one."""
    with open(path, "wb") as f:
        f.write(struct.pack("<i", len(TENSORS)))
        for name in TENSORS:
            f.write(struct.pack("<i", len(name)))
            f.write(name.encode())
            f.write(struct.pack("<ii", 1, COLS))
            f.write(np.ones(COLS, dtype=np.float32).tobytes())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quantize", required=True, help="path of llama-quantize")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--types", default=",".join(TYPES))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "f32.gguf")
        imat = os.path.join(tmp, "ones.imatrix")
        write_f32_model(src)
        write_uniform_imatrix(imat)
        for t in args.types.split(","):
            dst = os.path.join(args.out, f"lowbit_{t}.gguf")
            # Q3_K / MXFP4 are not file-type names (Q3_K_M, MXFP4_MOE are mixes); --pure and
            # the two tensor-type flags keep every tensor at T.
            ftype = {"Q3_K": "Q3_K_M", "MXFP4": "MXFP4_MOE"}.get(t, t)
            cmd = [args.quantize, "--pure", "--imatrix", imat, "--token-embedding-type", t,
                   "--output-tensor-type", t, src, dst, ftype, "1"]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            reader = gguf.GGUFReader(dst)
            values = []
            for tensor in reader.tensors:
                if tensor.tensor_type.name != t:
                    sys.exit(f"{dst}: {tensor.name} is {tensor.tensor_type.name}, wanted {t}")
                deq = gguf.quants.dequantize(tensor.data, tensor.tensor_type)
                values.append(np.asarray(deq, dtype=np.float32).reshape(-1))
            np.concatenate(values).astype("<f4").tofile(
                os.path.join(args.out, f"lowbit_{t}.expected.f32"))
            print(f"{t}: {os.path.getsize(dst)} bytes")


if __name__ == "__main__":
    main()
