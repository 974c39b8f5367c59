#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ (clang++-14, ASan + UBSan, RADIXLM_DCHECKs on) in their
# own build directory and runs each one for a bounded time, one per core at once, on a copy of its
# seed corpus (fuzz/corpus/<target>/) in a temporary directory: nothing is written into the
# repository. Exits non-zero when a target finds a crash, a sanitizer report, a timeout or an
# out-of-memory input, printing the reproducer and the command that replays it (the temporary
# directory is then kept).
# Env: RADIXLM_FUZZ_SECONDS (per target, default 45: 11 targets in under 5 minutes on 2 cores),
#      RADIXLM_FUZZ_TARGETS (space-separated subset, default all),
#      RADIXLM_FUZZ_BUILD_DIR (default build-fuzz), RADIXLM_FUZZ_JOBS (ninja -j),
#      RADIXLM_FUZZ_PARALLEL (targets run at once, default one per core),
#      RADIXLM_CLANGXX (default clang++-14).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cxx="${RADIXLM_CLANGXX:-clang++-14}"
if ! command -v "$cxx" >/dev/null; then
  echo "fuzz.sh: $cxx not found (scripts/setup.sh installs the clang-14 package)" >&2
  exit 1
fi
dir="${RADIXLM_FUZZ_BUILD_DIR:-build-fuzz}"
seconds="${RADIXLM_FUZZ_SECONDS:-45}"
all_targets=(fuzz_gguf fuzz_tokenizer_spm fuzz_tokenizer_bpe fuzz_precompiled_charsmap fuzz_regex
             fuzz_json_schema fuzz_ebnf fuzz_chat_template fuzz_http_request fuzz_json_request
             fuzz_image_decode)
# shellcheck disable=SC2206
targets=(${RADIXLM_FUZZ_TARGETS:-${all_targets[@]}})

export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/radixlm/ccache}"
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
if [ ! -f "$dir/build.ninja" ]; then
  # -g1: line tables for the sanitizers' stack traces, no variable info (a faster build).
  # -Wthread-safety: this tree also compiles every library with annotated locks, so
  # scripts/thread_safety.sh can run its analysis here (RADIXLM_TSA_BUILD_DIR) instead of
  # compiling them once more (scripts/test.sh does that).
  args=(-S . -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS="-Wthread-safety"
        -DRADIXLM_FUZZ=ON -DRADIXLM_DCHECK=ON -DRADIXLM_WERROR=ON -DRADIXLM_BUILD_TESTS=OFF)
  command -v ccache >/dev/null && args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake "${args[@]}" >/dev/null
fi
ninja -C "$dir" ${RADIXLM_FUZZ_JOBS:+-j "$RADIXLM_FUZZ_JOBS"} "${targets[@]}"

# Per-target input size bound: large enough for the seeds and their mutations, small enough
# that one input is cheap (the grammar compilers' own limits bound the rest).
max_len() {
  case "$1" in
    fuzz_gguf | fuzz_precompiled_charsmap) echo 8192 ;;
    fuzz_http_request | fuzz_json_request | fuzz_chat_template | fuzz_image_decode) echo 4096 ;;
    *) echo 1024 ;;
  esac
}

work="$(mktemp -d)"  # its path is printed when inputs are kept
keep=0
trap '[ "$keep" = 1 ] || rm -rf "$work"' EXIT
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# One in-process fuzzer per target (no -jobs: libFuzzer would fork and write fuzz-<n>.log in
# the cwd); up to RADIXLM_FUZZ_PARALLEL of them at once (default: one per core).
run_target() {
  local target="$1" corpus="$work/corpus/$1" artifacts="$work/artifacts/$1" rc=0
  "$dir/fuzz/$target" "$corpus" -max_total_time="$seconds" -max_len="$(max_len "$target")" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" >"$work/$target.log" 2>&1 || rc=$?
  echo "$rc" >"$work/$target.rc"
}
parallel="${RADIXLM_FUZZ_PARALLEL:-$(nproc)}"
running=0
for target in "${targets[@]}"; do
  mkdir -p "$work/corpus/$target" "$work/artifacts/$target"
  cp -r "fuzz/corpus/$target/." "$work/corpus/$target/"
  if ((running >= parallel)); then
    wait -n
    running=$((running - 1))
  fi
  run_target "$target" &
  running=$((running + 1))
done
wait
failed=()
for target in "${targets[@]}"; do
  corpus="$work/corpus/$target"
  artifacts="$work/artifacts/$target"
  log="$work/$target.log"
  rc="$(cat "$work/$target.rc")"
  echo "== $target (${seconds}s, $(find "fuzz/corpus/$target" -type f | wc -l) seeds) =="
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' \
    "$log" | tr '\n' ' ' || true
  echo
  if [ "$rc" != 0 ] || [ -n "$(ls -A "$artifacts")" ]; then
    keep=1
    failed+=("$target")
    echo "fuzz.sh: $target failed (exit $rc); the end of its log ($log):" >&2
    tail -n 60 "$log" >&2
    for reproducer in "$artifacts"/*; do
      [ -f "$reproducer" ] || continue
      echo "reproducer: $reproducer ($(stat -c %s "$reproducer") bytes); base64:" >&2
      base64 -w 100 "$reproducer" | head -n 40 >&2
      echo "replay: $dir/fuzz/$target $reproducer" >&2
    done
  fi
done
if ((${#failed[@]})); then
  echo "fuzz.sh: failures in ${failed[*]} (inputs and logs kept in $work)" >&2
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets, ${seconds}s each, no failures"
