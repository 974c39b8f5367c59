// ModelAssets: what a loaded model brings besides its weights — the tokenizer (behind the
// TokenTextCodec interface), the chat template renderer and the model's metadata — read once,
// from the GGUF the engine loads, and shared (read-only) by the engine, the HTTP server and the
// frontend language through Engine::assets(). Nothing else opens the model file for them.
//
// Thread-safety: immutable after creation; every method may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chat/chat_renderer.h"
#include "tokenizer/text_codec.h"
#include "util/status.h"

namespace radixlm {

namespace gguf {
class GgufFile;
}  // namespace gguf

// The model's identity, as the info routes (/get_model_info, /v1/models, /get_server_info)
// report it.
struct ModelInfo {
  std::string model_path;                  // the resolved GGUF path
  std::string arch;                        // general.architecture, e.g. "gemma3"
  std::string name;                        // general.name, or the file's stem
  std::string model_type;                  // the Hugging Face model_type, e.g. "gemma3_text"
  std::vector<std::string> architectures;  // e.g. {"Gemma3ForCausalLM"}
  std::string chat_template;               // tokenizer.chat_template, "" when the model has none
  int64_t file_bytes = 0;
  // Mixture of experts: experts per layer and per token (0 for a dense model); parameters in
  // all and those a token reads (model::ModelConfig; 0 when the file's config does not load).
  int64_t n_experts = 0;
  int64_t n_experts_used = 0;
  int64_t total_parameters = 0;
  int64_t active_parameters = 0;
  // Sampling defaults of the model (general.sampling.temp / top_k / top_p / min_p /
  // penalty_repeat: a Hugging Face folder's generation_config.json, hf/hf_folder.h) under
  // their SamplingParams names (temperature, top_k, top_p, min_p, repetition_penalty).
  std::map<std::string, double> sampling_defaults;
  int64_t hidden_size = 0;  // the width of the hidden states (an embedding model's vectors)
};

// The metadata of an open GGUF at `path`.
StatusOr<ModelInfo> ReadModelInfo(const gguf::GgufFile& file, const std::string& path);

class ModelAssets {
 public:
  // The tokenizer, metadata and chat template of an open GGUF. Fails if the tokenizer does not
  // load; a missing or broken chat template only disables chat (chat_status says why).
  static StatusOr<std::unique_ptr<ModelAssets>> FromGguf(const gguf::GgufFile& file,
                                                         const std::string& path);
  // From parts (tests, fake models); the chat renderer comes from info as in FromGguf.
  static std::unique_ptr<ModelAssets> FromParts(std::unique_ptr<TokenTextCodec> codec,
                                                ModelInfo info);

  const TokenTextCodec& codec() const { return *codec_; }
  const ModelInfo& info() const { return info_; }
  // The chat template renderer; null when the model has none usable, chat_status() says why.
  const chat::ChatRenderer* chat() const { return chat_.has_value() ? &*chat_ : nullptr; }
  const Status& chat_status() const { return chat_status_; }

 private:
  ModelAssets(std::unique_ptr<TokenTextCodec> codec, ModelInfo info);

  std::unique_ptr<TokenTextCodec> codec_;
  ModelInfo info_;
  std::optional<chat::ChatRenderer> chat_;
  Status chat_status_;
};

}  // namespace radixlm
