// A Hugging Face checkpoint folder (config.json, model.safetensors[.index.json],
// tokenizer.json, tokenizer_config.json) presented as the GgufFile the rest of radixlm reads:
// the metadata keys and tensor table llama.cpp's converter would write for it (hf_config.h,
// hf_tokenizer.h, hf_weights.h), the weights memory-mapped where they are served as stored.
//
// Start-up must say what it found: OpenHfFolder returns one line per part (architecture,
// dtype and what is done with it, tokenizer kind, chat template source) for the caller to log.
// A missing or unknown part fails with a Status naming the file and field.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "util/status.h"
#include "util/thread_pool.h"

namespace radixlm::hf {

struct HfFolderOptions {
  std::string quantization;  // "" (serve as stored), "q8_0", "q4_k" or "q6_k"
  // Quantization at load splits each matrix's rows over this pool; nullptr: the calling thread.
  ThreadPool* pool = nullptr;
};

struct HfFolder {
  std::unique_ptr<gguf::GgufFile> file;
  std::vector<std::string> report;  // what was found and what will be done, for the log
};

// Whether `path` is a directory (a model path that is not a GGUF file).
bool IsHfFolder(const std::string& path);

StatusOr<HfFolder> OpenHfFolder(const std::string& dir, const HfFolderOptions& options);

}  // namespace radixlm::hf
