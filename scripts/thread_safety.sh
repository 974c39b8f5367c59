#!/usr/bin/env bash
# Clang's thread-safety analysis over the libraries whose locks are annotated (util/mutex.h,
# GUARDED_BY and friends): radixlm_util, radixlm_grammar, radixlm_spec, radixlm_engine,
# radixlm_server and radixlm_vision, built with clang++-14, -Wthread-safety and -Werror (with
# the project's other warnings). Compile only: these static libraries are the only targets
# built, unoptimized, and nothing is run.
# Env: RADIXLM_TSA_BUILD_DIR (default build-tsa; an existing tree is used as it is, and must
#      have been configured with clang and -Wthread-safety, as scripts/fuzz.sh's build-fuzz is),
#      RADIXLM_CLANGXX (default clang++-14).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cxx="${RADIXLM_CLANGXX:-clang++-14}"
if ! command -v "$cxx" >/dev/null; then
  echo "thread_safety.sh: $cxx not found (scripts/setup.sh installs the clang-14 package)" >&2
  exit 1
fi
dir="${RADIXLM_TSA_BUILD_DIR:-build-tsa}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/radixlm/ccache}"
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
if [ ! -f "$dir/build.ninja" ]; then
  args=(-S . -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release
        -DCMAKE_CXX_FLAGS_RELEASE="-O0 -DNDEBUG" -DCMAKE_CXX_FLAGS="-Wthread-safety"
        -DRADIXLM_WERROR=ON -DRADIXLM_BUILD_TESTS=OFF
        -DCMAKE_OPTIMIZE_DEPENDENCIES=ON)
  command -v ccache >/dev/null && args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake "${args[@]}" >/dev/null
elif ! grep -q '^CMAKE_CXX_FLAGS:STRING=.*-Wthread-safety' "$dir/CMakeCache.txt" ||
     ! grep -q '^CMAKE_CXX_COMPILER:.*clang' "$dir/CMakeCache.txt"; then
  echo "thread_safety.sh: $dir was not configured with clang and -Wthread-safety" >&2
  exit 1
fi
# The analysis must still reject a guarded write without the lock (so annotations that expanded
# to nothing, or flags that dropped the warning, cannot pass silently).
probe="$(mktemp --suffix=.cc)"
trap 'rm -f "$probe"' EXIT
cat >"$probe" <<'CC'
#include "util/mutex.h"
struct Probe {
  radixlm::Mutex mu;
  int n GUARDED_BY(mu) = 0;
  void WriteWithoutLock() { n = 1; }
};
CC
if "$cxx" -std=c++20 -Isrc -Wthread-safety -Werror -fsyntax-only "$probe" 2>/dev/null; then
  echo "thread_safety.sh: an unguarded write compiled: the analysis is not running" >&2
  exit 1
fi

libs=(radixlm_util radixlm_grammar radixlm_spec radixlm_engine radixlm_server radixlm_vision)
ninja -C "$dir" ${RADIXLM_TSA_JOBS:+-j "$RADIXLM_TSA_JOBS"} "${libs[@]}"
echo "thread-safety analysis clean: ${libs[*]}"
