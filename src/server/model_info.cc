#include "server/model_info.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "gguf/gguf_file.h"

namespace radixlm::server {
namespace {

struct HfNames {
  const char* arch;
  const char* model_type;
  const char* architecture;
};
constexpr HfNames kHfNames[] = {
    {"gemma3", "gemma3_text", "Gemma3ForCausalLM"}, {"gemma2", "gemma2", "Gemma2ForCausalLM"},
    {"llama", "llama", "LlamaForCausalLM"},         {"qwen2", "qwen2", "Qwen2ForCausalLM"},
    {"qwen3", "qwen3", "Qwen3ForCausalLM"},         {"mistral", "mistral", "MistralForCausalLM"},
};

std::string FileStem(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(0, dot);
}

}  // namespace

nlohmann::json ModelInfo::ToModelInfoJson() const {
  return nlohmann::json{
      {"model_path", model_path},
      {"tokenizer_path", model_path},
      {"is_generation", true},
      {"preferred_sampling_params", nullptr},
      {"weight_version", "default"},
      {"has_image_understanding", false},
      {"has_audio_understanding", false},
      {"model_type", model_type},
      {"architectures", architectures},
      {"served_model_name", served_model_name},
  };
}

StatusOr<ModelInfo> LoadModelInfo(const std::string& path, const std::string& served_model_name) {
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::Open(path));
  ModelInfo info;
  info.model_path = path;
  info.served_model_name = served_model_name.empty() ? path : served_model_name;
  RADIXLM_ASSIGN_OR_RETURN(info.arch, file->GetStringOr("general.architecture", "unknown"));
  RADIXLM_ASSIGN_OR_RETURN(info.name, file->GetStringOr("general.name", FileStem(path)));
  RADIXLM_ASSIGN_OR_RETURN(info.chat_template, file->GetStringOr("tokenizer.chat_template", ""));
  info.model_type = info.arch;
  for (const HfNames& names : kHfNames) {
    if (info.arch == names.arch) {
      info.model_type = names.model_type;
      info.architectures = {names.architecture};
    }
  }
  info.file_bytes = static_cast<int64_t>(file->file_size());
  info.created_unix_s = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  return info;
}

}  // namespace radixlm::server
