// What --model-path names, opened: a GGUF file (gguf::GgufFile::Open), or a Hugging Face
// checkpoint folder (OpenHfFolder), both as a GgufFile. Every command that takes a model path
// opens it here, so a folder works wherever a GGUF file does.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "gguf/gguf_file.h"
#include "util/status.h"

namespace radixlm::hf {

struct ModelFileOptions {
  // "" or q8_0 | q4_k | q6_k (the --quantization flag): applies to folders only; with a GGUF
  // file it is an error.
  std::string quantization;
  // Threads that quantize a folder's matrices at load (the model's --threads: <= 0, one per
  // hardware thread). The bytes do not depend on it.
  int n_threads = 0;
  // A folder's report lines (hf_folder.h) go here (when set) before OpenModelFile returns.
  std::function<void(const std::string&)> log;
};

StatusOr<std::unique_ptr<gguf::GgufFile>> OpenModelFile(const std::string& path,
                                                        const ModelFileOptions& options);

// The bytes a model path holds: a GGUF file's size, or a folder's *.safetensors files' total.
int64_t ModelPathBytes(const std::string& path);

}  // namespace radixlm::hf
