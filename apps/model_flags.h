// The model flags every model-running subcommand shares (generate, score, speed; serve has its
// own copy inside EngineConfig): --model-path names a GGUF file, a Hugging Face checkpoint
// folder or 'default', and --quantization quantizes a folder's matrices at load. The model is
// opened by hf::OpenModelFile, the path `serve` takes, so a folder works everywhere a GGUF does.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "model/model.h"
#include "util/status.h"

namespace radixlm::apps {

struct ModelFlags {
  std::string model_path = "default";
  std::string quantization;                       // "" | q8_0 | q4_k | q6_k (folders only)
  std::string linear_attn_prefill = "recurrent";  // model::ParseLinearAttnPrefill's names
};

// Adds --model-path, --quantization and --linear-attn-prefill to `cmd`, writing into `flags`.
void AddModelFlags(CLI::App* cmd, ModelFlags* flags);

// Resolves and opens flags.model_path and loads the model with `options` (its n_threads also
// quantizes a folder; its linear_attn_prefill is the flag's). A folder's findings go to stderr,
// each line prefixed with `command`.
StatusOr<std::unique_ptr<model::Model>> LoadCommandModel(const ModelFlags& flags,
                                                         const model::ModelOptions& options,
                                                         const std::string& command);

}  // namespace radixlm::apps
