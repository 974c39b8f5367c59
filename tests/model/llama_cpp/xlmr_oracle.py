#!/usr/bin/env python3
"""XLM-RoBERTa embedders (bge-m3 / multilingual-e5 style) against llama.cpp: a synthetic
XLMRobertaModel folder (tests/e2e/hf_xlmr_kit.py: random weights of multilingual-e5-small's
shape, 384 wide, 12 layers, 12 heads, FFN 1536, 512 positions; a Unigram tokenizer.json with
XLM-RoBERTa's layout and Precompiled normaliser), converted by the peer's convert_hf_to_gguf.py
(--outtype f32: arch "bert", tokenizer "t5", the position rows before pad_token_id + 1 dropped),
embedded by llama.cpp's llama-embedding on that GGUF (--embd-normalize 2) and by radixlm serve
--is-embedding (POST /v1/embeddings through the `openai` client) on the same GGUF and on the
folder itself, CLS pooling (bge-m3) and mean pooling (multilingual-e5), as 1_Pooling says.
Prints, per pooling and radixlm's input, the min and mean cosine over the texts (bar >= 0.999).

Texts: the distinct corpus texts of tests/hf/testdata/precompiled_golden.json, one line each
(llama-embedding reads one text per line), stripped of surrounding white space (llama.cpp's
UGM drops a trailing space that tokenizers keeps as a piece), those with control characters or
a backslash left out (llama-embedding's prompt reader turns a written "\\n" into a line break).

Usage (llama-embedding linked as README.md says; a venv with torch and transformers for the
converter):
  LLAMA=~/.cache/radixlm/llama-peer/0.3.36
  PYTHONPATH=$LLAMA/src/vendor/llama.cpp/gguf-py .venv/bin/python \\
      tests/model/llama_cpp/xlmr_oracle.py --radixlm build/apps/radixlm \\
      --llama-embedding /tmp/llama-embedding --convert-python ~/.cache/radixlm/convert-venv/bin/python
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "tests" / "model" / "testdata"))
sys.path.insert(0, str(HERE))
import hf_xlmr_kit  # noqa: E402
from encoder_oracle import radixlm_vectors  # noqa: E402
from make_encoder_golden import embed  # noqa: E402

PEER = pathlib.Path.home() / ".cache" / "radixlm" / "llama-peer" / "0.3.36" / "src" / "vendor" / \
    "llama.cpp"
SHAPE = dict(hidden=384, heads=12, ffn=1536, layers=12, context=512)


def texts():
    golden = json.loads((ROOT / "tests" / "hf" / "testdata" / "precompiled_golden.json")
                        .read_text(encoding="utf-8"))
    out = []
    for c in golden["cases"]:
        t = " ".join(c["text"].split())
        if t and t not in out and "\\" not in t and all(ord(ch) >= 32 for ch in t):
            out.append(t)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--radixlm", required=True)
    ap.add_argument("--llama-embedding", required=True)
    ap.add_argument("--convert-python", required=True)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    inputs = texts()
    print("| pooling | radixlm reads | texts | min cosine | mean cosine |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="radixlm-xlmr-") as tmp:
        for pooling in ("cls", "mean"):
            folder = pathlib.Path(tmp) / pooling
            tok, w = hf_xlmr_kit.write_folder(folder, pooling, **SHAPE)
            out = pathlib.Path(tmp) / (pooling + ".gguf")
            subprocess.run([args.convert_python, str(PEER / "convert_hf_to_gguf.py"), str(folder),
                            "--outtype", "f32", "--outfile", str(out)], check=True,
                           capture_output=True)
            theirs = np.array(embed(args.llama_embedding, str(out), pooling, inputs,
                                    threads=args.threads, ctx=8192))
            ref = np.array([hf_xlmr_kit.reference(w, tok.encode(t).ids, SHAPE["heads"], pooling)
                            for t in inputs])
            rows = [("llama.cpp vs float64 reference", theirs)]
            for name, model in (("the converter's GGUF", out), ("the folder", folder)):
                rows.append((name, radixlm_vectors(args.radixlm, str(model), pooling,
                                                   args.threads, inputs)))
            for name, ours in rows:
                against = ref if ours is theirs else theirs
                cos = np.sum(ours * against, axis=1) / (
                    np.linalg.norm(ours, axis=1) * np.linalg.norm(against, axis=1))
                print("| %s | %s | %d | %.7f | %.7f |" % (pooling, name, len(inputs), cos.min(),
                                                         cos.mean()), flush=True)


if __name__ == "__main__":
    main()
