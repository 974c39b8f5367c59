#include "hf/hf_folder.h"

#include <cstring>
#include <filesystem>
#include <string_view>

#include "hf/hf_config.h"
#include "hf/hf_tokenizer.h"
#include "hf/hf_weights.h"
#include "hf/json_file.h"
#include "hf/safetensors.h"

namespace radixlm::hf {
namespace {

namespace fs = std::filesystem;

// What the GgufFile's tensors point into.
struct FolderStorage {
  std::unique_ptr<Checkpoint> checkpoint;
  std::vector<std::unique_ptr<uint8_t[]>> owned;
};

// generation_config.json's sampling defaults (those SGLang reads: temperature, top_k, top_p,
// min_p, repetition_penalty) as the general.sampling.* keys llama.cpp defines for them; the
// report line says which.
StatusOr<std::string> ReadGenerationConfig(
    const std::string& dir, std::vector<std::pair<std::string, gguf::Value>>* metadata) {
  const std::string path = (fs::path(dir) / "generation_config.json").string();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::string("generation_config.json: none");
  RADIXLM_ASSIGN_OR_RETURN(nlohmann::json g, ReadJsonObject(path));
  constexpr std::pair<const char*, const char*> kKeys[] = {
      {"temperature", "general.sampling.temp"},
      {"top_k", "general.sampling.top_k"},
      {"top_p", "general.sampling.top_p"},
      {"min_p", "general.sampling.min_p"},
      {"repetition_penalty", "general.sampling.penalty_repeat"}};
  std::string found;
  for (const auto& [field, key] : kKeys) {
    const auto it = g.find(field);
    if (it == g.end() || it->is_null()) continue;
    if (!it->is_number()) {
      return InvalidArgument(path + ": field \"" + field + "\" must be a number");
    }
    if (std::string_view(field) == "top_k") {
      metadata->emplace_back(key, gguf::Value::I32(it->get<int32_t>()));
    } else {
      metadata->emplace_back(key, gguf::Value::F32(it->get<float>()));
    }
    found += (found.empty() ? "" : ", ") + std::string(field) + " " + it->dump();
  }
  if (found.empty()) return std::string("generation_config.json: no sampling defaults");
  return "generation_config.json: sampling defaults " + found + " (general.sampling.*)";
}

}  // namespace

bool IsHfFolder(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

StatusOr<HfFolder> OpenHfFolder(const std::string& dir, const HfFolderOptions& options) {
  const std::string& q = options.quantization;
  if (!q.empty() && q != "q8_0" && q != "q4_k" && q != "q6_k") {
    return InvalidArgument("--quantization must be q8_0, q4_k or q6_k, got '" + q + "'");
  }
  const std::string config_path = (fs::path(dir) / "config.json").string();
  RADIXLM_ASSIGN_OR_RETURN(nlohmann::json config, ReadJsonObject(config_path));
  RADIXLM_ASSIGN_OR_RETURN(HfArchitecture arch, ReadHfConfig(config, config_path));
  RADIXLM_ASSIGN_OR_RETURN(HfTokenizer tok, ReadHfTokenizer(dir, config));
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<Checkpoint> ckpt, Checkpoint::Open(dir));
  const int64_t embed_rows = arch.norm_plus_one ? tok.n_real_tokens : 0;
  RADIXLM_ASSIGN_OR_RETURN(HfWeights weights, MapWeights(*ckpt, arch, q, embed_rows, options.pool));

  HfFolder out;
  std::string name = fs::path(dir).filename().string();
  if (name.empty()) name = fs::path(dir).parent_path().filename().string();
  std::vector<std::pair<std::string, gguf::Value>> metadata;
  metadata.emplace_back("general.name", gguf::Value::Str(name));
  for (auto& kv : arch.metadata) metadata.push_back(std::move(kv));
  for (auto& kv : tok.metadata) metadata.push_back(std::move(kv));

  out.report.push_back("Hugging Face folder " + dir + ": " + arch.hf_name + " (config.json) -> " +
                       arch.arch + " family");
  out.report.push_back("weights: " + ckpt->description() + ", " + weights.summary +
                       (weights.owned_bytes > 0
                            ? ", " + std::to_string(weights.owned_bytes >> 20) + " MiB copied"
                            : ""));
  out.report.push_back("tokenizer: " + tok.source + ", " + tok.kind);
  out.report.push_back("chat template: " + tok.chat_template_source);
  for (const std::string& note : tok.notes) out.report.push_back("note: " + note);
  RADIXLM_ASSIGN_OR_RETURN(std::string sampling, ReadGenerationConfig(dir, &metadata));
  out.report.push_back(sampling);

  if (!arch.rope_freq_factors.empty()) {  // llama3 rope scaling: a tensor the converter makes
    const size_t bytes = arch.rope_freq_factors.size() * sizeof(float);
    auto buf = std::make_unique<uint8_t[]>(bytes);
    std::memcpy(buf.get(), arch.rope_freq_factors.data(), bytes);
    gguf::TensorInfo t;
    t.name = "rope_freqs.weight";
    t.type = gguf::GgmlType::kF32;
    t.shape = {static_cast<int64_t>(arch.rope_freq_factors.size())};
    t.size_bytes = bytes;
    t.data = buf.get();
    weights.tensors.push_back(std::move(t));
    weights.owned.push_back(std::move(buf));
    out.report.push_back("rope_scaling llama3: rope_freqs.weight computed from config.json");
  }

  auto storage = std::make_shared<FolderStorage>();
  storage->checkpoint = std::move(ckpt);
  storage->owned = std::move(weights.owned);
  RADIXLM_ASSIGN_OR_RETURN(
      out.file,
      gguf::GgufFile::FromParts(dir, std::move(metadata), std::move(weights.tensors), storage));
  return out;
}

}  // namespace radixlm::hf
