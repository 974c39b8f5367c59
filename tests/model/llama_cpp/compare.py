#!/usr/bin/env python3
"""Mean KL divergence of next-token distributions, llama.cpp vs radixlm, on one GGUF.

llama.cpp (llama_logits, libllama) decodes --n random ids in one batch (the reference L) and
again --self-ubatch tokens per llama_decode (L1: llama.cpp against itself at another batch
shape); radixlm (radixlm_logits) in chunks of --chunk. Prints mean/max KL(L || radixlm),
mean/max KL(L || L1) and argmax agreements over every position (and at the positions where
llama.cpp's top two are >= 0.5 nats apart), and the bar max(2 x KL(L || L1), 0.01 nats). See
README.md for building the two tools.

Usage: compare.py MODEL.gguf --tools DIR [--n 640] [--chunk 640] [--self-ubatch 1] [--seed 7]
       [--threads 2] [--vocab 49152]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np


def logsoftmax(x):
    x = x.astype(np.float64)
    x = x - x.max(axis=1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=1, keepdims=True))


def kl(p_log, q_log):
    return (np.exp(p_log) * (p_log - q_log)).sum(axis=1)


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{argv[0]} failed: {p.stderr[-2000:]}")
    return p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--tools", required=True, help="folder of llama_logits and radixlm_logits")
    ap.add_argument("--n", type=int, default=640)
    ap.add_argument("--chunk", type=int, default=640)
    ap.add_argument("--self-ubatch", type=int, default=1)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=49152)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    ids = rng.integers(0, args.vocab, size=args.n, dtype=np.int32)
    tmp = os.path.join(tempfile.gettempdir(), f"family_kl_{os.getpid()}")
    ids.tofile(tmp + ".ids")
    t = str(args.threads)
    llama = os.path.join(args.tools, "llama_logits")
    radixlm = os.path.join(args.tools, "radixlm_logits")
    run([llama, args.model, tmp + ".ids", tmp + ".L", str(args.n), t])
    run([llama, args.model, tmp + ".ids", tmp + ".L1", str(args.self_ubatch), t])
    info = run([radixlm, args.model, tmp + ".ids", tmp + ".R", str(args.chunk), t])
    load = lambda s: np.fromfile(tmp + s, dtype=np.float32).reshape(args.n, -1)  # noqa: E731
    L, L1, R = load(".L"), load(".L1"), load(".R")
    for s in (".ids", ".L", ".L1", ".R"):
        os.remove(tmp + s)
    lL, lL1, lR = logsoftmax(L), logsoftmax(L1), logsoftmax(R)
    kr, ks = kl(lL, lR), kl(lL, lL1)
    ent = -(np.exp(lL) * lL).sum(axis=1)
    print(info.strip().splitlines()[-1])
    print(f"positions {args.n}; llama.cpp entropy mean {ent.mean():.3f} nats, "
          f"top-1 prob mean {np.exp(lL.max(axis=1)).mean():.3f}")
    print(f"KL(llama.cpp || radixlm chunk {args.chunk}): mean {kr.mean():.3e} "
          f"max {kr.max():.3e}; argmax agreement {(L.argmax(1) == R.argmax(1)).mean():.4f}")
    print(f"KL(llama.cpp || llama.cpp ubatch {args.self_ubatch}): mean {ks.mean():.3e} "
          f"max {ks.max():.3e}; argmax agreement {(L.argmax(1) == L1.argmax(1)).mean():.4f}")
    # Positions where llama.cpp is confident (its top two >= 0.5 nats apart): the top-1 must
    # agree at every one of them.
    top2 = np.sort(lL, axis=1)[:, -2:]
    confident = (top2[:, 1] - top2[:, 0]) >= 0.5
    if confident.any():
        agree = (L.argmax(1) == R.argmax(1))[confident]
        agree_self = (L.argmax(1) == L1.argmax(1))[confident]
        print(f"confident positions (top two >= 0.5 nats apart): {int(confident.sum())}; "
              f"radixlm top-1 agreement there {agree.mean():.4f} "
              f"({int(agree.sum())}), llama.cpp ubatch {args.self_ubatch} {agree_self.mean():.4f} "
              f"({int(agree_self.sum())})")
        for i in np.flatnonzero(confident & (L.argmax(1) != R.argmax(1))):
            a, b = L[i].argmax(), R[i].argmax()
            print(f"  position {i}: llama.cpp top two {top2[i, 1] - top2[i, 0]:.3f} nats apart; "
                  f"radixlm's pick {b} is {lL[i, a] - lL[i, b]:.3f} nats below llama.cpp's top "
                  f"{a} there, and {lR[i, b] - lR[i, a]:.3f} above it in radixlm's; "
                  f"KL {kr[i]:.3e}; llama.cpp ubatch {args.self_ubatch} picks {L1[i].argmax()}")
    bound = max(2 * ks.mean(), 0.01)
    print(f"bar max(2 x self, 0.01) = {bound:.3e}: {'PASS' if kr.mean() <= bound else 'FAIL'}")


if __name__ == "__main__":
    main()
