#!/usr/bin/env python3
"""Writes bert_bge_tokenize_golden.json: the token ids llama.cpp gives for a list of texts on
tests/data/llama-vocab/ggml-vocab-bert-bge.gguf (bge-small-en-v1.5's WordPiece vocabulary,
tokenizer.ggml.model "bert", from llama.cpp's models/; PROVENANCE.txt there).

Per case: text, add_bos (llama-tokenize without --no-bos: add_special, i.e. [CLS] ... [SEP]),
parse_special, the ids llama-tokenize printed (--ids) and the pieces it printed joined
("decoded"). As a cross-check (printed, not stored) the same texts go through the `tokenizers`
package's BertWordPieceTokenizer built from the same vocabulary (the "##" form restored).

Usage (the llama.cpp build of bench/llama_peer.py):
  LLAMA=~/.cache/radixlm/llama-peer/0.3.36
  .venv/bin/python tests/tokenizer/testdata/make_wordpiece_golden.py \\
      --tokenize $LLAMA/build/bin/llama-tokenize
Each case runs `llama-tokenize -m ggml-vocab-bert-bge.gguf -f CASE --no-escape --ids [--no-bos]
[--no-parse-special]` and once more without --ids for the pieces.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_gemma4_vocab import parse_pieces, run_tokenize  # noqa: E402

VOCAB = os.path.join(HERE, "..", "..", "data", "llama-vocab", "ggml-vocab-bert-bge.gguf")

CASES = [
    "Hello world", " Hello World!", "Hello, world!", "The quick brown fox jumps over the lazy dog.",
    "It's a dog's life; they're here, we've gone, I'd say you'll see.",
    "  two leading spaces", "trailing space ", "double  inner  spaces", "a\nb", "\n\n",
    "tab\there", "mixed \n \n\t\n  end",
    "Äpfel und Öl", "café CAFÉ naïve résumé", "Ünïcödé ŝtŕïñĝ ß ẞ", "Cửa Việt",
    "нещо на Български", "Γειά σου Κόσμε", "कहानी", "我想在apple工作1314151天～",
    "日本語のテキスト", "한국어 문장입니다", "🦙 llama emoji", "🚀 (normal) 😶‍🌫️ ✅",
    "\u00a0non-breaking", "zero\u200bwidth", "bell\x07char", "soft\u00adhyphen",
    "3 33 333 3333 33333 3.14159 1,000,000", "$5 + 3 = 8 ^ ~ | < > ` @ # %",
    "€100 © ™ ° ± × ÷ → ∞", "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
    "if (x == y) { return {\"a\": [1, 2]}; }", "email@example.com https://example.org/path?q=1&r=2",
    "''''''```````\"\"\"\"......!!!!!!??????", "UPPER lower MiXeD",
    "unaffable antidisestablishmentarianism supercalifragilisticexpialidocious",
    "x" * 120, "pneumonoultramicroscopicsilicovolcanoconiosis" * 3,
    "[CLS] query [SEP] passage [SEP]", "the [MASK] sat on the mat", "[UNK] [PAD] [unused1]",
    "[cls] lowercase is text", "search_query: what is a radix tree?",
    "▁already escaped▁", "##hash ##tags", "",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokenize", required=True, help="llama.cpp's llama-tokenize")
    args = ap.parse_args()
    vocab = os.path.normpath(VOCAB)
    cases = []
    for text in CASES:
        for add_bos, parse_special in ((False, False), (True, False), (True, True)):
            out = run_tokenize(args.tokenize, vocab, text, add_bos, parse_special, True)
            got = json.loads(out.decode("ascii").strip().splitlines()[-1])
            pieces = run_tokenize(args.tokenize, vocab, text, add_bos, parse_special, False)
            case = {"text": text, "add_bos": add_bos, "parse_special": parse_special, "ids": got}
            decoded = parse_pieces(pieces, got) if got else ""
            if decoded is not None:
                case["decoded"] = decoded
            cases.append(case)
    cross_check(vocab, cases)
    golden = {
        "generator": "tests/tokenizer/testdata/make_wordpiece_golden.py",
        "oracle": "llama-tokenize (llama-cpp-python 0.3.36's llama.cpp) -f CASE --no-escape --ids",
        "model": "tests/data/llama-vocab/ggml-vocab-bert-bge.gguf",
        "cases": cases,
    }
    with open(os.path.join(HERE, "bert_bge_tokenize_golden.json"), "w", encoding="utf-8") as f:
        f.write("{\n")
        for k in ("generator", "oracle", "model"):
            f.write(" %s: %s,\n" % (json.dumps(k), json.dumps(golden[k])))
        f.write(' "cases": [\n')
        f.write(",\n".join("  " + json.dumps(c, ensure_ascii=False) for c in cases))
        f.write("\n ]\n}\n")
    print("%d cases" % len(cases))


def cross_check(vocab_path, cases):
    """Prints where Hugging Face's tokenizers (BertWordPieceTokenizer on the same vocabulary,
    "##" restored) disagrees with llama.cpp (add_special, no special parsing)."""
    try:
        import gguf  # llama.cpp's gguf-py
        from tokenizers import BertWordPieceTokenizer
    except ImportError as e:
        print("cross-check skipped:", e)
        return
    r = gguf.GGUFReader(vocab_path)
    tokens = r.fields["tokenizer.ggml.tokens"].contents()
    types = r.fields["tokenizer.ggml.token_type"].contents()
    vocab = {}
    for i, (t, ty) in enumerate(zip(tokens, types)):
        if ty == gguf.TokenType.CONTROL:
            vocab[t] = i
        elif t.startswith("\u2581"):
            vocab[t[1:]] = i
        else:
            vocab["##" + t] = i
    hf = BertWordPieceTokenizer(vocab, lowercase=True, strip_accents=None)
    differ = 0
    for c in cases:
        if not c["add_bos"] or c["parse_special"]:
            continue
        ids = hf.encode(c["text"]).ids
        if ids != c["ids"]:
            differ += 1
            print("tokenizers differs on %r:\n  llama.cpp  %s\n  tokenizers %s" %
                  (c["text"][:60], c["ids"], ids))
    print("tokenizers cross-check: %d of %d texts differ" % (differ, len(CASES)))


if __name__ == "__main__":
    main()
