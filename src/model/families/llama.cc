// llama (Llama 2/3, SmolLM2, Mistral 7B and the many files written as "llama"; llama.cpp's
// src/models/llama.cpp): the plain pre-norm block with normal (interleaved-pair) RoPE, SwiGLU,
// and llama-3's per-pair frequency factors when the file has rope_freqs.weight. A file with
// llama.expert_count (Mixtral) has a mixture-of-experts FFN in every layer instead: experts
// feed_forward_length wide, softmax routing to the top expert_used_count, weights renormalized.
#include "model/families/family.h"
#include "model/tensor_names.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace llama_family {
namespace {

Status Configure(const ArchMetadata& metadata, ModelConfig* c) {
  c->rope_layout = RopeLayout::kNormal;
  c->has_rope_freq_factors = metadata.file().FindTensor(kRopeFreqsName) != nullptr;
  return ReadExperts(metadata, c->ffn_size, /*required=*/false, c);
}

constexpr std::string_view kArchitectures[] = {"llama"};

}  // namespace
}  // namespace llama_family

const ModelFamily& LlamaFamily() {
  static const ModelFamily family{.name = "llama",
                                  .architectures = llama_family::kArchitectures,
                                  .configure = &llama_family::Configure};
  return family;
}

}  // namespace radixlm::model
