#!/usr/bin/env python3
"""A Hugging Face folder in radixlm against llama.cpp on the GGUF its converter makes.

Writes a folder (tests/e2e/hf_folder_kit.py: LlamaForCausalLM of random numpy weights,
SmolLM2-135M-Instruct's vocabulary as a tokenizer.json built by the `tokenizers` package, its
chat template), converts it with the peer's convert_hf_to_gguf.py (--outtype f32 and q8_0, run
by --convert-python: a venv outside the repository with torch and transformers), then:
  - KL(llama.cpp on the converter's F32 GGUF || radixlm serving the folder as stored) over --n
    random ids, and llama.cpp's divergence from itself (one token per call);
  - the same for the converter's Q8_0 GGUF against radixlm with --quantization q8_0;
  - whether every tensor radixlm builds with --quantization q8_0 (hf_to_gguf) has the
    converter's name, type, shape and bytes.
Usage: hf_compare.py --tools DIR --convert-python PY [--dtype F32|F16|BF16] [--n 640]
       [--hidden 256 --layers 4 --heads 8 --kv-heads 4 --ffn 512]
DIR holds llama_logits, radixlm_logits and hf_to_gguf (README.md says how to build them).
"""
import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
import hf_folder_kit  # noqa: E402

PEER = pathlib.Path.home() / ".cache/radixlm/llama-peer/0.3.36/src/vendor/llama.cpp"


def logsoftmax(x):
    x = x.astype(np.float64)
    x = x - x.max(axis=1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=1, keepdims=True))


def kl(p_log, q_log):
    return (np.exp(p_log) * (p_log - q_log)).sum(axis=1)


def run(argv):
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{argv[0]} failed: {(p.stdout + p.stderr)[-3000:]}")
    return p.stdout + p.stderr


TENSOR_DIFF = r'''
import sys
sys.path.insert(0, sys.argv[3])
import numpy as np
from gguf import GGUFReader
a = {t.name: t for t in GGUFReader(sys.argv[1]).tensors}
b = {t.name: t for t in GGUFReader(sys.argv[2]).tensors}
same, diff = 0, []
for name in sorted(set(a) | set(b)):
    if name not in a or name not in b:
        diff.append(f"{name}: only in {'converter' if name in a else 'radixlm'}")
        continue
    x, y = a[name], b[name]
    if x.tensor_type != y.tensor_type or list(x.shape) != list(y.shape):
        diff.append(f"{name}: {x.tensor_type.name}{list(x.shape)} vs {y.tensor_type.name}{list(y.shape)}")
    elif bytes(np.asarray(x.data).tobytes()) != bytes(np.asarray(y.data).tobytes()):
        diff.append(f"{name}: bytes differ")
    else:
        same += 1
print(f"tensors identical {same} / {len(set(a) | set(b))}")
for d in diff[:20]:
    print("  " + d)
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", required=True)
    ap.add_argument("--convert-python", required=True)
    ap.add_argument("--dtype", default="F32", choices=["F32", "F16", "BF16"])
    ap.add_argument("--n", type=int, default=640)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=512)
    ap.add_argument("--keep", help="leave the folder and GGUFs in this directory")
    ap.add_argument("--kquants", action="store_true",
                    help="also --quantization q4_k / q6_k against the peer's llama-quantize --pure "
                         "of the converter's F32 GGUF")
    args = ap.parse_args()
    chat = os.environ.get("RADIXLM_CHAT_MODEL")
    if not chat:
        sys.exit("set RADIXLM_CHAT_MODEL to SmolLM2-135M-Instruct's GGUF (the vocabulary)")
    work = pathlib.Path(args.keep or tempfile.mkdtemp(prefix="hf_compare_"))
    folder = work / "folder"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    shape = dict(hidden=args.hidden, layers=args.layers, heads=args.heads,
                 kv_heads=args.kv_heads, ffn=args.ffn)
    hf_folder_kit.write_folder(folder, chat, seed=args.seed, shape=shape, dtype=args.dtype)
    tools = pathlib.Path(args.tools)
    rng = np.random.default_rng(args.seed)
    ids = rng.integers(0, 49152, size=args.n, dtype=np.int32)
    ids.tofile(work / "ids")
    t = str(args.threads)
    print(f"folder: LlamaForCausalLM {shape}, {args.dtype} matrices; {args.n} positions")
    for outtype, quant in (("f32", ""), ("q8_0", "q8_0")):
        conv = work / f"converter.{outtype}.gguf"
        run([args.convert_python, PEER / "convert_hf_to_gguf.py", folder, "--outtype", outtype,
             "--outfile", conv])
        run([tools / "llama_logits", conv, work / "ids", work / "L", args.n, t])
        run([tools / "llama_logits", conv, work / "ids", work / "L1", 1, t])
        extra = [quant] if quant else []
        run([tools / "radixlm_logits", folder, work / "ids", work / "R", args.n, t, *extra])
        load = lambda s: np.fromfile(work / s, dtype=np.float32).reshape(args.n, -1)  # noqa
        L, L1, R = load("L"), load("L1"), load("R")
        lL, lL1, lR = logsoftmax(L), logsoftmax(L1), logsoftmax(R)
        kr, ks = kl(lL, lR), kl(lL, lL1)
        print(f"converter --outtype {outtype} vs radixlm folder"
              f"{' --quantization ' + quant if quant else ' as stored'}: "
              f"KL mean {kr.mean():.3e} max {kr.max():.3e}, argmax agreement "
              f"{(L.argmax(1) == R.argmax(1)).mean():.4f}; llama.cpp self KL mean "
              f"{ks.mean():.3e}, llama.cpp top-1 prob mean {np.exp(lL.max(1)).mean():.3f}")
        if quant:
            mine = work / f"radixlm.{quant}.gguf"
            run([tools / "hf_to_gguf", folder, mine, quant])
            print(run([args.convert_python, "-c", TENSOR_DIFF, conv, mine, PEER / "gguf-py"]).strip())
    if args.kquants:
        quantize = PEER.parents[2] / "build" / "bin" / "llama-quantize"
        for quant, ftype in (("q4_k", "Q4_K"), ("q6_k", "Q6_K")):
            ref = work / f"llama-quantize.{quant}.gguf"
            run([quantize, "--pure", work / "converter.f32.gguf", ref, ftype])
            run([tools / "llama_logits", ref, work / "ids", work / "L", args.n, t])
            run([tools / "llama_logits", ref, work / "ids", work / "L1", 1, t])
            run([tools / "radixlm_logits", folder, work / "ids", work / "R", args.n, t, quant])
            L, L1, R = load("L"), load("L1"), load("R")
            lL, lL1, lR = logsoftmax(L), logsoftmax(L1), logsoftmax(R)
            kr, ks = kl(lL, lR), kl(lL, lL1)
            print(f"llama-quantize --pure {ftype} vs radixlm folder --quantization {quant}: "
                  f"KL mean {kr.mean():.3e} max {kr.max():.3e}, argmax agreement "
                  f"{(L.argmax(1) == R.argmax(1)).mean():.4f}; llama.cpp self KL mean "
                  f"{ks.mean():.3e}")
            mine = work / f"radixlm.{quant}.gguf"
            run([tools / "hf_to_gguf", folder, mine, quant])
            print(run([args.convert_python, "-c", TENSOR_DIFF, ref, mine, PEER / "gguf-py"]).strip())
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
