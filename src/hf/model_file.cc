#include "hf/model_file.h"

#include <filesystem>

#include "hf/hf_folder.h"

namespace radixlm::hf {

StatusOr<std::unique_ptr<gguf::GgufFile>> OpenModelFile(
    const std::string& path, const std::string& quantization,
    const std::function<void(const std::string&)>& log) {
  if (!IsHfFolder(path)) {
    if (!quantization.empty()) {
      return InvalidArgument("--quantization applies to Hugging Face folders; '" + path +
                             "' is a GGUF file (its tensors keep their types)");
    }
    return gguf::GgufFile::Open(path);
  }
  HfFolderOptions options;
  options.quantization = quantization;
  RADIXLM_ASSIGN_OR_RETURN(HfFolder folder, OpenHfFolder(path, options));
  if (log) {
    for (const std::string& line : folder.report) log(line);
  }
  return std::move(folder.file);
}

int64_t ModelPathBytes(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    const auto size = fs::file_size(path, ec);
    return ec ? 0 : static_cast<int64_t>(size);
  }
  int64_t total = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
    if (e.is_regular_file(ec) && e.path().extension() == ".safetensors") {
      total += static_cast<int64_t>(e.file_size(ec));
    }
  }
  return total;
}

}  // namespace radixlm::hf
