#!/usr/bin/env python3
"""radixlm's --quantization q4_k / q6_k against the peer's llama-quantize, tensor by tensor.

Writes a folder (tests/e2e/hf_folder_kit.py: LlamaForCausalLM of random numpy F32 weights, every
matrix's rows a multiple of 256 wide), the F32 GGUF convert_hf_to_gguf.py makes of it
(hf_folder_kit.write_gguf_of_folder, in pure Python: no torch needed), quantizes that with
`llama-quantize --pure` (no importance matrix) to Q4_K and Q6_K, writes the folder as radixlm
reads it with --quantization q4_k / q6_k (hf_to_gguf), and says how many tensors have the same
name, type, shape and bytes.
Usage: hf_kquant_bytes.py --tools DIR [--dtype F32] [--hidden 256 --layers 4 --heads 8
       --kv-heads 4 --ffn 512]; DIR holds hf_to_gguf (README.md says how to build it), and
RADIXLM_CHAT_MODEL names SmolLM2-135M-Instruct's GGUF (the vocabulary).
"""
import argparse
import os
import pathlib
import shutil
import sys
import tempfile

from hf_compare import PEER, TENSOR_DIFF, hf_folder_kit, run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=512)
    ap.add_argument("--keep", help="leave the folder and GGUFs in this directory")
    args = ap.parse_args()
    chat = os.environ.get("RADIXLM_CHAT_MODEL")
    if not chat:
        sys.exit("set RADIXLM_CHAT_MODEL to SmolLM2-135M-Instruct's GGUF (the vocabulary)")
    work = pathlib.Path(args.keep or tempfile.mkdtemp(prefix="hf_kquant_"))
    folder = work / "folder"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    shape = dict(hidden=args.hidden, layers=args.layers, heads=args.heads,
                 kv_heads=args.kv_heads, ffn=args.ffn)
    hf_folder_kit.write_folder(folder, chat, seed=args.seed, shape=shape)
    f32 = work / "converter.f32.gguf"
    hf_folder_kit.write_gguf_of_folder(folder, chat, f32)
    quantize = PEER.parents[2] / "build" / "bin" / "llama-quantize"
    print(f"folder: LlamaForCausalLM {shape}, F32 matrices")
    for quant, ftype in (("q4_k", "Q4_K"), ("q6_k", "Q6_K")):
        ref = work / f"llama-quantize.{quant}.gguf"
        run([quantize, "--pure", f32, ref, ftype])
        mine = work / f"radixlm.{quant}.gguf"
        run([pathlib.Path(args.tools) / "hf_to_gguf", folder, mine, quant])
        diff = run([sys.executable, "-c", TENSOR_DIFF, ref, mine, PEER / "gguf-py"]).strip()
        print(f"llama-quantize --pure {ftype} vs radixlm --quantization {quant}: {diff}")
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
