"""Time to encode one image and serve an answer: `radixlm serve --mmproj` vs llama-server
`--mmproj` on the same model and projector files, same threads, one machine.

Each round sends one streamed OpenAI chat request to each server in turn (alternating which goes
first): a user message with one image (a fresh picture every round, so neither server's image or
prompt cache can answer it) and a short question, `max_tokens` tokens with ignore_eos at
temperature 0. Reported per server: time to first token (decode of the image file, encode,
prefill), time per output token after it, and the whole request; the ratio is llama-server's time
over radixlm's (above 1: radixlm faster).

  python bench/image_serve_time.py --build build \
      --mmproj ~/.cache/radixlm/vision-oracle/gemma3_L27_w1152_f4304_h16_i896_p14_s4_o640.gguf

The default projector is bench/vision_oracle.py's synthetic one of Gemma 3's real vision shape
(SigLIP: 27 layers, width 1152, 896x896 input, 256 tokens per image) projecting to the default
model's width; vision_oracle.py writes it (run it once) into its cache folder.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import llama_peer  # noqa: E402
import vision_oracle  # noqa: E402
from bench_server import LlamaServer, Server  # noqa: E402

DEFAULT_PROJECTOR = "gemma3_L27_w1152_f4304_h16_i896_p14_s4_o640.gguf"


def log(msg: str) -> None:
    print(f"[image-serve-time] {msg}", flush=True)


def chat_once(url: str, image: bytes, max_tokens: int, timeout: float) -> dict:
    """One streamed chat request with one PNG: TTFT, TPOT, total and token counts."""
    data_url = "data:image/png;base64," + base64.b64encode(image).decode()
    body = {"model": "default", "temperature": 0, "max_tokens": max_tokens, "ignore_eos": True,
            "stream": True, "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": data_url}},
                {"type": "text", "text": "Describe this picture in detail."}]}]}
    req = urllib.request.Request(url + "/v1/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    stamps, usage = [], {}
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=timeout) as r:
        for raw in r:
            line = raw.decode("utf-8", "replace").strip()
            if not line.startswith("data:"):
                continue
            payload = line[5:].strip()
            if payload == "[DONE]":
                break
            ev = json.loads(payload)
            if ev.get("error"):
                raise RuntimeError(f"stream error: {ev['error']}")
            usage = ev.get("usage") or usage
            if any((c.get("delta") or {}).get("content") for c in ev.get("choices") or []):
                stamps.append(time.perf_counter())
    end = time.perf_counter()
    if not stamps:
        raise RuntimeError("the stream carried no text")
    generated = usage.get("completion_tokens") or len(stamps)
    return {"ttft_s": stamps[0] - t0, "tpot_s": (stamps[-1] - stamps[0]) / max(1, generated - 1),
            "total_s": end - t0, "completion_tokens": generated,
            "prompt_tokens": usage.get("prompt_tokens")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="radixlm build folder (apps/radixlm)")
    ap.add_argument("--model", default=os.environ.get("RADIXLM_DEFAULT_MODEL",
                                                      str(vision_oracle.DEFAULT_TEXT_MODEL)))
    ap.add_argument("--mmproj", default=str(vision_oracle.cache() / DEFAULT_PROJECTOR))
    ap.add_argument("--peer-version", default=llama_peer.DEFAULT_VERSION)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--image-size", type=int, default=896, help="square picture's side")
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--timeout-s", type=float, default=1800)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()

    if not Path(args.mmproj).exists():
        raise SystemExit(f"{args.mmproj} does not exist: bench/vision_oracle.py writes it")
    tools = llama_peer.ensure(args.peer_version)
    work = Path(tempfile.mkdtemp(prefix="image-serve-time-"))
    images = []
    for i in range(args.rounds + 1):  # the first is the warm-up
        p = work / f"picture_{i}.png"
        vision_oracle.write_png(p, vision_oracle.picture(args.image_size, args.image_size, 100 + i))
        images.append(p.read_bytes())

    binary = Path(args.build) / "apps" / "radixlm"
    threads = str(args.threads)
    ours = Server(binary, args.model, ["--mmproj", args.mmproj, "--threads", threads,
                                       "--max-running-requests", "1"], start_timeout=600)
    peer = None
    try:
        peer = LlamaServer(tools["llama-server"], args.model,
                           ["--mmproj", args.mmproj, "-t", threads, "-tb", threads, "-np", "1",
                            "-c", "4096", "--no-webui"], start_timeout=600)
        servers = {"radixlm": ours.url, "llama-server": peer.url}
        for name, url in servers.items():
            log(f"warm-up {name}")
            chat_once(url, images[0], 8, args.timeout_s)
        runs = {name: [] for name in servers}
        for r in range(args.rounds):
            order = list(servers) if r % 2 == 0 else list(reversed(servers))
            for name in order:
                m = chat_once(servers[name], images[r + 1], args.max_tokens, args.timeout_s)
                runs[name].append(m)
                log(f"round {r + 1} {name}: TTFT {m['ttft_s']:.2f} s, TPOT "
                    f"{m['tpot_s'] * 1e3:.1f} ms, total {m['total_s']:.2f} s "
                    f"({m['prompt_tokens']} prompt, {m['completion_tokens']} generated)")
    finally:
        ours.stop()
        if peer:
            peer.stop()

    med = {n: {k: statistics.median(m[k] for m in v) for k in ("ttft_s", "tpot_s", "total_s")}
           for n, v in runs.items()}
    flags = " ".join(sorted(vision_oracle_flags()))
    print(f"\nCPU: {platform.processor() or platform.machine()}, flags {flags}; "
          f"threads {args.threads}; {args.rounds} rounds (medians)")
    print("| measure | radixlm | llama-server | ratio |\n|---|---|---|---|")
    for key, label, unit in (("ttft_s", "image encode + prefill (TTFT)", "s"),
                             ("tpot_s", "time per output token", "ms"),
                             ("total_s", f"whole request ({args.max_tokens} tokens)", "s")):
        a, b = med["radixlm"][key], med["llama-server"][key]
        scale = 1e3 if unit == "ms" else 1
        print(f"| {label} | {a * scale:.2f} {unit} | {b * scale:.2f} {unit} | {b / a:.2f}x |")
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": runs, "median": med}, indent=1))
    return 0


def vision_oracle_flags() -> set[str]:
    want = ("avx2", "avx512", "avx_vnni", "amx", "fma", "f16c")
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return {x for x in line.split()[2:] if x.startswith(want)}
    return set()


if __name__ == "__main__":
    sys.exit(main())
