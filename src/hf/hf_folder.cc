#include "hf/hf_folder.h"

#include <filesystem>

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
  RADIXLM_ASSIGN_OR_RETURN(HfWeights weights, MapWeights(*ckpt, arch, q, embed_rows));

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
  out.report.push_back("tokenizer: tokenizer.json, " + tok.kind);
  out.report.push_back("chat template: " + tok.chat_template_source);
  for (const std::string& note : tok.notes) out.report.push_back("note: " + note);
  std::error_code ec;
  if (fs::is_regular_file(fs::path(dir) / "generation_config.json", ec)) {
    out.report.push_back(
        "generation_config.json: found; its sampling defaults are not applied "
        "(requests' own parameters and radixlm's defaults are used)");
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
