#!/usr/bin/env python3
"""Build llama.cpp (from llama-cpp-python's PyPI source distribution) as a peer to benchmark.

Nothing of llama.cpp is kept in this repository: this script downloads the sdist with pip,
unpacks it into a cache folder outside the repository and builds only the tools the
comparison needs (llama-bench, llama-batched-bench, llama-server, and llama-quantize for
bench/synth_models.py) with cmake.

Cache folder: $RADIXLM_PEER_CACHE, else ~/.cache/radixlm/llama-peer/<version>. A stamp file
(.built) records a finished build and its targets; later calls reuse it when every target's
binary is there (a build from before a target was added builds the missing one).

    python bench/llama_peer.py                 # download + build (or reuse), print tool paths
    python bench/llama_peer.py --version 0.3.36 --jobs 2
    python bench/llama_peer.py --variant avx2  # a second build: AVX2+FMA+F16C only (no AVX-512,
                                               # no VNNI), llama.cpp as an AVX2-only CPU runs it

As a module:

    import llama_peer
    tools = llama_peer.ensure()                # {"llama-bench": Path, ...}
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

DEFAULT_VERSION = "0.3.36"
PACKAGE = "llama-cpp-python"
TARGETS = ("llama-bench", "llama-batched-bench", "llama-server", "llama-quantize")
STAMP = ".built"
# Build variants: "native" (-march=native; AMX off, see cmake_options) and "avx2" (ggml's
# AVX2 code only, whatever this CPU has beyond it).
VARIANTS = ("native", "avx2")
AVX2_ONLY = ["-DGGML_NATIVE=OFF", "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON",
             "-DGGML_F16C=ON", "-DGGML_BMI2=ON", "-DGGML_AVX_VNNI=OFF", "-DGGML_AVX512=OFF",
             "-DGGML_AVX512_VBMI=OFF", "-DGGML_AVX512_VNNI=OFF", "-DGGML_AVX512_BF16=OFF",
             "-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF", "-DGGML_AMX_BF16=OFF"]


def build_name(variant: str) -> str:
    return "build" if variant == "native" else f"build-{variant}"


def log(msg: str) -> None:
    print(f"[llama-peer] {msg}", flush=True)


def repo_root() -> Path:
    return Path(__file__).resolve().parent.parent


def cache_dir(version: str) -> Path:
    env = os.environ.get("RADIXLM_PEER_CACHE")
    base = Path(env).expanduser() if env else Path.home() / ".cache" / "radixlm" / "llama-peer" / version
    base = base.resolve()
    try:
        base.relative_to(repo_root())
    except ValueError:
        return base
    raise SystemExit(f"peer cache {base} lies inside the repository; choose a folder outside it")


def _pip_download(version: str, dest: Path) -> Path | None:
    # --no-binary for this package only: with ":all:" pip also builds the sdist's build
    # backend (scikit-build-core, hatchling, ...) from source to read its metadata, and that
    # bootstrap did not finish in 10 minutes on a fresh machine.
    cmd = [sys.executable, "-m", "pip", "download", "--no-binary", PACKAGE, "--no-deps",
           f"{PACKAGE}=={version}" if version else PACKAGE, "-d", str(dest)]
    log("running: " + " ".join(cmd))
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        tail = "\n".join(r.stdout.strip().splitlines()[-5:])
        log(f"pip download failed ({r.returncode}):\n{tail}")
        return None
    found = sorted(dest.glob("llama_cpp_python-*.tar.gz")) + sorted(dest.glob("llama-cpp-python-*.tar.gz"))
    return found[-1] if found else None


def _sdist_version(path: Path) -> str:
    m = re.search(r"llama[_-]cpp[_-]python-(.+)\.tar\.gz$", path.name)
    return m.group(1) if m else "unknown"


def download(version: str, work: Path) -> tuple[Path, str]:
    """Fetch the sdist of `version` (or, if unavailable, the newest one). Returns (tarball, version)."""
    work.mkdir(parents=True, exist_ok=True)
    existing = sorted(work.glob(f"llama_cpp_python-{version}.tar.gz"))
    if existing:
        log(f"sdist already downloaded: {existing[0]}")
        return existing[0], version
    tar = _pip_download(version, work)
    if tar is not None:
        return tar, _sdist_version(tar)
    log(f"{PACKAGE}=={version} is not available; trying the newest version")
    tar = _pip_download("", work)
    if tar is None:
        raise SystemExit(f"could not download any source distribution of {PACKAGE}")
    got = _sdist_version(tar)
    log(f"using {PACKAGE} {got} instead of {version}")
    return tar, got


def unpack(tar: Path, dest: Path) -> Path:
    """Unpack into dest/src; returns the llama.cpp tree (vendor/llama.cpp)."""
    src = dest / "src"
    marker = src / ".unpacked"
    if not marker.exists():
        if src.exists():
            shutil.rmtree(src)
        log(f"unpacking {tar.name} into {src}")
        tmp = Path(tempfile.mkdtemp(dir=dest))
        with tarfile.open(tar) as tf:
            try:
                tf.extractall(tmp, filter="data")
            except TypeError:  # Python < 3.11.4
                tf.extractall(tmp)
        (top,) = [p for p in tmp.iterdir() if p.is_dir()]
        top.rename(src)
        shutil.rmtree(tmp, ignore_errors=True)
        marker.write_text(tar.name + "\n")
    llama = src / "vendor" / "llama.cpp"
    if not (llama / "CMakeLists.txt").exists():
        raise SystemExit(f"{llama} has no CMakeLists.txt; the sdist layout changed")
    return llama


def _ensure_system_tools() -> None:
    need = {"cmake": "cmake", "g++": "g++", "ninja": "ninja-build"}
    missing = [pkg for tool, pkg in need.items() if shutil.which(tool) is None]
    if not missing:
        return
    log("installing missing system packages: " + " ".join(missing))
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.run(sudo + ["apt-get", "update"], check=True)
    subprocess.run(sudo + ["apt-get", "install", "-y", "--no-install-recommends", *missing], check=True)


def _cmake_targets(build: Path) -> set[str]:
    r = subprocess.run(["cmake", "--build", str(build), "--target", "help"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    names = set()
    for line in r.stdout.splitlines():
        m = re.match(r"\s*(?:\.\.\.\s*)?([A-Za-z0-9_.+-]+)(?::|\s|$)", line)
        if m:
            names.add(m.group(1))
    return names


def tool_paths(dest: Path, variant: str = "native") -> dict[str, Path]:
    bindir = dest / build_name(variant) / "bin"
    return {t: bindir / t for t in TARGETS}


def _cpu_has_amx() -> bool:
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " amx_tile" in line for line in f)
    except OSError:
        return False


def cmake_options(allow_amx: bool = False, variant: str = "native") -> list[str]:
    """The -D options of the build (recorded in the stamp: a change means a rebuild)."""
    if variant == "avx2":
        return list(AVX2_ONLY)
    opts = []
    if _cpu_has_amx() and not allow_amx:
        # GGML_NATIVE's -march=native turns on ggml's AMX matmul on AMX CPUs. On this project's
        # VM that path dies with SIGILL (tilezero in a worker thread), and radixlm has no AMX
        # kernels either, so the peer is built with AMX off and every other native ISA on.
        no_amx = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
        opts += [f"-DCMAKE_C_FLAGS={no_amx}", f"-DCMAKE_CXX_FLAGS={no_amx}"]
    return opts


def build(llama: Path, dest: Path, jobs: int, extra: list[str],
          variant: str = "native") -> dict[str, Path]:
    _ensure_system_tools()
    bdir = dest / build_name(variant)
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    if extra:
        log("extra cmake options: " + " ".join(extra))
    cfg = ["cmake", "-S", str(llama), "-B", str(bdir), *gen, *extra,
           "-DCMAKE_BUILD_TYPE=Release",
           *(["-DGGML_NATIVE=ON"] if variant == "native" else []),
           "-DLLAMA_CURL=OFF",
           "-DBUILD_SHARED_LIBS=OFF",
           "-DLLAMA_BUILD_TESTS=OFF",
           "-DLLAMA_BUILD_EXAMPLES=OFF",
           "-DLLAMA_BUILD_TOOLS=ON",      # llama-bench / llama-server live under tools/ in newer ones
           "-DLLAMA_BUILD_SERVER=ON",
           "-DGGML_BUILD_TESTS=OFF",
           "-DGGML_BUILD_EXAMPLES=OFF"]
    log("configuring: " + " ".join(cfg))
    subprocess.run(cfg, check=True)
    known = _cmake_targets(bdir)
    missing = [t for t in TARGETS if known and t not in known]
    if missing:
        raise SystemExit(f"targets not found in this llama.cpp tree: {missing}")
    cmd = ["cmake", "--build", str(bdir), "-j", str(jobs), "--target", *TARGETS]
    log("building: " + " ".join(cmd))
    subprocess.run(cmd, check=True)
    tools = tool_paths(dest, variant)
    for name, path in tools.items():
        if not path.exists():
            raise SystemExit(f"build finished but {path} is missing")
    return tools


def ensure(version: str = DEFAULT_VERSION, jobs: int = 2, rebuild: bool = False,
           allow_amx: bool = False, variant: str = "native") -> dict[str, Path]:
    """Download, unpack and build once; return {target: binary path}."""
    if variant not in VARIANTS:
        raise SystemExit(f"unknown build variant {variant!r}; one of {VARIANTS}")
    dest = cache_dir(version)
    dest.mkdir(parents=True, exist_ok=True)
    stamp = dest / (STAMP if variant == "native" else f"{STAMP}-{variant}")
    extra = cmake_options(allow_amx, variant)
    if stamp.exists() and not rebuild:
        tools = tool_paths(dest, variant)
        info = json.loads(stamp.read_text())
        complete = (all(p.exists() for p in tools.values())
                    and set(info.get("targets", [])) >= set(TARGETS))
        if complete and info.get("cmake_extra", []) == extra:
            log(f"reusing build of {PACKAGE} {info.get('version')} in {dest}")
            return tools
        log("build options changed (or targets missing): building again")
    tar, got = download(version, dest / "sdist")
    llama = unpack(tar, dest)
    tools = build(llama, dest, jobs, extra, variant)
    stamp.write_text(json.dumps({"package": PACKAGE, "version": got, "sdist": tar.name,
                                 "targets": list(TARGETS), "cmake_extra": extra}) + "\n")
    log(f"built {PACKAGE} {got}'s llama.cpp in {dest / build_name(variant)}")
    return tools


def gguf_py_dir(version: str = DEFAULT_VERSION) -> Path:
    """The gguf-py package of the unpacked llama.cpp tree (ensure() unpacks it): the Python
    GGUF reader/writer of the same llama.cpp version as the tools."""
    return cache_dir(version) / "src" / "vendor" / "llama.cpp" / "gguf-py"


def peer_version(version: str = DEFAULT_VERSION) -> str:
    stamp = cache_dir(version) / STAMP
    if stamp.exists():
        return json.loads(stamp.read_text()).get("version", version)
    return version


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", default=DEFAULT_VERSION, help=f"{PACKAGE} version (default {DEFAULT_VERSION})")
    ap.add_argument("--jobs", "-j", type=int, default=2, help="parallel build jobs (default 2)")
    ap.add_argument("--rebuild", action="store_true", help="ignore the stamp file and build again")
    ap.add_argument("--allow-amx", action="store_true",
                    help="keep ggml's AMX kernels on AMX CPUs (off by default, see cmake_options)")
    ap.add_argument("--variant", choices=VARIANTS, default="native",
                    help="native: -march=native (default); avx2: ggml's AVX2 code only")
    args = ap.parse_args()
    tools = ensure(args.version, args.jobs, args.rebuild, args.allow_amx, args.variant)
    for name, path in tools.items():
        print(f"{name}\t{path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
