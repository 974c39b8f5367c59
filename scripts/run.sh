#!/usr/bin/env bash
# The README's main command: set everything up, then serve the default model on
# http://127.0.0.1:30000 (SGLang's native API and OpenAI's). Once the server is healthy it
# prints a curl example and answers it once; the server then runs until Ctrl-C / SIGTERM.
# Extra arguments go to `radixlm serve` (e.g. --port 8080 --api-key KEY).
set -euo pipefail
# Serving needs only the radixlm binary and the model package; the test command builds tests
# and benchmarks and installs the test clients.
export RADIXLM_NINJA_TARGETS="${RADIXLM_NINJA_TARGETS:-radixlm}"
export RADIXLM_SERVE_ONLY="${RADIXLM_SERVE_ONLY:-1}"
. "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

port=30000
port_flag=(--port "$port")
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  if [ "${args[$i]}" = "--port" ] && [ $((i + 1)) -lt ${#args[@]} ]; then
    port="${args[$((i + 1))]}"
    port_flag=()
  fi
done
url="http://127.0.0.1:${port}"

"$RADIXLM_BIN" serve --model-path default --host 127.0.0.1 "${port_flag[@]}" "$@" &
server=$!
trap 'kill -TERM "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' INT TERM EXIT
echo "[run] started radixlm serve (pid $server); waiting for $url/health while it loads" >&2

started=$SECONDS
for _ in $(seq 1 600); do
  if curl -sf "$url/health" >/dev/null 2>&1; then
    echo "[run] healthy after $((SECONDS - started)) s" >&2
    break
  fi
  if ! kill -0 "$server" 2>/dev/null; then
    echo "radixlm serve exited before becoming healthy" >&2
    exit 1
  fi
  sleep 0.5
done

example="curl -s $url/generate -H 'Content-Type: application/json' \\
  -d '{\"text\": \"The capital of France is\", \"sampling_params\": {\"max_new_tokens\": 16, \"temperature\": 0}}'"
echo
echo "== radixlm is serving the default model at $url =="
echo "Try it (SGLang native API; OpenAI's is under $url/v1):"
echo
echo "$example"
echo
if ! grep -q -- "--api-key" <<<"$*"; then
  eval "$example"
  echo
fi
echo
echo "Press Ctrl-C to stop the server."
wait "$server"
