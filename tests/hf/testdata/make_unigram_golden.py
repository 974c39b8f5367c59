#!/usr/bin/env python3
"""Writes unigram_golden.json: Unigram tokenizer.json files built with the `tokenizers`
package, and that package's ids (with and without the template's special tokens) and decoded
text for every distinct text of tests/tokenizer/testdata/smollm2_tokenize_golden.json (the
tests' corpus) and a few edge cases (EXTRA). The pieces and scores come from tokenizers' UnigramTrainer run on the corpus
(deterministic for a given tokenizers version) less those with characters from U+2000 up, the
<0xXX> byte pieces appended; each variant
puts them behind a different normaliser / pre-tokenizer / byte_fallback:

  metaspace_always   Replace("``", "\\""), Lowercase; Metaspace(always, split); byte fallback;
                     "<s> $A </s>"
  whitespace_first   Strip; WhitespaceSplit, Metaspace(first, no split); no byte fallback
                     (unknown characters fused into <unk>); "$A </s>"

Usage: .venv/bin/python tests/hf/testdata/make_unigram_golden.py   (tokenizers 0.23.2)
"""
import json
import os

import tokenizers
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
CORPUS = os.path.join(ROOT, "tests", "tokenizer", "testdata", "smollm2_tokenize_golden.json")
SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]
# Beyond the corpus: the steps' edge cases (empty and all-space texts, the Replace pattern,
# U+0130 whose lowercase is two characters, Unicode white space, special tokens mid-text).
EXTRA = ["", "   ", "``quoted'' and ``more``", "\u0130stanbul \u03a3\u0391\u03a3 \u00c9T\u00c9",
         "  leading and trailing  ", "a\u3000b\u00a0c\u2003d", "tab\tsep\nnew\r\nline",
         "x<s>y</s> z", "\u2581already\u2581escaped \u2581\u2581 runs"]


def corpus():
    texts = []
    with open(CORPUS, encoding="utf-8") as f:
        for case in json.load(f)["cases"]:
            if case["text"] not in texts:
                texts.append(case["text"])
    return texts + [t for t in EXTRA if t not in texts]


def trained_pieces(texts):
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=1500, special_tokens=SPECIALS, unk_token="<unk>",
                                      shrinking_factor=0.75, max_piece_length=8)
    tok.train_from_iterator(texts, trainer)
    vocab = json.loads(tok.to_str())["model"]["vocab"]
    # Pieces with characters from U+2000 up (punctuation, CJK, emoji) dropped, so that byte
    # fallback and unknown characters are exercised.
    vocab = [v for v in vocab if all(ord(c) < 0x2000 or c == "\u2581" for c in v[0])]
    low = min(s for _, s in vocab)
    have = {p for p, _ in vocab}
    vocab += [["<0x%02X>" % b, low - 1.0] for b in range(256) if "<0x%02X>" % b not in have]
    return vocab


def build(vocab, variant):
    unk = [p for p, _ in vocab].index("<unk>")
    ids = {p: i for i, (p, _) in enumerate(vocab)}
    if variant == "metaspace_always":
        tok = Tokenizer(models.Unigram([tuple(v) for v in vocab], unk_id=unk, byte_fallback=True))
        tok.normalizer = normalizers.Sequence(
            [normalizers.Replace("``", '"'), normalizers.Lowercase()])
        tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always", split=True)
        tok.decoder = decoders.Sequence([decoders.Metaspace(prepend_scheme="always"),
                                         decoders.ByteFallback(), decoders.Fuse()])
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
            special_tokens=[("<s>", ids["<s>"]), ("</s>", ids["</s>"])])
    else:
        tok = Tokenizer(models.Unigram([tuple(v) for v in vocab], unk_id=unk, byte_fallback=False))
        tok.normalizer = normalizers.Strip()
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.WhitespaceSplit(),
             pre_tokenizers.Metaspace(prepend_scheme="first", split=False)])
        tok.decoder = decoders.Metaspace(prepend_scheme="first")
        tok.post_processor = processors.TemplateProcessing(
            single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", ids["</s>"])])
    tok.add_special_tokens(SPECIALS)
    return tok


def main():
    texts = corpus()
    vocab = trained_pieces(texts)
    out = {"generator": "tests/hf/testdata/make_unigram_golden.py",
           "oracle": "tokenizers " + tokenizers.__version__, "variants": {}}
    for variant in ("metaspace_always", "whitespace_first"):
        tok = build(vocab, variant)
        cases = []
        for text in texts:
            plain = tok.encode(text, add_special_tokens=False).ids
            cases.append({"text": text, "ids": plain,
                          "ids_special": tok.encode(text).ids,
                          "decoded": tok.decode(plain, skip_special_tokens=True)})
        out["variants"][variant] = {"tokenizer": json.loads(tok.to_str()), "cases": cases}
    with open(os.path.join(HERE, "unigram_golden.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=None, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
