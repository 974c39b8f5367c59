// ServerConfig: the HTTP server's own settings (the engine's are in EngineConfig). Flag names
// follow SGLang's launch_server where it has them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace radixlm::server {

struct ServerConfig {
  std::string host = "127.0.0.1";  // --host
  int port = 30000;                // --port
  std::string api_key;             // --api-key; "" disables authentication
  std::string served_model_name;   // --served-model-name; "": ShortModelName(model path)
  int io_threads = 2;              // --io-threads: threads running sockets and handlers

  // --- limits on what one request may ask for ---
  size_t max_body_bytes = 16u << 20;  // larger bodies are 413
  size_t max_header_bytes = 64u << 10;
  int32_t max_batch_samples = 1024;  // prompts × n in one request
  int32_t max_new_tokens_cap = 0;    // > 0: a larger max_new_tokens is 400

  // --- streaming ---
  bool incremental_streaming_output = false;  // native streams send deltas, not cumulative text

  // --- connections ---
  int keep_alive_timeout_s = 75;  // idle keep-alive connections are closed after this
  int read_timeout_s = 60;        // a request's header and body must arrive within this

  std::string log_level = "info";  // debug | info | warning | error
};

}  // namespace radixlm::server
