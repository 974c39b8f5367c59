#!/usr/bin/env python3
"""Writes the fuzz_precompiled_charsmap seeds: handmade.bin, the two-key trie ("a" -> "A",
"ab" -> "X") of tests/tokenizer/precompiled_charsmap_test.cc, and probe.bin, the probe charsmap
of tests/hf/testdata/grapheme_probe.json (sentencepiece's build of a rule mapping every code
point but LF and U+0301 to "#").

Usage: python3 fuzz/corpus/make_charsmap_seeds.py
"""
import base64
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(HERE, "fuzz_precompiled_charsmap")


def handmade():
    units = [0] * 1024
    leaf, is_value = 1 << 8, 1 << 31
    node_a = 256 ^ ord("a")
    value_a = node_a ^ 512
    node_ab = value_a ^ ord("b")
    units[0] = 256 << 10
    units[node_a] = ord("a") | leaf | (512 << 10)
    units[value_a] = is_value | 0
    units[node_ab] = ord("b") | leaf | (256 << 10)
    units[node_ab ^ 256] = is_value | 2
    return struct.pack("<I", 4 * len(units)) + struct.pack("<%dI" % len(units), *units) + b"A\0X\0"


def main():
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "handmade.bin"), "wb") as f:
        f.write(handmade())
    with open(os.path.join(ROOT, "tests", "hf", "testdata", "grapheme_probe.json")) as f:
        probe = base64.b64decode(json.load(f)["charsmap"])
    with open(os.path.join(OUT, "probe.bin"), "wb") as f:
        f.write(probe)


if __name__ == "__main__":
    main()
