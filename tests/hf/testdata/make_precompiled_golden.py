#!/usr/bin/env python3
"""Writes two goldens for tokenizer.json's Precompiled normaliser (a SentencePiece charsmap),
both from the `tokenizers` package (the oracle) and the `sentencepiece` package (which builds
the charsmaps):

precompiled_golden.json: a Unigram model that sentencepiece trains on the distinct texts of
  tests/tokenizer/testdata/smollm2_tokenize_golden.json (the tests' corpus, the project's own
  text) with its default normalisation rule nmt_nfkc (NFKC plus SentencePiece's NMT rules; the
  training is deterministic: one thread, fixed flags), converted to tokenizer.json by
  tokenizers' SentencePieceUnigramTokenizer.from_spm (normalizer Sequence[Precompiled,
  Replace(Regex(" {2,}"), " ")], Metaspace), with an XLM-RoBERTa-style template "<s> $A </s>";
  for every corpus text and the NFKC cases of EXTRA: the package's ids (with and without the
  template), decoded text, and what the Precompiled normaliser alone makes of the text.

grapheme_probe.json: the tokenizers crate looks whole grapheme clusters up in the charsmap, so
  its output shows where the Rust unicode-segmentation crate puts cluster boundaries. A probe
  charsmap maps every code point but LF and U+0301 to "#" (built by sentencepiece from a rule
  TSV; 3 kB); each probe is a text before + c + after for every code point c (but NUL, LF, CR,
  U+0301 and surrogates), normalised by the package: a cluster shorter than 6 bytes becomes one
  "#", a longer one one "#" per character. The runs of code points with the same output are
  stored, so radixlm's segmentation (src/tokenizer/grapheme.h) is checked on every code point.

Usage: .venv/bin/python tests/hf/testdata/make_precompiled_golden.py
  (tokenizers 0.23.2, sentencepiece 0.2.1, protobuf 7.36.2)
"""
import base64
import io
import json
import os
import sys
import tempfile

import sentencepiece as spm
import tokenizers
from sentencepiece import sentencepiece_model_pb2
from tokenizers import normalizers, processors

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
CORPUS = os.path.join(ROOT, "tests", "tokenizer", "testdata", "smollm2_tokenize_golden.json")
# NFKC and SentencePiece's NMT rules: full-width letters and digits, ligatures, compatibility
# digits and letters, combining marks (a cluster of "e" + two acute accents loses the second),
# Hangul syllables, jamo and compatibility jamo, Arabic presentation forms, non-breaking and
# other spaces, control and format characters, CR LF, Devanagari nukta letters in a conjunct,
# emoji sequences, half-width katakana with voiced marks, runs of spaces.
EXTRA = [
    "", "   ", "Ｆｕｌｌ－ｗｉｄｔｈ ＡＳＣＩＩ： ｆｏｏ１２３！",
    "ligatures: ﬁne ﬂow ﬀ ﬃ ﬄ ﬅ ﬆ Ĳ ǆ",
    "digits: ① ② ⑩ ⑴ ⒈ ¹²³ ₁₂₃ ½ ⅞ Ⅻ ⅻ ㎞ ㍻ ℃ №",
    "e\u0301 e\u0301\u0301 a\u0308\u0304 n\u0303o \u212b \u2126 \u00c5\u0301 o\u0308\u0301x",
    "\ud55c\uad6d\uc5b4 \u1100\u1161\u11a8 \u3131\u314f \u1112\u1161\u11ab\u1100\u1173\u11af",
    "\ufefb \ufdfa \ufe8d\ufedf\ufeb4\ufefc\ufee1 \ufdf2",
    "a\u00a0b\u202fc\u2007d\u3000e\u2002f\u200bg\u2060h",
    "ctl:\x01\x07\x7f\x85\u200e\u200f\ufeff\u00ad end",
    "tab\tsep\nnew\r\nline\rcr \r\n\r\n",
    "\u0915\u094d\u0958\u0301 \u0958\u0301 \u0915\u093c\u094d\u0937",
    "\U0001f44d\U0001f3fd \U0001f468\u200d\U0001f469\u200d\U0001f467 \U0001f1eb\U0001f1f7 "
    "\u2122\u0301 \u00a9\ufe0f #\ufe0f\u20e3",
    "\uff76\uff9e\uff77\uff9e \uff8a\uff9f \uff71\uff72\uff73",
    "multiple   spaces    and\u3000\u3000ideographic",
    "\u0600a \u06dd1 \u0d4e\u0d15",
]
SPECIALS = ["<unk>", "<s>", "</s>"]


def corpus():
    texts = []
    with open(CORPUS, encoding="utf-8") as f:
        for case in json.load(f)["cases"]:
            if case["text"] not in texts:
                texts.append(case["text"])
    return texts


