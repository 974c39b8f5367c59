// ServerConfig: the HTTP server's own settings (the engine's are in EngineConfig). Flag names
// follow SGLang's launch_server where it has them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <string>

#include "engine/api.h"
#include "util/status.h"

namespace radixlm::server {

// A PD server's KV transfer totals since start: records a prefill server sent or a decode server
// received, their bytes, and the seconds the transfers took (bytes / seconds: the bandwidth).
struct KvTransferTotals {
  int64_t transfers = 0;
  int64_t bytes = 0;
  double seconds = 0;
};

struct ServerConfig {
  std::string host = "127.0.0.1";  // --host
  int port = 30000;                // --port
  std::string api_key;             // --api-key; "" disables authentication
  std::string served_model_name;   // --served-model-name; "": ShortModelName(model path)
  int io_threads = 2;              // --io-threads: threads running sockets and handlers
  // /v1/chat/completions: values for the sampling fields a request leaves unset, as SGLang
  // applies generation_config.json's (ModelInfo::sampling_defaults; set by `radixlm serve`).
  std::map<std::string, double> chat_sampling_defaults;

  // --- the web page and the radix-tree routes ---
  bool disable_web_ui = false;  // --disable-web-ui: no page at / (the /radix_tree routes stay)
  int radix_tree_event_interval_ms = 200;  // /radix_tree/events: at most one event per this

  // --- prefill/decode disaggregation (docs/disaggregation.md, server/bootstrap_fields.h) ---
  std::string disaggregation_mode = "null";  // "null" | "prefill" | "decode"
  // Decode servers: starts fetching the prefix KV of `room` from the prefill server's KV
  // sender at host:port; the future ends with the KV or the transfer's error, never later than
  // the transfer timeout. Set by `radixlm serve --disaggregation-mode decode`.
  std::function<std::shared_future<StatusOr<PrefixKv>>(const std::string& host, int port,
                                                       uint64_t room)>
      fetch_prefix_kv;
  // Prefill and decode servers: their KV transfer totals, for /metrics (unset: not reported).
  std::function<KvTransferTotals()> kv_transfer_totals;

  // --- limits on what one request may ask for ---
  size_t max_body_bytes = 16u << 20;  // larger bodies are 413
  size_t max_header_bytes = 64u << 10;
  int32_t max_batch_samples = 1024;  // prompts × n in one request
  int32_t max_new_tokens_cap = 0;    // > 0: a larger max_new_tokens is 400

  // --- images (a model with --mmproj; server/image_input.h) ---
  // --allowed-local-media-path: image paths and file:// URLs are read only under this folder;
  // "": none are read.
  std::string allowed_local_media_path;
  int64_t max_image_bytes = 20 << 20;  // an image file (or download) larger than this is 400
  double image_fetch_timeout_s = 10;   // an http:// image taking longer is 400

  // --- streaming ---
  bool incremental_streaming_output = false;  // native streams send deltas, not cumulative text

  // --- connections ---
  int keep_alive_timeout_s = 75;  // idle keep-alive connections are closed after this
  int read_timeout_s = 60;        // a request's body must arrive within this of its header
  int write_timeout_s = 60;       // one write of queued response bytes must finish within this
  // A stream whose client reads slower than it is produced is aborted (and its connection
  // closed) once this many bytes wait to be written.
  size_t max_stream_buffer_bytes = 4u << 20;

  // --- shutdown ---
  // SIGTERM / SIGINT: in-flight requests get this long to finish (new ones are 503) before
  // the rest are aborted. A second signal aborts them at once.
  int graceful_shutdown_timeout_s = 20;

  std::string log_level = "info";  // debug | info | warning | error

  // --- chat output parsing ---
  // --tool-call-parser: qwen25 (hermes), llama3, mistral, granite, phi4_mini, glm4, gemma4 or
  // json;
  // "": detected from the chat template's tool syntax (chat/tool_call_parser.h).
  std::string tool_call_parser;
  // --reasoning-parser: deepseek-r1, qwen3 (glm45), mistral, gemma4 or granite; "": all
  // content.
  std::string reasoning_parser;
};

}  // namespace radixlm::server
