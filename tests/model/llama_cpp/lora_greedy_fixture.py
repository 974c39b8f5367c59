#!/usr/bin/env python3
"""Expected greedy tokens for tests/e2e/test_lora_llama_cpp.py, from lora_oracle.py's --json
runs: per model, adapter and prompt, the prompt's ids and llama.cpp's greedy tokens up to the
first step where llama.cpp's top two log-probabilities are less than --margin nats apart (from
there on rounding may pick either token; before it, only an error can).

Usage: lora_greedy_fixture.py OUT.json --run MODEL RANK SEED ORACLE.json [--run ...]
       [--margin 0.5]
MODEL is `gemma3` (RADIXLM_DEFAULT_MODEL, gemma-3-270m Q4_K_M) or `smollm2` (RADIXLM_CHAT_MODEL,
SmolLM2-135M-Instruct Q4_1); RANK and SEED are the synth_lora.py adapter's (B std 0.03).
"""
import argparse
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--run", nargs=4, action="append", required=True,
                    metavar=("MODEL", "RANK", "SEED", "ORACLE_JSON"))
    ap.add_argument("--margin", type=float, default=0.5)
    a = ap.parse_args()
    cases, seen = [], set()
    for model, rank, seed, path in a.run:
        with open(path) as f:
            records = json.load(f)
        for r in records:
            n = next((j for j, g in enumerate(r["llama_gaps"]) if g < a.margin),
                     len(r["llama_gaps"]))
            # The base model's continuation (lora scale 0) is the same in every run of a model.
            key = (model, r["prompt"]) if not r["adapter"] else (model, rank, seed, r["prompt"])
            if n == 0 or key in seen:
                continue
            seen.add(key)
            cases.append({"model": model, "rank": int(rank), "seed": int(seed),
                          "adapter": r["adapter"], "prompt": r["prompt"], "ids": r["ids"],
                          "llama_tokens": r["llama_tokens"][:n]})
    with open(a.out, "w") as f:
        json.dump({"made_by": "tests/model/llama_cpp/lora_greedy_fixture.py from lora_oracle.py "
                   "--json runs of the peer llama-server (llama-cpp-python 0.3.36's llama.cpp); "
                   "commands in tests/model/llama_cpp/README.md, LoRA section",
                   "margin": a.margin, "b_std": 0.03, "cases": cases}, f, indent=1)
        f.write("\n")
    print(f"{a.out}: {len(cases)} cases, {sum(len(c['llama_tokens']) for c in cases)} tokens")


if __name__ == "__main__":
    main()
