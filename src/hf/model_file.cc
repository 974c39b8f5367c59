#include "hf/model_file.h"

#include <filesystem>

#include "hf/hf_folder.h"
#include "util/thread_pool.h"

namespace radixlm::hf {

StatusOr<std::unique_ptr<gguf::GgufFile>> OpenModelFile(const std::string& path,
                                                        const ModelFileOptions& options) {
  if (!IsHfFolder(path)) {
    if (!options.quantization.empty()) {
      return InvalidArgument("--quantization applies to Hugging Face folders; '" + path +
                             "' is a GGUF file (its tensors keep their types)");
    }
    return gguf::GgufFile::Open(path);
  }
  // The pool lives for the load only: the model that reads the file starts its own (of the
  // same --threads) once the file is open.
  std::unique_ptr<ThreadPool> pool;
  if (!options.quantization.empty()) pool = std::make_unique<ThreadPool>(options.n_threads);
  HfFolderOptions folder_options;
  folder_options.quantization = options.quantization;
  folder_options.pool = pool.get();
  RADIXLM_ASSIGN_OR_RETURN(HfFolder folder, OpenHfFolder(path, folder_options));
  if (options.log) {
    for (const std::string& line : folder.report) options.log(line);
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
