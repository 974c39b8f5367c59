// ModelInfo: what the info routes (/get_model_info, /v1/models, /get_server_info) say about the
// loaded model, read once from the GGUF's metadata at startup.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "util/status.h"

namespace radixlm::server {

struct ModelInfo {
  std::string model_path;                  // the resolved GGUF path
  std::string served_model_name;           // the "model" the OpenAI routes report
  std::string arch;                        // general.architecture, e.g. "gemma3"
  std::string name;                        // general.name, or the file's stem
  std::string model_type;                  // the Hugging Face model_type, e.g. "gemma3_text"
  std::vector<std::string> architectures;  // e.g. {"Gemma3ForCausalLM"}
  std::string chat_template;               // tokenizer.chat_template, "" when the model has none
  int64_t file_bytes = 0;
  int64_t created_unix_s = 0;  // server start, for /v1/models

  // SGLang's /get_model_info object.
  nlohmann::json ToModelInfoJson() const;
};

// Reads the GGUF at `path` (already resolved). `served_model_name` "" means the path.
StatusOr<ModelInfo> LoadModelInfo(const std::string& path, const std::string& served_model_name);

}  // namespace radixlm::server
