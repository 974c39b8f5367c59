#!/usr/bin/env python3
"""Re-runs SGLang's client-side API test kits (sglang==0.5.23, `sglang.test.kits`) against real
`radixlm serve` processes on 127.0.0.1 and prints one line per test method: pass / FAIL / ERROR /
skip, its time, and the first line of its failure. The classes and the server flags each runs
under: tests/e2e/sglang_kit.py. A JSON record of every result goes to --output-file.

Usage: RADIXLM_BIN=build/apps/radixlm [RADIXLM_DEFAULT_MODEL=GGUF] \
       python bench/run_sglang_client_tests.py [--only TestMatchedStop,TestAbortAll]
       [-k test_name_substring] [--output-file tmp/sglang_kit.json] [--list]
"""
import argparse
import io
import json
import pathlib
import platform
import subprocess
import sys
import time
import traceback
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

import sglang_kit  # noqa: E402


class RecordingResult(unittest.TextTestResult):
    """Keeps (test id, outcome, seconds, detail) for every test, printed as it finishes."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.records = []
        self._start = {}

    def startTest(self, test):
        self._start[test.id()] = time.time()
        super().startTest(test)

    def _record(self, test, outcome, detail="", err=None):
        seconds = time.time() - self._start.get(test.id(), time.time())
        first = f"{err[0].__name__}: {err[1]}".replace("\n", " ") if err else detail
        self.records.append({"test": test.id().split(".", 1)[-1], "outcome": outcome,
                             "seconds": round(seconds, 1), "detail": detail})
        print(f"{outcome:5} {seconds:7.1f}s  {test.id().split('.', 1)[-1]}  {first[:200]}",
              file=sys.__stdout__, flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._record(test, "pass")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._record(test, "FAIL", self._exc_info_to_string(err, test), err)

    def addError(self, test, err):
        super().addError(test, err)
        # A class set-up error arrives as an _ErrorHolder, not a test.
        if not hasattr(test, "_testMethodName"):
            detail = "".join(traceback.format_exception(*err))
            self.records.append({"test": str(test), "outcome": "ERROR", "seconds": 0,
                                 "detail": detail})
            print(f"ERROR {str(test)}  {detail.strip().splitlines()[-1][:200]}",
                  file=sys.__stdout__, flush=True)
            return
        self._record(test, "ERROR", self._exc_info_to_string(err, test), err)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._record(test, "skip", reason)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="", help="comma-separated class names")
    ap.add_argument("-k", default="", help="run only test methods whose name contains this")
    ap.add_argument("--output-file", default=str(ROOT / "tmp" / "sglang_kit.json"))
    ap.add_argument("--list", action="store_true", help="list the test methods and exit")
    args = ap.parse_args()

    classes = sglang_kit.kit_classes()
    wanted = [c for c in args.only.split(",") if c]
    unknown = [c for c in wanted if c not in classes]
    if unknown:
        ap.error(f"unknown classes {unknown}; known: {list(classes)}")
    loader = unittest.TestLoader()
    if args.k:
        loader.testNamePatterns = [f"*{args.k}*"]
    suite = unittest.TestSuite()
    for name, cls in classes.items():
        if not wanted or name in wanted:
            suite.addTests(loader.loadTestsFromTestCase(cls))
    if args.list:
        for test in suite:
            print(test.id().split(".", 1)[-1])
        return 0

    import sglang.version

    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    print(f"sglang {sglang.version.__version__}, checkout {commit}, "
          f"binary {sglang_kit.radixlm_binary()}, python {platform.python_version()}",
          flush=True)
    started = time.time()
    # The kits print their responses: buffered per test, kept in a failure's detail only.
    runner = unittest.TextTestRunner(stream=io.StringIO(), resultclass=RecordingResult,
                                     verbosity=0, buffer=True)
    result = runner.run(suite)
    elapsed = time.time() - started
    counts = {}
    for r in result.records:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    print(f"\n{counts} in {elapsed:.0f} s", flush=True)
    out = pathlib.Path(args.output_file)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"sglang": sglang.version.__version__, "commit": commit,
                               "seconds": round(elapsed), "counts": counts,
                               "results": result.records}, indent=1))
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
