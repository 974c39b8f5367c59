// What --model-path names, opened: a GGUF file (gguf::GgufFile::Open), or a Hugging Face
// checkpoint folder (OpenHfFolder), both as a GgufFile. `quantization` ("" or q8_0 | q4_k |
// q6_k, the --quantization flag) applies to folders only: with a GGUF file it is an error.
// A folder's report lines (hf_folder.h) go to `log` (when set) before this returns.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "gguf/gguf_file.h"
#include "util/status.h"

namespace radixlm::hf {

StatusOr<std::unique_ptr<gguf::GgufFile>> OpenModelFile(
    const std::string& path, const std::string& quantization,
    const std::function<void(const std::string&)>& log);

// The bytes a model path holds: a GGUF file's size, or a folder's *.safetensors files' total.
int64_t ModelPathBytes(const std::string& path);

}  // namespace radixlm::hf
