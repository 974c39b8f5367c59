// The model-family seam: one file per family (as llama.cpp's src/models/, vLLM's models/).
//
// A family names the general.architecture values it reads, reads its own metadata into the
// shared ModelConfig (the generic keys — layers, widths, heads, context, RMS epsilon, RoPE base
// and linear scaling, vocabulary — are already read when it runs) and may say which tensors
// each layer has (ModelConfig::layer_tensors; by default those its flags imply). Everything it sets
// is a flag or a constant of ModelConfig that picks one of the shared blocks (attention variants,
// FFN variants, norms, RoPE variants); the forward pass never sees the family.
//
// Adding a family: a file in this folder defining `const ModelFamily& <Name>Family()`, one line
// in the registry (family.cc) and one in src/model/CMakeLists.txt.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "gguf/gguf_file.h"
#include "model/layer_tensor.h"
#include "model/model_config.h"
#include "util/status.h"

namespace radixlm::model {

// Reads "<arch>.<suffix>" metadata keys with the checks every family wants; errors name the
// key.
class ArchMetadata {
 public:
  ArchMetadata(const gguf::GgufFile& file, std::string arch)
      : file_(file), arch_(std::move(arch)) {}

  const gguf::GgufFile& file() const { return file_; }
  const std::string& arch() const { return arch_; }
  std::string Key(std::string_view suffix) const;  // "<arch>.<suffix>"
  bool Has(std::string_view suffix) const { return file_.Has(Key(suffix)); }

  // A required integer > 0.
  StatusOr<int64_t> Positive(std::string_view suffix) const;
  // An integer > 0 when present, else def.
  StatusOr<int64_t> PositiveOr(std::string_view suffix, int64_t def) const;
  // A required number > 0.
  StatusOr<float> PositiveFloat(std::string_view suffix) const;
  // A number > 0 when present, else def.
  StatusOr<float> PositiveFloatOr(std::string_view suffix, float def) const;

 private:
  const gguf::GgufFile& file_;
  std::string arch_;
};

struct ModelFamily {
  std::string_view name;  // reported as ModelConfig::arch
  // general.architecture values this family reads (name among them).
  std::span<const std::string_view> architectures;
  // Reads the family's own keys and sets its features on `config` (whose generic fields are
  // filled). Errors name the key. It may also fill config->layer_tensors ([n_layers]) where its
  // layers differ from the tensors its flags imply (e.g. dense layers before MoE ones); left
  // empty, every layer gets StandardLayerTensors(*config).
  Status (*configure)(const ArchMetadata& metadata, ModelConfig* config) = nullptr;
};

// Unimplemented naming the first "blk.<i>.<suffix>" the file has, for tensors a family's
// checkpoints may carry (llama.cpp reads them when present) but the shared blocks lack: such a
// file is refused rather than run without them.
Status RefuseLayerTensors(const ArchMetadata& metadata, int64_t n_layers,
                          std::span<const std::string_view> suffixes);

// A mixture-of-experts FFN as llama.cpp's build_moe_ffn reads it: expert_count experts
// (none: the model stays dense, unless `required`), expert_used_count of them per token
// (0 < used <= count), each expert_ffn_size wide; softmax gating with the chosen weights
// renormalized. InvalidArgument naming the key otherwise.
Status ReadExperts(const ArchMetadata& metadata, int64_t expert_ffn_size, bool required,
                   ModelConfig* config);

// rope.dimension_sections (M-RoPE): 3 or 4 integers >= 0, t / h / w / the fourth; at least one
// of the first three > 0. InvalidArgument naming the key otherwise.
StatusOr<std::array<int64_t, 4>> ReadRopeSections(const ArchMetadata& metadata);

// The family that reads `architecture` (a general.architecture value), or null.
const ModelFamily* FindModelFamily(std::string_view architecture);
// Every architecture some family reads, sorted: "gemma2, gemma3, llama, ...".
std::string SupportedArchitectures();

}  // namespace radixlm::model
