#!/usr/bin/env python3
"""radixlm's next-token distributions after an image prompt against llama.cpp's (libmtmd).

The same text model (gemma-3-270m Q4_K_M by default), a synthetic gemma3 projector GGUF with
output width 640 (bench/vision_oracle.py's writer: random weights, numpy seed 0), the same
image files and the same prompts with "<__media__>" markers. Each prompt is teacher-forced:
both sides compute the logits after every text position, and this script compares them where
they predict text after the first image.

llama.cpp side: bench/mtmd_logits.cc compiled against the peer build (bench/llama_peer.py) into
the cache folder, never into the repository: mtmd_tokenize (llama-server's layout: BOS,
<start_of_image> / <end_of_image> around each image, the text between tokenized piece by piece),
each image encoded and decoded whole (non-causal), text decoded in batches of --batch tokens
with every position's logits. Run twice: --batch (the reference L) and --self-batch (L', the
bar: llama.cpp's divergence from itself at another batch shape).
radixlm side: <build>/bench/image_logits (the engine's BuildImagePrompt over the projector's
ImageEncoder, Model::Forward in chunks of --chunk).

Checked: the two prompt layouts are the same token for token (ids, image positions and token
counts); mean KL(L || radixlm) <= max(2 x mean KL(L || L'), 0.01 nats) over the text positions
after the first image; radixlm's top token equals llama.cpp's wherever llama.cpp's top two
log-probabilities are >= 0.5 nats apart.

    python bench/image_kl_oracle.py --build build
    python bench/image_kl_oracle.py --build build --layers 27 --width 1152 --ffn 4304 --heads 16

--type qwen25vl compares Qwen2.5-VL instead: a synthetic qwen2.5vl_merger projector
(bench/synth_mmproj.py; 4 layers of Qwen2.5-VL's ViT width by default) beside a synthetic
qwen2vl language model of Qwen2.5-VL-3B's width with few layers (random weights, SmolLM2's
tokenizer, quantized to Q4_K_M by the peer's llama-quantize), ChatML turns; the image tokens take
M-RoPE positions on both sides (llama.cpp's mtmd, radixlm's MropePositions).

    python bench/image_kl_oracle.py --build build --type qwen25vl

--type qwen3vl compares Qwen3-VL: a synthetic qwen3vl_merger projector (bench/synth_mmproj.py;
4 layers of Qwen3-VL-2B's ViT width, 2304 learned positions, deepstack mergers after ViT layers
0, 1 and 2 by default) beside a synthetic qwen3vl language model of Qwen3-VL-2B's width (2048,
16 heads / 8 KV heads of 128, FFN 6144) with --text-layers layers and 3 deepstack layers
(Q4_K_M); interleaved M-RoPE positions for the image tokens and the deepstack slices added after
the first 3 layers on both sides.

    python bench/image_kl_oracle.py --build build --type qwen3vl

--type gemma4v: a synthetic gemma4v projector (bench/synth_mmproj.py: patch 16 unless --patch,
pooling 3, clamps, std_bias / std_scale) beside a gemma4 text model of its output width, e.g.
tests/model/llama_cpp/synth_family.py's Gemma 4 E2B shape (width 1536: llama.cpp decodes its
image spans causally; SmolLM2's tokenizer, so <|image> and <image|> are plain text to both):

    python tests/model/llama_cpp/synth_family.py gemma4 /tmp/gemma4_e2b.gguf --shape real
    python bench/image_kl_oracle.py --build build --type gemma4v --text-model /tmp/gemma4_e2b.gguf \
        --out-width 1536 --patch 16

--type idefics3: a synthetic idefics3 projector (bench/vision_oracle.py's writer: SmolVLM-256M's
vision shape, tiles of 512, patch 16, pixel shuffle 4: 64 rows a tile, output 576; 2 layers and
longest edge 1024, so up to 2 x 2 tiles, unless --layers / --longest-edge) beside the tests'
chat model SmolLM2-135M-Instruct (RADIXLM_CHAT_MODEL: a llama of SmolVLM-256M's language model's
shape) with SmolVLM's image tokens added to its vocabulary (tests/e2e/synth_idefics3.py: mtmd's
idefics3 layout looks "<fake_token_around_image>" and "<global-img>" up in the vocabulary),
SmolVLM's turns ("<|im_start|>User:", "<end_of_utterance>\n", "Assistant:"). Each image is its
tiles row by row, each after "<fake_token_around_image><row_R_col_C>", "\n" after each tile
row but the last, then "\n\n<fake_token_around_image><global-img>", the overview and
"<fake_token_around_image>" (mtmd_tokenize's layout, compared token for token).

    python bench/image_kl_oracle.py --build build --type idefics3

--type idefics3 --layout-golden DIR writes what tests/vision/idefics3_test.cc's
Idefics3LayoutGoldenTest reads: two tiny idefics3 projectors (synth_idefics3.py: tiles of 24, 9
rows a tile, output 576; longest edge 24: every image one tile, and 72: up to 3 x 3), three PNGs
(45x29: 1 x 1 tile; 90x60: 2 rows of 3; 60x90: 3 rows of 2) and, for the prompt "<__media__>"
with each, llama.cpp's prompt (mtmd_tokenize through bench/mtmd_logits.cc beside the model
above): its ids, -1 at image rows, and each text token's piece, in idefics3_layout_golden.json.

    python bench/image_kl_oracle.py --type idefics3 --layout-golden tests/vision/testdata
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import llama_peer  # noqa: E402
import synth_mmproj  # noqa: E402
import vision_oracle  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
import synth_idefics3  # noqa: E402
MARKER = "<__media__>"


def log(msg: str) -> None:
    print(f"[image-kl] {msg}", flush=True)


def build_tool(version: str) -> Path:
    """Compiles bench/mtmd_logits.cc against the peer build into the cache folder."""
    peer = llama_peer.cache_dir(version)
    src, build = peer / "src" / "vendor" / "llama.cpp", peer / "build"
    out = vision_oracle.cache() / "mtmd_logits"
    source = Path(__file__).resolve().parent / "mtmd_logits.cc"
    if out.exists() and out.stat().st_mtime > source.stat().st_mtime:
        return out
    libs = [build / "tools/mtmd/libmtmd.a", build / "src/libllama.a",
            build / "vendor/hash/libvendor-hash.a", build / "ggml/src/libggml.a",
            build / "ggml/src/libggml-cpu.a", build / "ggml/src/libggml-base.a"]
    missing = [str(p) for p in libs if not p.exists()]
    if missing:
        raise SystemExit(f"peer build lacks {missing}: run bench/llama_peer.py first")
    log("compiling " + out.name)
    subprocess.run(["g++", "-O2", "-std=c++17", f"-I{src}/include", f"-I{src}/ggml/include",
                    f"-I{src}/tools/mtmd", str(source), "-o", str(out), *map(str, libs),
                    "-fopenmp", "-lpthread", "-ldl"], check=True)
    return out


def passages() -> list[str]:
    text = (ROOT / "bench" / "data" / "oracle_texts.txt").read_text()
    return [p.strip() for p in text.split("<<<>>>") if p.strip()]


# A user turn's opening and closing, and the model turn's opening (Gemma's; ChatML for Qwen).
TURNS = {"gemma3": ("<start_of_turn>user\n", "<end_of_turn>\n", "<start_of_turn>model\n"),
         "qwen25vl": ("<|im_start|>user\n", "<|im_end|>\n", "<|im_start|>assistant\n"),
         "qwen3vl": ("<|im_start|>user\n", "<|im_end|>\n", "<|im_start|>assistant\n"),
         "idefics3": ("<|im_start|>User:", "<end_of_utterance>\n", "Assistant:")}


def prompts(images: list[Path], kind: str = "gemma3") -> list[tuple[str, list[Path]]]:
    """One chat turn per image with a teacher-forced answer, and one turn with two images."""
    user, end, model = TURNS[kind]
    texts = passages()
    out = []
    for i, image in enumerate(images):
        out.append((f"{user}{MARKER}Describe the picture, then go on.{end}"
                    f"{model}{texts[i % len(texts)]}", [image]))
    if len(images) >= 2:
        # (ChatML: each marker after a newline. In the synthetic qwen2vl's borrowed SmolLM2
        # vocabulary <|vision_start|> is plain text, which mtmd_tokenize tokenizes as a piece of
        # its own and BuildImagePrompt with the text before it: "Ġ" "<" "|" against "Ġ<" "|"
        # after a space; bench/RESULTS.md.)
        sep = "\n" if kind in ("qwen25vl", "qwen3vl") else " "
        out.append((f"{user}The first picture:{sep}{MARKER}\nThe second:{sep}{MARKER}\n"
                    f"Which is brighter?{end}{model}"
                    f"{texts[len(images) % len(texts)]}", images[:2]))
    return out


def qwen_files(args, work: Path) -> tuple[Path, str, str]:
    """The --type qwen25vl pair: a qwen2.5vl_merger projector (bench/synth_mmproj.py) and a
    qwen2vl language model of the given shape quantized to Q4_K_M by the peer's llama-quantize
    (kept in the cache folder). Returns (projector, text model, tag)."""
    gguf_py = llama_peer.gguf_py_dir(args.peer_version)
    tag = (f"qwen25vl_L{args.layers}_w{args.width}_f{args.ffn}_h{args.heads}_p{args.patch}"
           f"_o{args.text_width}")
    proj = work / f"{tag}.gguf"
    if not proj.exists():
        log(f"writing {proj}")
        synth_mmproj.write_qwen25vl_projector(proj.with_suffix(".tmp"), args.layers, args.width,
                                              args.ffn, args.heads, args.patch, args.text_width,
                                              args.n_wa_pattern, gguf_py)
        proj.with_suffix(".tmp").rename(proj)
    lm_tag = f"qwen2vl_w{args.text_width}_L{args.text_layers}_f{args.text_ffn}"
    lm = work / f"{lm_tag}-Q4_K_M.gguf"
    if not lm.exists():
        f16 = work / f"{lm_tag}-F16.gguf"
        if not f16.exists():
            log(f"writing {f16}")
            synth_mmproj.write_qwen2vl_text_model(f16.with_suffix(".tmp"), args.text_width,
                                                  args.text_layers, args.text_width // 128, 2,
                                                  args.text_ffn, gguf_py)
            f16.with_suffix(".tmp").rename(f16)
        quantize = llama_peer.cache_dir(args.peer_version) / "build" / "bin" / "llama-quantize"
        log(f"quantizing {lm.name}")
        subprocess.run([str(quantize), str(f16), str(lm.with_suffix(".tmp")), "Q4_K_M"],
                       check=True, capture_output=True)
        lm.with_suffix(".tmp").rename(lm)
    return proj, str(lm), f"{tag} + {lm.name}"


QWEN3_DEEPSTACK = (0, 1, 2)


def qwen3_files(args, work: Path) -> tuple[Path, str, str]:
    """The --type qwen3vl pair: a qwen3vl_merger projector and a qwen3vl language model with as
    many deepstack layers (bench/synth_mmproj.py), the latter quantized to Q4_K_M."""
    gguf_py = llama_peer.gguf_py_dir(args.peer_version)
    ds = tuple(d for d in QWEN3_DEEPSTACK if d < args.layers)
    tag = (f"qwen3vl_L{args.layers}_w{args.width}_f{args.ffn}_h{args.heads}_p{args.patch}"
           f"_ds{len(ds)}_o{args.text_width}")
    proj = work / f"{tag}.gguf"
    if not proj.exists():
        log(f"writing {proj}")
        synth_mmproj.write_qwen3vl_projector(proj.with_suffix(".tmp"), args.layers, args.width,
                                             args.ffn, args.heads, args.patch, args.text_width,
                                             2304, ds, gguf_py)
        proj.with_suffix(".tmp").rename(proj)
    lm_tag = f"qwen3vl_w{args.text_width}_L{args.text_layers}_f{args.text_ffn}_ds{len(ds)}"
    lm = work / f"{lm_tag}-Q4_K_M.gguf"
    if not lm.exists():
        f16 = work / f"{lm_tag}-F16.gguf"
        if not f16.exists():
            log(f"writing {f16}")
            synth_mmproj.write_qwen3vl_text_model(f16.with_suffix(".tmp"), args.text_width,
                                                  args.text_layers, args.text_width // 128,
                                                  args.text_width // 256, args.text_ffn, len(ds),
                                                  gguf_py)
            f16.with_suffix(".tmp").rename(f16)
        quantize = llama_peer.cache_dir(args.peer_version) / "build" / "bin" / "llama-quantize"
        log(f"quantizing {lm.name}")
        subprocess.run([str(quantize), str(f16), str(lm.with_suffix(".tmp")), "Q4_K_M"],
                       check=True, capture_output=True)
        lm.with_suffix(".tmp").rename(lm)
    return proj, str(lm), f"{tag} + {lm.name}"


def smolvlm_text_model(chat_model: str) -> str:
    """The chat model with SmolVLM's image tokens (tests/e2e/synth_idefics3.py), cached."""
    path = vision_oracle.cache() / ("smolvlm_tokens_" + Path(chat_model).name)
    if not path.exists():
        log(f"writing {path}")
        synth_idefics3.write_smolvlm_lm(chat_model, str(path.with_suffix(".tmp")))
        path.with_suffix(".tmp").rename(path)
    return str(path)


