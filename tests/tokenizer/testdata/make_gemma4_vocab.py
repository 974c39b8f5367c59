#!/usr/bin/env python3
"""Writes the Gemma 4 tokenizer test data: a small vocabulary-only GGUF with tokenizer.ggml.model
"gemma4", cut from Gemma 4's real vocabulary, and the token ids llama.cpp gives for a list of
texts on that same file.

  gemma4_vocab.gguf              tokens, scores, types and merges of Gemma 4's vocabulary
                                 (llama.cpp's models/ggml-vocab-gemma-4.gguf): its first
                                 FIRST_IDS ids (<pad> <eos> <bos> <unk> <mask>, <|tool>,
                                 <|tool_call>, <|"|>, <|channel>, <|think|>, <|turn>, <turn|>,
                                 newline runs, ...), its 256 byte tokens <0x00>..<0xFF>, its first
                                 N_MERGES merges with every token they name or make, and the
                                 other control / user-defined tokens; ids renumbered in the
                                 original order
  gemma4_tokenize_golden.json    per case: text, add_bos, parse_special, the ids llama-tokenize
                                 printed (--ids), and the pieces it printed joined ("decoded";
                                 absent where a piece is not valid UTF-8)

Source: llama.cpp (MIT) models/ggml-vocab-gemma-4.gguf, as vendored in llama-cpp-python 0.3.36
(bench/llama_peer.py); a vocabulary-only file derived from Gemma 4's tokenizer, whose own
licence applies (as for tests/data/llama-vocab, PROVENANCE.txt there). Data only; no code.

Usage (the llama.cpp sources and build of bench/llama_peer.py):
  LLAMA=~/.cache/radixlm/llama-peer/0.3.36
  PYTHONPATH=$LLAMA/src/vendor/llama.cpp/gguf-py .venv/bin/python \\
      tests/tokenizer/testdata/make_gemma4_vocab.py \\
      --source $LLAMA/src/vendor/llama.cpp/models/ggml-vocab-gemma-4.gguf \\
      --tokenize $LLAMA/build/bin/llama-tokenize
Each case runs `llama-tokenize -m gemma4_vocab.gguf -f CASE --no-escape --ids [--no-bos]
[--no-parse-special]` and once more without --ids for the pieces.
"""
import argparse
import json
import os
import subprocess
import tempfile

import gguf

HERE = os.path.dirname(os.path.abspath(__file__))
FIRST_IDS = 110
N_MERGES = 12000

CASES = [
    "Hello world", " Hello world", "Hello World", " Hello World!", "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "It's a dog's life; they're here, we've gone, I'd say you'll see.",
    "  two leading spaces", "   three", "trailing space ", "double  inner  spaces",
    "a\nb", "\n", "\n\n", "\n\n\n", "line one\nline two\n\nline four\n", "\n leading newline",
    "tab\there", "\t", " \t ", "mixed \n \n\t\n  end",
    "Äpfel und Öl", "Cửa Việt", "нещо на Български", "我想在apple工作1314151天～",
    "Γειά σου Κόσμε", "कहानी", "🦙 llama emoji", "🚀 (normal) 😶‍🌫️ ✅", "\u00a0non-breaking",
    "3 33 333 3333 33333 3.14159 1,000,000",
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
    "if (x == y) { return {\"a\": [1, 2]}; }",
    "<bos>Hello<eos>", "<|turn>user\nWhat is 2 + 2?<turn|>\n<|turn>model\n",
    "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,days:3}<tool_call|>",
    "<|channel>thought\nthinking<channel|>The answer", "<|think|> <unused0> <mask>",
    "text<turn|>more", "</s> is plain text here", "▁already escaped▁",
    "UPPER lower MiXeD", "email@example.com https://example.org/path?q=1&r=2",
    "''''''```````\"\"\"\"......!!!!!!??????", "Ünïcödé ŝtŕïñĝ ß ẞ",
]


def read_vocab(path):
    r = gguf.GGUFReader(path)
    field = lambda k: r.fields[k].contents()
    return {
        "tokens": field("tokenizer.ggml.tokens"),
        "scores": field("tokenizer.ggml.scores"),
        "types": field("tokenizer.ggml.token_type"),
        "merges": field("tokenizer.ggml.merges"),
    }


