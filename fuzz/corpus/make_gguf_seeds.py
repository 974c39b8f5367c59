#!/usr/bin/env python3
"""Writes the tiny GGUF seed files in fuzz_gguf/ (run from this directory; output is committed).

Each file is a valid GGUF written by hand from the format description (llama.cpp's
docs/gguf.md): a v3 SPM vocabulary with two tensors, a v3 byte-level BPE vocabulary with merges,
and a v2 file with nested arrays and every scalar type. They are small so that libFuzzer's
mutations reach every field.
"""
import struct

U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
FMT = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<?",
       U64: "<Q", I64: "<q", F64: "<d"}


def gstr(s, v3=True):
    b = s.encode()
    return (struct.pack("<Q", len(b)) if v3 else struct.pack("<Q", len(b))) + b


def value(t, v):
    if t == STR:
        return gstr(v)
    if t == ARR:
        et, items = v
        return struct.pack("<IQ", et, len(items)) + b"".join(value(et, x) for x in items)
    return struct.pack(FMT[t], v)


def gguf(version, kvs, tensors, alignment=32):
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs))
    for key, t, v in kvs:
        out += gstr(key) + struct.pack("<I", t) + value(t, v)
    offset = 0
    datas = []
    for name, ggml_type, shape, data in tensors:
        out += gstr(name) + struct.pack("<I", len(shape))
        out += b"".join(struct.pack("<Q", d) for d in shape)
        out += struct.pack("<IQ", ggml_type, offset)
        datas.append((offset, data))
        offset += (len(data) + alignment - 1) // alignment * alignment
    out += b"\0" * (-len(out) % alignment)
    base = len(out)
    for off, data in datas:
        out += b"\0" * (base + off - len(out)) + data
    return out


spm_tokens = ["<unk>", "<s>", "</s>", "<0x0A>", "<0xC3>", "\u2581", "\u2581a", "a", "b",
              "\u2581the", "h", "e", "l", "o", "\u2581Hello", "\u2581world", "<start_of_turn>"]
spm = gguf(3, [
    ("general.architecture", STR, "llama"),
    ("general.alignment", U32, 32),
    ("llama.block_count", U32, 1),
    ("tokenizer.ggml.model", STR, "llama"),
    ("tokenizer.ggml.tokens", ARR, (STR, spm_tokens)),
    ("tokenizer.ggml.scores", ARR, (F32, [0.0, 0.0, 0.0] + [-float(i) for i in range(len(spm_tokens) - 3)])),
    ("tokenizer.ggml.token_type", ARR, (I32, [2, 3, 3, 6, 6] + [1] * (len(spm_tokens) - 6) + [4])),
    ("tokenizer.ggml.bos_token_id", U32, 1),
    ("tokenizer.ggml.eos_token_id", U32, 2),
    ("tokenizer.ggml.unknown_token_id", U32, 0),
    ("tokenizer.ggml.add_bos_token", BOOL, True),
    ("tokenizer.chat_template", STR, "{% for m in messages %}{{ m.content }}{% endfor %}"),
], [
    ("token_embd.weight", 0, [4, 2], struct.pack("<8f", *range(8))),        # F32
    ("blk.0.attn_q.weight", 2, [32, 1], struct.pack("<e", 0.5) + bytes(range(16))),  # Q4_0
])

bpe_tokens = ["<|endoftext|>", "a", "b", "c", "\u0120", "\u0120a", "ab", "abc", "\u010a", "H",
              "e", "l", "o", "He", "ll", "llo", "Hello"]
bpe = gguf(3, [
    ("general.architecture", STR, "gpt2"),
    ("tokenizer.ggml.model", STR, "gpt2"),
    ("tokenizer.ggml.pre", STR, "gpt-2"),
    ("tokenizer.ggml.tokens", ARR, (STR, bpe_tokens)),
    ("tokenizer.ggml.token_type", ARR, (I32, [3] + [1] * (len(bpe_tokens) - 1))),
    ("tokenizer.ggml.merges", ARR, (STR, ["\u0120 a", "a b", "ab c", "H e", "l l", "ll o", "He llo"])),
    ("tokenizer.ggml.bos_token_id", U32, 0),
    ("tokenizer.ggml.eos_token_id", U32, 0),
], [("output.weight", 1, [2, 2], struct.pack("<4e", 1, 2, 3, 4))])         # F16

scalars = gguf(2, [
    ("u8", U8, 255), ("i8", I8, -1), ("u16", U16, 65535), ("i16", I16, -2), ("u32", U32, 7),
    ("i32", I32, -7), ("f32", F32, 1.5), ("bool", BOOL, False), ("str", STR, "x\u00e9"),
    ("u64", U64, 2**40), ("i64", I64, -(2**40)), ("f64", F64, 2.25),
    ("nested", ARR, (ARR, [(U8, [1, 2]), (STR, ["a", ""]), (ARR, [(I64, [3])])])),
    ("empty", ARR, (F32, [])),
], [])

for name, data in [("tiny_spm.gguf", spm), ("tiny_bpe.gguf", bpe), ("scalars_v2.gguf", scalars)]:
    with open("fuzz_gguf/" + name, "wb") as f:
        f.write(data)