def token_pieces(model: str, gguf_py: Path) -> list[str]:
    """Each token's text as llama.cpp's token_to_piece(special=true) gives it for a byte-level
    BPE vocabulary (SmolLM2's): control and user-defined tokens as written, the others mapped
    back from GPT-2's byte-to-unicode alphabet."""
    sys.path.insert(0, str(gguf_py))
    import gguf  # noqa: PLC0415
    reader = gguf.GGUFReader(model)
    tokens = reader.fields["tokenizer.ggml.tokens"].contents()
    types = reader.fields["tokenizer.ggml.token_type"].contents()
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    byte_of = {chr(c): b for b, c in zip(bs, cs)}
    out = []
    for text, kind in zip(tokens, types):
        if kind in (3, 4):  # control, user-defined
            out.append(text)
        else:
            out.append(bytes(byte_of[ch] for ch in text).decode("utf-8", errors="replace"))
    return out


LAYOUT_IMAGES = ((24, 45, 29, 41), (72, 90, 60, 42), (72, 60, 90, 43))  # (longest edge, w, h, seed)


def write_layout_golden(dest: Path, args) -> int:
    dest.mkdir(parents=True, exist_ok=True)
    theirs = build_tool(args.peer_version)
    model = smolvlm_text_model(args.text_model)
    pieces = token_pieces(model, llama_peer.gguf_py_dir(args.peer_version))
    out_dir = vision_oracle.cache() / "idefics3_layout"
    out_dir.mkdir(exist_ok=True)
    prompt = out_dir / "prompt.txt"
    prompt.write_text(MARKER)
    golden = {"producer": f"llama.cpp {llama_peer.peer_version(args.peer_version)} libmtmd "
                          "(mtmd_tokenize, bench/mtmd_logits.cc) beside "
                          f"{Path(args.text_model).name} with SmolVLM's image tokens "
                          "(tests/e2e/synth_idefics3.py), written by bench/image_kl_oracle.py "
                          "--type idefics3 --layout-golden",
              "prompt": MARKER, "images": []}
    for edge, w, h, seed in LAYOUT_IMAGES:
        proj = dest / f"idefics3_layout_e{edge}_mmproj.gguf"
        if not proj.exists():
            synth_idefics3.write_idefics3_mmproj(str(proj), 576, edge)
        png = dest / f"idefics3_layout_{w}x{h}.png"
        vision_oracle.write_png(png, vision_oracle.picture(w, h, seed))
        stem = out_dir / f"{w}x{h}"
        meta = run([str(theirs), str(proj), model, str(prompt), str(stem), "1", "512", str(png)])
        ids = np.fromfile(str(stem) + ".ids", dtype=np.int32).tolist()
        (Path(str(stem) + ".f32")).unlink()
        chunks = []
        for i in ids:
            if i < 0:
                if not chunks or "rows" not in chunks[-1]:
                    chunks.append({"rows": 0})
                chunks[-1]["rows"] += 1
            else:
                if not chunks or "text" not in chunks[-1]:
                    chunks.append({"text": []})
                chunks[-1]["text"].append(pieces[i])
        golden["images"].append({"projector": proj.name, "file": png.name, "ids": ids,
                                 "image_tokens": meta["image_tokens"], "chunks": chunks})
        log(f"{png.name}: {len(ids)} positions, image chunks {meta['image_tokens']}")
    (dest / "idefics3_layout_golden.json").write_text(json.dumps(golden, indent=1) + "\n")
    log(f"wrote idefics3_layout_golden.json and its files to {dest}")
    return 0