def train(texts, **rule):
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts), model_writer=model, model_type="unigram",
        vocab_size=1000, hard_vocab_limit=False, character_coverage=1.0, num_threads=1,
        minloglevel=2, **rule)
    return model.getvalue()


def nmt_nfkc_tokenizer(texts):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "spm.model")
        with open(path, "wb") as f:
            f.write(train(texts, normalization_rule_name="nmt_nfkc"))
        # from_spm imports the protobuf module by this name; sentencepiece ships it.
        sys.modules["sentencepiece_model_pb2"] = sentencepiece_model_pb2
        tok = tokenizers.implementations.SentencePieceUnigramTokenizer.from_spm(path)._tokenizer
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))])
    tok.add_special_tokens(SPECIALS)
    return tok


def probe_charsmap():
    with tempfile.TemporaryDirectory() as tmp:
        rules = os.path.join(tmp, "rules.tsv")
        with open(rules, "w") as f:
            for cp in range(1, 0x110000):
                if not 0xD800 <= cp <= 0xDFFF and cp not in (0x0A, 0x301):
                    f.write("%X\t23\n" % cp)
        proto = sentencepiece_model_pb2.ModelProto()
        proto.ParseFromString(train(["probe text"] * 20, normalization_rule_tsv=rules))
    return proto.normalizer_spec.precompiled_charsmap


# (name, before, after): the text before + c + after for every code point c.
PROBES = [
    ("after_letter", "a", ""),                              # GB9, GB9a: extenders
    ("before_letter", "", "a"),                             # GB9b: Prepend
    ("before_marks", "", "\u0340\u0301"),                   # GB4: Control, CR, LF
    ("emoji_zwj", "", "\u200d\u00a9\u0301"),                # GB11: Extended_Pictographic
    ("after_virama", "\u0915\u094d", "\u0301"),             # GB9c: InCB=Consonant
    ("in_conjunct", "\u0915", "\u094d\u0915\u0301"),        # GB9c: InCB=Extend / Linker
    ("as_linker", "\u0915", "\u0915\u0301"),                # GB9c: InCB=Linker
    ("before_v", "", "\u1161\u0301"),                       # GB6, GB7: L, LV, V
    ("before_t", "", "\u11a8\u0301"),                       # GB7, GB8: LV, LVT, V, T
    ("before_l", "", "\u1100\u0301"),                       # GB6: L
    ("after_l", "\u1100", "\u0301"),                        # GB6: L, V, LV, LVT
    ("after_lv", "\uac00", "\u0301"),                       # GB7: V, T
    ("after_lvt", "\uac01", "\u0301"),                      # GB8: T
    ("after_regional", "\U0001f1e6", "\u0301"),             # GB12, GB13
    ("regional_pair", "\U0001f1e6\U0001f1e7", "\u0301"),    # GB12, GB13
]


def probe_runs(normalizer, before, after):
    cps = [cp for cp in range(1, 0x110000)
           if not 0xD800 <= cp <= 0xDFFF and cp not in (0x0A, 0x0D, 0x301)]
    outs = normalizer.normalize_str("\n".join(before + chr(cp) + after for cp in cps)).split("\n")
    assert len(outs) == len(cps)
    runs = []
    for cp, out in zip(cps, outs):
        if not runs or runs[-1][1] != out:
            runs.append([cp, out])
    return runs


def main():
    texts = corpus()
    tok = nmt_nfkc_tokenizer(texts)
    spec = json.loads(tok.to_str())
    precompiled = normalizers.Precompiled(
        base64.b64decode(spec["normalizer"]["normalizers"][0]["precompiled_charsmap"]))
    cases = []
    for text in texts + [t for t in EXTRA if t not in texts]:
        plain = tok.encode(text, add_special_tokens=False).ids
        cases.append({"text": text, "ids": plain, "ids_special": tok.encode(text).ids,
                      "decoded": tok.decode(plain, skip_special_tokens=True),
                      "precompiled": precompiled.normalize_str(text)})
    versions = "tokenizers %s, sentencepiece %s" % (tokenizers.__version__, spm.__version__)
    golden = {"generator": "tests/hf/testdata/make_precompiled_golden.py", "oracle": versions,
              "tokenizer": spec, "cases": cases}
    with open(os.path.join(HERE, "precompiled_golden.json"), "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")

    charsmap = probe_charsmap()
    normalizer = normalizers.Precompiled(charsmap)
    probes = [{"name": name, "before": before, "after": after,
               "runs": probe_runs(normalizer, before, after)} for name, before, after in PROBES]
    with open(os.path.join(HERE, "grapheme_probe.json"), "w", encoding="utf-8") as f:
        json.dump({"generator": "tests/hf/testdata/make_precompiled_golden.py",
                   "oracle": versions, "charsmap": base64.b64encode(charsmap).decode(),
                   "probes": probes}, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
