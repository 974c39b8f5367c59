#!/usr/bin/env bash
# The README's main command: set everything up, then run radixlm on the default model.
# Extra arguments are passed to `radixlm generate` (e.g. --prompt "..." --max-new-tokens 64).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

echo "== radixlm inspect (model summary) =="
"$RADIXLM_BIN" inspect default | tail -n 3
echo
echo "== radixlm tokenize =="
"$RADIXLM_BIN" tokenize --model-path default "Hello, world! RadixAttention shares prefixes: 你好 🚀"
if "$RADIXLM_BIN" generate --help >/dev/null 2>&1; then
  echo
  echo "== radixlm generate (greedy) =="
  if [ $# -eq 0 ]; then
    set -- --prompt "The capital of France is" --max-new-tokens 32 --temperature 0
  fi
  "$RADIXLM_BIN" generate --model-path default "$@"
fi
