#!/usr/bin/env python3
"""Writes normal_form_kinds_golden.json: tokenizer.json's Unicode normal form normalisers in
front of the other model kinds than Unigram (make_normal_form_golden.py has those), as the
`tokenizers` package (the oracle) applies them.

Variants, each a tokenizer.json built and trained with the package on the tests' corpus and
make_normal_form_golden.py's EXTRA texts (the trainer sees the text normalised):
  byte_level_nfc      Qwen2's layout: NFC; Split(Qwen2's pattern, Isolated) + ByteLevel
                      (use_regex false); BPE. Added tokens: <|endoftext|>, <|im_start|>,
                      <|im_end|> and <|e\u0301|> (special, content decomposed), <think> and
                      </think> (not special); all normalized false.
  byte_level_nfkd     the same model behind Sequence([NFKD]).
  spm_bpe_nfkc        Llama 2's layout with a normal form in front: a SentencePiece BPE model
                      (byte fallback) that the `sentencepiece` package trains on the corpus, as
                      transformers' LlamaConverter writes it (a merge for every split of every
                      piece: tests/e2e/hf_gemma_kit.py's generate_merges); Sequence([NFKC,
                      Prepend("\u2581"), Replace(" ", "\u2581")]); no pre-tokenizer; "<s> $A".
  spm_bpe_nfc_meta    the same model behind NFC and Metaspace(prepend_scheme "first", no split).
  wordpiece_nfc       Sequence([NFC, BertNormalizer(lowercase false)]); BertPreTokenizer;
                      WordPiece in BERT's id layout ([PAD] 0, [unused<i>], [UNK] 100, [CLS] 101,
                      [SEP] 102, [MASK] 103); "[CLS] $A [SEP]".
  wordpiece_nfkd      the same layout, trained behind Sequence([NFKD, BertNormalizer(lowercase
                      false)]).
For every text of the corpus, EXTRA and EMOJI (emoji sequences: ZWJ families, skin tones,
flags, keycaps, variation selectors; added tokens next to composed and decomposed text): the
package's ids with and without the post-processor's special tokens, and whether the ids differ
from the same tokenizer's without its normal forms ("changed"; those ids as "ids_plain"). INVALID (make_normal_form_golden)
holds byte strings that are not UTF-8 (hex): their cases are the package's on the text Python's
errors="replace" makes of them (one U+FFFD per maximal ill-formed subsequence, as Rust's
String::from_utf8_lossy).

Usage: .venv/bin/python tests/hf/testdata/make_normal_form_kinds_golden.py
  (tokenizers 0.23.2, sentencepiece 0.2.1, protobuf 7.36.2)
"""
import io
import json
import os
import sys

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2

import tokenizers
from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models, normalizers,
                        pre_tokenizers, processors, trainers)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_normal_form_golden import EXTRA, INVALID, corpus  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "..", "e2e"))
from hf_gemma_kit import generate_merges  # noqa: E402

QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
         r"|\s*[\r\n]+|\s+(?!\S)|\s+")
SP = "\u2581"
EMOJI = [
    "family: \U0001F468\u200d\U0001F469\u200d\U0001F467 \U0001F469\u200d\u2764\ufe0f\u200d"
    "\U0001F468 \U0001F44D\U0001F3FD \U0001F44D\U0001F3FF",
    "flags: \U0001F1EF\U0001F1F5\U0001F1EB\U0001F1F7 \U0001F3F4\u200d\u2620\ufe0f keycap: 1\ufe0f"
    "\u20e3 #\u20e3 \u2764\ufe0e \u2764\ufe0f \u263a",
    "<|im_start|>user\ncafe\u0301 <think>r\u00e9sum\u00e9</think> \u00c5<|im_end|>",
    "<|e\u0301|> is special, <|\u00e9|> is not; <|endoftext|>\u0301 e<|endoftext|>\u0301",
    "<s>cafe\u0301</s> <unk> [CLS] na\u0131\u0308ve [SEP] [MASK]",
]


def texts():
    return corpus() + [t for t in EMOJI if t not in corpus()]


def train_corpus():
    return corpus()


def byte_level(normalizer):
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=900, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(train_corpus(), trainer)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t in ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|e\u0301|>")])
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in ("<think>", "</think>")])
    return tok


