#!/usr/bin/env python3
"""Writes normal_form_golden.json: tokenizer.json's Unicode normal form normalisers (NFC, NFD,
NFKC, NFKD) as the `tokenizers` package (the oracle) applies them.

For each form, a Unigram tokenizer.json built with the package from the pieces of
unigram_golden.json's "metaspace_always" variant (trained on the tests' corpus; byte fallback,
so characters the pieces lack still show), its normaliser the form alone, or (NFKC) inside a
Sequence with Lowercase; Metaspace(always, split); "<s> $A </s>". For every text of the
tests' corpus and of EXTRA (composed and decomposed accents, compatibility characters:
ligatures, full-width forms, circled and super/subscript digits, Hangul syllables and jamo,
singletons such as U+212B ANGSTROM SIGN): the package's ids (with and without the template)
and what the normaliser alone makes of the text. INVALID holds byte strings that are not
UTF-8 (hex): their cases are the package's on the text Rust's String::from_utf8_lossy makes of
them (one U+FFFD per maximal ill-formed subsequence; Python's errors="replace" is the same).

Usage: .venv/bin/python tests/hf/testdata/make_normal_form_golden.py   (tokenizers 0.23.2)
"""
import json
import os

import tokenizers
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
CORPUS = os.path.join(ROOT, "tests", "tokenizer", "testdata", "smollm2_tokenize_golden.json")
UNIGRAM = os.path.join(HERE, "unigram_golden.json")
SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]
EXTRA = [
    "", "   ",
    "caf\u00e9 cafe\u0301 na\u00efve nai\u0308ve r\u00e9sum\u00e9 re\u0301sume\u0301",
    "e\u0301\u0301 a\u0308\u0304 o\u0323\u0302 \u1ec7 e\u0323\u0302 q\u0307\u0323 \u00c5 A\u030a",
    "\u212b \u2126 \u212a \u0344 \u1f71 \u2000\u2001 \u0958",
    "ligatures: \ufb01ne \ufb02ow \ufb00 \ufb03 \ufb04 \ufb05 \ufb06 \u0132 \u01c6",
    "\uff26\uff55\uff4c\uff4c\uff0d\uff57\uff49\uff44\uff54\uff48 \uff21\uff22\uff23 \uff11\uff12\uff13\uff01",
    "circled: \u2460 \u2461 \u2469 \u2474 \u2488 \u24b6 \u3251",
    "super/sub: x\u00b2 y\u00b3 \u00b9\u2070\u2074 H\u2082O \u2099 \u00bd \u215e \u2153 \u00aa \u00ba",
    "\u216b \u217b \u338f \u337b \u2103 \u2116 \u2122 \u00b5 \u017f \u1e9b\u0323",
    "\ud55c\uad6d\uc5b4 \u1112\u1161\u11ab\u1100\u1173\u11af \u3131\u314f \u1100\u1161\u11a8 \uac00\u11a8",
    "\uff76\uff9e\uff77\uff9e \uff8a\uff9f \u30ac \u30ab\u3099 \u309b",
    "\u0915\u093c \u0958 \u0627\u0653 \u0622 \ufe8d\ufedf \ufdfa",
    "mixed Ｆｕｌｌ ﬁ ① ² ｶﾞ Å e\u0301 한국어 plain ascii",
]
INVALID = ["636166e9206e61ef7665", "fffe41", "e282", "f09f98", "c3", "610080c0c1f5ff62",
           "eda080", "f4908080", "cc81cc81", "e29c94e2"]


def corpus():
    texts = []
    with open(CORPUS, encoding="utf-8") as f:
        for case in json.load(f)["cases"]:
            if case["text"] not in texts:
                texts.append(case["text"])
    return texts + [t for t in EXTRA if t not in texts]


def build(vocab, form):
    unk = [p for p, _ in vocab].index("<unk>")
    ids = {p: i for i, (p, _) in enumerate(vocab)}
    tok = Tokenizer(models.Unigram([tuple(v) for v in vocab], unk_id=unk, byte_fallback=True))
    norm = getattr(normalizers, form)()
    tok.normalizer = normalizers.Sequence([norm, normalizers.Lowercase()]) if form == "NFKC" \
        else norm
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always", split=True)
    tok.decoder = decoders.Sequence([decoders.Metaspace(prepend_scheme="always"),
                                     decoders.ByteFallback(), decoders.Fuse()])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", ids["<s>"]), ("</s>", ids["</s>"])])
    tok.add_special_tokens(SPECIALS)
    return tok, norm


def main():
    with open(UNIGRAM, encoding="utf-8") as f:
        vocab = json.load(f)["variants"]["metaspace_always"]["tokenizer"]["model"]["vocab"]
    texts = corpus()
    out = {"generator": "tests/hf/testdata/make_normal_form_golden.py",
           "oracle": "tokenizers " + tokenizers.__version__, "forms": {}}
    for form in ("NFC", "NFD", "NFKC", "NFKD"):
        tok, norm = build(vocab, form)
        cases = []
        for text in texts:
            cases.append({"text": text, "normalized": norm.normalize_str(text),
                          "ids": tok.encode(text, add_special_tokens=False).ids,
                          "ids_special": tok.encode(text).ids})
        for hexed in INVALID:
            text = bytes.fromhex(hexed).decode("utf-8", errors="replace")
            cases.append({"bytes_hex": hexed, "normalized": norm.normalize_str(text),
                          "ids": tok.encode(text, add_special_tokens=False).ids,
                          "ids_special": tok.encode(text).ids})
        out["forms"][form] = {"tokenizer": json.loads(tok.to_str()), "cases": cases}
    with open(os.path.join(HERE, "normal_form_golden.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=None, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