def run(cmd: list[str]) -> dict:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{Path(cmd[0]).name} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return json.loads([line for line in r.stdout.splitlines() if line.startswith("{")][-1])


def log_softmax(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def compare(ref: Path, other: Path, rows: np.ndarray, vocab: int) -> dict:
    """KL(ref || other) and top-1 agreement over the given text rows."""
    a = np.memmap(ref, dtype=np.float32, mode="r").reshape(-1, vocab)
    b = np.memmap(other, dtype=np.float32, mode="r").reshape(-1, vocab)
    kls, agree, confident, confident_agree = [], 0, 0, 0
    for at in range(0, len(rows), 16):
        idx = rows[at:at + 16]
        la, lb = log_softmax(a[idx]), log_softmax(b[idx])
        kls.extend((np.exp(la) * (la - lb)).sum(axis=-1).tolist())
        top_a, top_b = la.argmax(axis=-1), lb.argmax(axis=-1)
        agree += int((top_a == top_b).sum())
        two = np.sort(la, axis=-1)[:, -2:]
        sure = (two[:, 1] - two[:, 0]) >= 0.5
        confident += int(sure.sum())
        confident_agree += int((sure & (top_a == top_b)).sum())
    return {"kls": kls, "agree": agree, "confident": confident, "confident_agree": confident_agree}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="radixlm build folder (with bench/image_logits)")
    ap.add_argument("--peer-version", default=llama_peer.DEFAULT_VERSION)
    ap.add_argument("--text-model", default=os.environ.get("RADIXLM_DEFAULT_MODEL",
                                                           str(vision_oracle.DEFAULT_TEXT_MODEL)))
    ap.add_argument("--type", choices=("gemma3", "qwen25vl", "qwen3vl", "gemma4v", "idefics3"),
                    default="gemma3")
    ap.add_argument("--longest-edge", type=int, default=1024,
                    help="idefics3: clip.vision.preproc_image_size (SmolVLM's is 2048)")
    ap.add_argument("--layout-golden", help="idefics3: write the layout golden files here")
    ap.add_argument("--layers", type=int,
                    help="projector layers: default 2 (gemma3, gemma4v), 4 (qwen25vl)")
    ap.add_argument("--width", type=int,
                    help="projector width: default 256 (gemma3, gemma4v), 1280 (qwen25vl)")
    ap.add_argument("--ffn", type=int,
                    help="projector FFN: default 1024 (gemma3, gemma4v), 3420 (qwen25vl)")
    ap.add_argument("--heads", type=int,
                    help="projector heads: default 4 (gemma3, gemma4v), 16 (qwen25vl)")
    ap.add_argument("--n-wa-pattern", type=int, default=2, help="qwen25vl: every Nth layer full")
    ap.add_argument("--text-width", type=int, default=2048,
                    help="qwen25vl: the language model's width (Qwen2.5-VL-3B's)")
    ap.add_argument("--text-layers", type=int, default=4, help="qwen25vl: its layers")
    ap.add_argument("--text-ffn", type=int,
                    help="qwen25vl / qwen3vl: its FFN (default 11008, 3B's; 6144, 2B's)")
    ap.add_argument("--image-size", type=int, default=896)
    ap.add_argument("--patch", type=int, help="default 14, 16 (qwen3vl, idefics3)")
    ap.add_argument("--scale", type=int, default=4, help="pooling factor (256 tokens at 896 / 14 / 4)")
    ap.add_argument("--out-width", type=int, default=640)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--batch", type=int, default=512, help="llama.cpp's text batch (the reference)")
    ap.add_argument("--self-batch", type=int, default=1, help="llama.cpp's other text batch (the bar)")
    ap.add_argument("--chunk", type=int, default=512, help="radixlm's prefill chunk")
    ap.add_argument("--images", nargs="*", help="image files (default: generated PNGs and the peer's JPEG)")
    ap.add_argument("--prompt", type=int, action="append",
                    help="run only this prompt (its index in the table; repeatable)")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    qwen = args.type == "qwen25vl"
    qwen3 = args.type == "qwen3vl"
    idefics3 = args.type == "idefics3"
    for key, gemma3, qwen25vl, qwen3vl, smolvlm in (
            ("layers", 2, 4, 4, 2), ("width", 256, 1280, 1024, 768),
            ("ffn", 1024, 3420, 4096, 3072), ("heads", 4, 16, 16, 12)):
        if getattr(args, key) is None:
            setattr(args, key, qwen25vl if qwen else qwen3vl if qwen3 else
                    smolvlm if idefics3 else gemma3)
    if args.text_ffn is None:
        args.text_ffn = 6144 if qwen3 else 11008
    if args.patch is None:
        args.patch = 16 if qwen3 or idefics3 else 14
    if idefics3:
        if args.text_model == ap.get_default("text_model"):
            args.text_model = os.environ.get("RADIXLM_CHAT_MODEL", "")
        if not args.text_model:
            raise SystemExit("--type idefics3 needs SmolLM2-135M-Instruct's GGUF: "
                             "--text-model or RADIXLM_CHAT_MODEL")
        if args.layout_golden:
            return write_layout_golden(Path(args.layout_golden), args)
        args.text_model = smolvlm_text_model(args.text_model)
        if args.image_size == ap.get_default("image_size"):
            args.image_size = 512
        if args.out_width == ap.get_default("out_width"):
            args.out_width = 576

    work = vision_oracle.cache()
    if args.type == "gemma4v":
        tag = (f"gemma4v_L{args.layers}_w{args.width}_f{args.ffn}_h{args.heads}_p{args.patch}"
               f"_o{args.out_width}_clamps")
    elif idefics3:
        tag = (f"idefics3_L{args.layers}_w{args.width}_f{args.ffn}_h{args.heads}"
               f"_i{args.image_size}_p{args.patch}_s{args.scale}_e{args.longest_edge}"
               f"_o{args.out_width}")
    else:
        tag = (f"gemma3_L{args.layers}_w{args.width}_f{args.ffn}_h{args.heads}_i{args.image_size}"
               f"_p{args.patch}_s{args.scale}_o{args.out_width}")
    proj = work / f"{tag}.gguf"
    if qwen:
        proj, args.text_model, tag = qwen_files(args, work)
    if qwen3:
        proj, args.text_model, tag = qwen3_files(args, work)
    if not proj.exists() and args.type == "gemma4v":
        log(f"writing {proj}")
        synth_mmproj.write_gemma4v_projector(
            proj.with_suffix(".tmp"), args.layers, args.width, args.ffn, args.heads, args.patch,
            args.out_width, llama_peer.gguf_py_dir(args.peer_version), clamps=True)
        proj.with_suffix(".tmp").rename(proj)
    if not proj.exists():
        log(f"writing {proj}")
        vision_oracle.write_projector(proj.with_suffix(".tmp"), args.layers, args.width, args.ffn,
                                      args.heads, args.image_size, args.patch, args.out_width,
                                      args.scale, llama_peer.gguf_py_dir(args.peer_version),
                                      kind=args.type if idefics3 else "gemma3",
                                      longest_edge=args.longest_edge)
        proj.with_suffix(".tmp").rename(proj)
    theirs = build_tool(args.peer_version)
    ours = Path(args.build).resolve() / "bench" / "image_logits"
    if not ours.exists():
        raise SystemExit(f"{ours} is missing: ninja -C {args.build} image_logits")
    if args.images:
        images = [Path(p) for p in args.images]
    elif qwen or qwen3:  # (dynamic resolution: a 448x448 image is 256 / 196 tokens)
        images = vision_oracle.qwen_images(work) + vision_oracle.default_images(
            work, args.peer_version)[1:2]
    else:
        images = vision_oracle.default_images(work, args.peer_version)[:5]
    out_dir = work / "image_kl"
    out_dir.mkdir(exist_ok=True)
    threads = str(args.threads)
    rows, all_kl, all_self, layout_ok = [], [], [], True
    totals = {"agree": 0, "confident": 0, "confident_agree": 0, "n": 0}
    for k, (prompt, files) in enumerate(prompts(images, args.type)):
        if args.prompt and k not in args.prompt:
            continue
        pf = out_dir / f"prompt{k}.txt"
        pf.write_text(prompt)
        files_s = [str(f) for f in files]
        stem = {s: out_dir / f"p{k}_{s}" for s in ("L", "S", "R")}
        log(f"prompt {k}: {', '.join(f.name for f in files)}")
        meta_l = run([str(theirs), str(proj), args.text_model, str(pf), str(stem["L"]), threads,
                      str(args.batch), *files_s])
        meta_s = run([str(theirs), str(proj), args.text_model, str(pf), str(stem["S"]), threads,
                      str(args.self_batch), *files_s])
        meta_r = run([str(ours), str(proj), args.text_model, str(pf), str(stem["R"]), threads,
                      str(args.chunk), *files_s])
        ids = {s: np.fromfile(str(p) + ".ids", dtype=np.int32) for s, p in stem.items()}
        same = (len(ids["L"]) == len(ids["R"]) and bool((ids["L"] == ids["R"]).all())
                and meta_l["image_tokens"] == meta_r["image_tokens"])
        if not same:
            layout_ok = False
            n = min(len(ids["L"]), len(ids["R"]))
            first = next((i for i in range(n) if ids["L"][i] != ids["R"][i]), n)
            log(f"  layouts differ at position {first}: llama.cpp {ids['L'][first:first + 8].tolist()} "
                f"radixlm {ids['R'][first:first + 8].tolist()} (lengths {len(ids['L'])}, {len(ids['R'])})")
            continue
        # Text rows (in position order) whose position lies after the first image.
        text_pos = np.flatnonzero(ids["L"] >= 0)
        first_image_end = int(np.flatnonzero(ids["L"] < 0)[meta_l["image_tokens"][0] - 1]) + 1
        after = np.flatnonzero(text_pos >= first_image_end)
        vocab = meta_l["vocab"]
        r = compare(Path(str(stem["L"]) + ".f32"), Path(str(stem["R"]) + ".f32"), after, vocab)
        s = compare(Path(str(stem["L"]) + ".f32"), Path(str(stem["S"]) + ".f32"), after, vocab)
        for f in stem.values():
            Path(str(f) + ".f32").unlink()
        all_kl += r["kls"]
        all_self += s["kls"]
        for key in ("agree", "confident", "confident_agree"):
            totals[key] += r[key]
        totals["n"] += len(after)
        row = {"prompt": k, "images": [f.name for f in files], "positions": int(meta_l["positions"]),
               "image_tokens": meta_l["image_tokens"], "scored": int(len(after)),
               "bos": int(ids["L"][0]), "mean_kl": float(np.mean(r["kls"])),
               "max_kl": float(np.max(r["kls"])), "self_mean_kl": float(np.mean(s["kls"])),
               "top1": r["agree"], "confident": r["confident"],
               "confident_agree": r["confident_agree"]}
        rows.append(row)
        log(f"  {row['scored']} positions after the image: mean KL {row['mean_kl']:.3e} "
            f"(llama.cpp vs itself {row['self_mean_kl']:.3e}), top-1 {row['top1']}/{row['scored']}")
    print(f"\nprojector {tag}; llama.cpp batch {args.batch} (reference) and {args.self_batch}; "
          f"radixlm chunk {args.chunk}; {threads} threads")
    print(f"{'prompt':>6} {'images':40} {'pos':>5} {'scored':>6} {'mean KL':>10} {'max KL':>10} "
          f"{'self KL':>10} {'top-1':>9} {'confident':>10}")
    for r in rows:
        print(f"{r['prompt']:>6} {', '.join(r['images'])[:40]:40} {r['positions']:>5} {r['scored']:>6} "
              f"{r['mean_kl']:10.3e} {r['max_kl']:10.3e} {r['self_mean_kl']:10.3e} "
              f"{r['top1']:>4}/{r['scored']:<4} {r['confident_agree']:>4}/{r['confident']:<4}")
    if not rows:
        print("no prompt compared")
        return 1
    mean_kl, self_kl = float(np.mean(all_kl)), float(np.mean(all_self))
    bar = max(2 * self_kl, 0.01)
    ok = layout_ok and mean_kl <= bar and totals["confident_agree"] == totals["confident"]
    print(f"\nlayouts {'identical' if layout_ok else 'DIFFER'}; {totals['n']} positions after an image: "
          f"mean KL {mean_kl:.3e} (bar max(2 x {self_kl:.3e}, 0.01) = {bar:.3e}); top-1 "
          f"{totals['agree']}/{totals['n']}, where llama.cpp's top two are >= 0.5 nats apart "
          f"{totals['confident_agree']}/{totals['confident']}: {'PASS' if ok else 'FAIL'}")
    if args.json:
        Path(args.json).write_text(json.dumps({"projector": tag, "rows": rows, "mean_kl": mean_kl,
                                               "self_mean_kl": self_kl, "pass": ok}, indent=1) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
