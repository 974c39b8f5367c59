#include "engine/model_assets.h"

#include "gguf/gguf_file.h"
#include "model/model_config.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_codec.h"

namespace radixlm {
namespace {

struct HfNames {
  const char* arch;
  const char* model_type;
  const char* architecture;
};
constexpr HfNames kHfNames[] = {
    {"gemma3", "gemma3_text", "Gemma3ForCausalLM"},   {"gemma2", "gemma2", "Gemma2ForCausalLM"},
    {"llama", "llama", "LlamaForCausalLM"},           {"qwen2", "qwen2", "Qwen2ForCausalLM"},
    {"qwen3", "qwen3", "Qwen3ForCausalLM"},           {"mistral", "mistral", "MistralForCausalLM"},
    {"qwen3moe", "qwen3_moe", "Qwen3MoeForCausalLM"},
};

std::string FileStem(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(0, dot);
}

}  // namespace

StatusOr<ModelInfo> ReadModelInfo(const gguf::GgufFile& file, const std::string& path) {
  ModelInfo info;
  info.model_path = path;
  RADIXLM_ASSIGN_OR_RETURN(info.arch, file.GetStringOr("general.architecture", "unknown"));
  RADIXLM_ASSIGN_OR_RETURN(info.name, file.GetStringOr("general.name", FileStem(path)));
  RADIXLM_ASSIGN_OR_RETURN(info.chat_template, file.GetStringOr("tokenizer.chat_template", ""));
  info.model_type = info.arch;
  for (const HfNames& names : kHfNames) {
    if (info.arch == names.arch) {
      info.model_type = names.model_type;
      info.architectures = {names.architecture};
    }
  }
  info.file_bytes = static_cast<int64_t>(file.file_size());
  constexpr std::pair<const char*, const char*> kSamplingKeys[] = {
      {"general.sampling.temp", "temperature"},
      {"general.sampling.top_k", "top_k"},
      {"general.sampling.top_p", "top_p"},
      {"general.sampling.min_p", "min_p"},
      {"general.sampling.penalty_repeat", "repetition_penalty"}};
  for (const auto& [key, field] : kSamplingKeys) {
    if (!file.Has(key)) continue;
    RADIXLM_ASSIGN_OR_RETURN(info.sampling_defaults[field], file.GetFloat(key));
  }
  if (auto config = model::ModelConfig::FromGguf(file); config.ok()) {
    info.n_experts = config->n_experts;
    info.n_experts_used = config->n_experts_used;
    info.total_parameters = config->TotalParameters();
    info.active_parameters = config->ActiveParameters();
    info.hidden_size = config->hidden_size;
    if (info.arch == "llama" && info.n_experts > 0) {  // Mixtral: a llama file with experts
      info.model_type = "mixtral";
      info.architectures = {"MixtralForCausalLM"};
    }
  }
  return info;
}

StatusOr<std::unique_ptr<ModelAssets>> ModelAssets::FromGguf(const gguf::GgufFile& file,
                                                             const std::string& path) {
  RADIXLM_ASSIGN_OR_RETURN(ModelInfo info, ReadModelInfo(file, path));
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<tokenizer::Tokenizer> tok,
                           tokenizer::Tokenizer::FromGguf(file));
  return FromParts(std::make_unique<TokenizerCodec>(std::move(tok)), std::move(info));
}

std::unique_ptr<ModelAssets> ModelAssets::FromParts(std::unique_ptr<TokenTextCodec> codec,
                                                    ModelInfo info) {
  return std::unique_ptr<ModelAssets>(new ModelAssets(std::move(codec), std::move(info)));
}

ModelAssets::ModelAssets(std::unique_ptr<TokenTextCodec> codec, ModelInfo info)
    : codec_(std::move(codec)), info_(std::move(info)) {
  StatusOr<chat::ChatRenderer> chat = chat::ChatRenderer::ForModel(
      info_.chat_template, info_.arch, info_.name, codec_->bos_text(), codec_->eos_text());
  if (chat.ok()) {
    chat_.emplace(std::move(*chat));
  } else {
    chat_status_ = chat.status();
  }
}

}  // namespace radixlm
