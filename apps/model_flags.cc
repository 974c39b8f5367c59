#include "apps/model_flags.h"

#include <cstdio>

#include "hf/model_file.h"
#include "util/model_path.h"

namespace radixlm::apps {

void AddModelFlags(CLI::App* cmd, ModelFlags* flags) {
  cmd->add_option("--model-path", flags->model_path,
                  "GGUF model file, Hugging Face checkpoint folder, or 'default'");
  cmd->add_option("--quantization", flags->quantization,
                  "Hugging Face folders: q8_0 | q4_k | q6_k quantizes the weights at load "
                  "(default: used in their stored F32 / F16 / BF16)");
  cmd->add_option("--linear-attn-prefill", flags->linear_attn_prefill,
                  "Hybrid (linear-attention) models: recurrent (token by token; outputs "
                  "independent of how a prompt is split) | chunked (faster prefill; outputs "
                  "depend, within float rounding, on where the prompt's chunks start)")
      ->capture_default_str();
}

StatusOr<std::unique_ptr<model::Model>> LoadCommandModel(const ModelFlags& flags,
                                                         const model::ModelOptions& options,
                                                         const std::string& command) {
  model::ModelOptions model_options = options;
  RADIXLM_ASSIGN_OR_RETURN(model_options.linear_attn_prefill,
                           model::ParseLinearAttnPrefill(flags.linear_attn_prefill));
  RADIXLM_ASSIGN_OR_RETURN(std::string path, ResolveModelPath(flags.model_path));
  hf::ModelFileOptions file_options;
  file_options.quantization = flags.quantization;
  file_options.n_threads = options.n_threads;
  file_options.log = [&command](const std::string& line) {
    std::fprintf(stderr, "radixlm %s: %s\n", command.c_str(), line.c_str());
  };
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file,
                           hf::OpenModelFile(path, file_options));
  return model::Model::FromGguf(std::move(file), model_options);
}

}  // namespace radixlm::apps