def cut_vocab(v):
    """The kept ids (original numbering, ascending) and the kept merges (original order)."""
    index = {t: i for i, t in enumerate(v["tokens"])}
    keep = set(range(FIRST_IDS))
    keep.update(i for i, ty in enumerate(v["types"]) if ty != gguf.TokenType.NORMAL)
    merges = v["merges"][:N_MERGES]
    for m in merges:
        cut = m.index(" ", 1)  # llama.cpp splits at the first space after the first byte
        left, right = m[:cut], m[cut + 1:]
        for t in (left, right, left + right):
            keep.add(index[t])
    return sorted(keep), merges


def write_vocab(path, v, ids, merges):
    w = gguf.GGUFWriter(path, "gemma4")
    w.add_name("gemma4-vocab-cut")
    w.add_tokenizer_model("gemma4")
    w.add_token_list([v["tokens"][i] for i in ids])
    w.add_token_scores([float(v["scores"][i]) for i in ids])
    w.add_token_types([int(v["types"][i]) for i in ids])
    w.add_token_merges(merges)
    new_id = {old: new for new, old in enumerate(ids)}
    w.add_bos_token_id(new_id[2])
    w.add_eos_token_id(new_id[1])
    w.add_unk_token_id(new_id[3])
    w.add_pad_token_id(new_id[0])
    w.add_mask_token_id(new_id[4])
    w.add_add_space_prefix(False)
    w.add_add_bos_token(True)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def run_tokenize(tool, vocab, text, add_bos, parse_special, ids_only):
    with tempfile.NamedTemporaryFile("wb", delete=False) as f:
        f.write(text.encode("utf-8"))
    cmd = [tool, "-m", vocab, "-f", f.name, "--no-escape", "--log-disable"]
    if not parse_special:  # llama-tokenize parses special tokens unless told not to
        cmd.append("--no-parse-special")
    if ids_only:
        cmd.append("--ids")
    if not add_bos:
        cmd.append("--no-bos")
    try:
        return subprocess.run(cmd, check=True, capture_output=True).stdout
    finally:
        os.unlink(f.name)


def parse_pieces(out, ids):
    """The pieces of `llama-tokenize` without --ids ("%6d -> 'piece'\\n" per token, raw bytes),
    joined; None where the joined bytes are not valid UTF-8."""
    pieces, pos = [], 0
    for k, tid in enumerate(ids):
        head = b"%6d -> '" % tid
        assert out.startswith(head, pos), (out[pos:pos + 40], tid)
        pos += len(head)
        end = len(out) - 2 if k + 1 == len(ids) else out.index(b"'\n%6d -> '" % ids[k + 1], pos)
        pieces.append(out[pos:end])
        pos = end + 2
    try:
        return b"".join(pieces).decode("utf-8")
    except UnicodeDecodeError:
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True, help="llama.cpp's models/ggml-vocab-gemma-4.gguf")
    ap.add_argument("--tokenize", required=True, help="llama.cpp's llama-tokenize")
    args = ap.parse_args()
    v = read_vocab(args.source)
    ids, merges = cut_vocab(v)
    vocab_path = os.path.join(HERE, "gemma4_vocab.gguf")
    write_vocab(vocab_path, v, ids, merges)
    cases = []
    for text in CASES:
        for add_bos, parse_special in ((False, False), (False, True), (True, True)):
            out = run_tokenize(args.tokenize, vocab_path, text, add_bos, parse_special, True)
            got = json.loads(out.decode("ascii").strip().splitlines()[-1])
            pieces = run_tokenize(args.tokenize, vocab_path, text, add_bos, parse_special, False)
            case = {"text": text, "add_bos": add_bos, "parse_special": parse_special, "ids": got}
            decoded = parse_pieces(pieces, got)
            if decoded is not None:
                case["decoded"] = decoded
            cases.append(case)
    golden = {
        "generator": "tests/tokenizer/testdata/make_gemma4_vocab.py",
        "oracle": "llama-tokenize (llama-cpp-python 0.3.36's llama.cpp) -f CASE --no-escape --ids",
        "model": "gemma4_vocab.gguf",
        "vocab_size": len(ids),
        "merges": len(merges),
        "cases": cases,
    }
    with open(os.path.join(HERE, "gemma4_tokenize_golden.json"), "w", encoding="utf-8") as f:
        f.write("{\n")
        for k in ("generator", "oracle", "model", "vocab_size", "merges"):
            f.write(" %s: %s,\n" % (json.dumps(k), json.dumps(golden[k])))
        f.write(' "cases": [\n')
        f.write(",\n".join("  " + json.dumps(c, ensure_ascii=False) for c in cases))
        f.write("\n ]\n}\n")
    print("%d tokens, %d merges, %d cases" % (len(ids), len(merges), len(cases)))


if __name__ == "__main__":
    main()