def spm_bpe():
    """Llama 2's tokenizer.json layout for a SentencePiece BPE model that the `sentencepiece`
    package trains on the corpus (byte fallback): what transformers' LlamaConverter makes of it
    (a merge for every split of every piece, hf_gemma_kit.generate_merges), with NFKC in front
    of its Prepend and Replace, and its "<s> $A" template."""
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter([t for t in train_corpus() if t.strip()]), model_writer=model,
        model_type="bpe", vocab_size=1000, hard_vocab_limit=False, character_coverage=1.0,
        byte_fallback=True, normalization_rule_name="identity", remove_extra_whitespaces=False,
        num_threads=1, minloglevel=2)
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model.getvalue())
    pieces = [(p.piece, p.score, p.type) for p in proto.pieces]
    vocab = {t: i for i, (t, _, _) in enumerate(pieces)}
    scores = {t: sc for t, sc, _ in pieces}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=generate_merges(vocab, scores),
                               unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    tok.normalizer = normalizers.Sequence([
        normalizers.NFKC(), normalizers.Prepend(SP), normalizers.Replace(" ", SP)])
    tok.decoder = decoders.Sequence([
        decoders.Replace(SP, " "), decoders.ByteFallback(), decoders.Fuse(),
        decoders.Strip(" ", 1, 0)])
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True)
                            for t, _, ty in pieces if ty in (2, 3)])  # UNKNOWN, CONTROL
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", vocab["<s>"])])
    return json.loads(tok.to_str())


def wordpiece(form):
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence([form, normalizers.BertNormalizer(lowercase=False)])
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    trainer = trainers.WordPieceTrainer(vocab_size=1500, show_progress=False,
                                        special_tokens=specials)
    tok.train_from_iterator(train_corpus(), trainer)
    j = json.loads(tok.to_str())
    old = sorted(j["model"]["vocab"].items(), key=lambda kv: kv[1])
    layout = ["[PAD]"] + ["[unused%d]" % i for i in range(99)] + ["[UNK]", "[CLS]", "[SEP]",
                                                                  "[MASK]"]
    vocab = {t: i for i, t in enumerate(layout)}
    for t, _ in old:
        vocab.setdefault(t, len(vocab))
    j["model"]["vocab"] = vocab
    for a in j["added_tokens"]:
        a["id"] = vocab[a["content"]]
    j["post_processor"] = json.loads(processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 101), ("[SEP]", 102)]).__getstate__())
    j["decoder"] = json.loads(decoders.WordPiece().__getstate__())
    return j


def without_normal_forms(j):
    """tokenizer.json `j` with its Unicode normal forms taken out of the normaliser."""
    j = json.loads(json.dumps(j))
    norm = j["normalizer"]
    if norm["type"] in ("NFC", "NFD", "NFKC", "NFKD"):
        j["normalizer"] = None
    else:
        norm["normalizers"] = [n for n in norm["normalizers"]
                               if n["type"] not in ("NFC", "NFD", "NFKC", "NFKD")]
    return j


def variants():
    out = {}
    bl = json.loads(byte_level(normalizers.NFC()).to_str())
    out["byte_level_nfc"] = bl
    nfkd = json.loads(json.dumps(bl))
    nfkd["normalizer"] = json.loads(normalizers.Sequence([normalizers.NFKD()]).__getstate__())
    out["byte_level_nfkd"] = nfkd
    spm = spm_bpe()
    out["spm_bpe_nfkc"] = spm
    meta = json.loads(json.dumps(spm))
    meta["normalizer"] = json.loads(normalizers.NFC().__getstate__())
    meta["pre_tokenizer"] = json.loads(pre_tokenizers.Metaspace(
        replacement=SP, prepend_scheme="first", split=False).__getstate__())
    out["spm_bpe_nfc_meta"] = meta
    out["wordpiece_nfc"] = wordpiece(normalizers.NFC())
    out["wordpiece_nfkd"] = wordpiece(normalizers.NFKD())
    return out


def main():
    out = {"generator": "tests/hf/testdata/make_normal_form_kinds_golden.py",
           "oracle": "tokenizers " + tokenizers.__version__, "variants": {}}
    inputs = [{"text": t} for t in texts()] + [{"bytes_hex": h} for h in INVALID]
    for name, j in variants().items():
        tok = Tokenizer.from_str(json.dumps(j))
        plain = Tokenizer.from_str(json.dumps(without_normal_forms(j)))
        cases = []
        for case in inputs:
            text = case.get("text")
            if text is None:
                text = bytes.fromhex(case["bytes_hex"]).decode("utf-8", errors="replace")
            ids = tok.encode(text, add_special_tokens=False).ids
            plain_ids = plain.encode(text, add_special_tokens=False).ids
            cases.append(dict(case, ids=ids, ids_special=tok.encode(text).ids,
                              changed=ids != plain_ids))
            if ids != plain_ids:
                cases[-1]["ids_plain"] = plain_ids
        print(name, len(cases), "cases,", sum(c["changed"] for c in cases),
              "changed by the normal forms")
        out["variants"][name] = {"tokenizer": j, "cases": cases}
    with open(os.path.join(HERE, "normal_form_kinds_golden.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=None, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
