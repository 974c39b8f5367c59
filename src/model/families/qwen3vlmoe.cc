// qwen3vlmoe (the language side of Qwen3-VL-30B-A3B / -235B-A22B; llama.cpp's
// src/models/qwen3vlmoe.cpp): qwen3vl's attention, interleaved M-RoPE and deepstack
// (qwen3vl.cc) with qwen3moe's mixture-of-experts FFN in every layer (softmax routing, the top
// expert_used_count experts renormalized, no shared expert).
#include "model/families/family.h"

namespace radixlm::model {

const ModelFamily& Qwen3VlFamily();

// A namespace of its own: the families share one unity-build translation unit.
namespace qwen3vlmoe_family {
namespace {

Status Configure(const ArchMetadata& metadata, ModelConfig* c) {
  RADIXLM_RETURN_IF_ERROR(Qwen3VlFamily().configure(metadata, c));
  // expert_feed_forward_length, else llama.cpp's fallback feed_forward_length / used.
  int64_t used = 1;
  if (metadata.Has("expert_used_count")) {
    RADIXLM_ASSIGN_OR_RETURN(used, metadata.Positive("expert_used_count"));
  }
  RADIXLM_ASSIGN_OR_RETURN(const int64_t expert_ffn,
                           metadata.PositiveOr("expert_feed_forward_length", c->ffn_size / used));
  return ReadExperts(metadata, expert_ffn, /*required=*/true, c);
}

constexpr std::string_view kArchitectures[] = {"qwen3vlmoe"};

}  // namespace
}  // namespace qwen3vlmoe_family

const ModelFamily& Qwen3VlMoeFamily() {
  static const ModelFamily family{.name = "qwen3vlmoe",
                                  .architectures = qwen3vlmoe_family::kArchitectures,
                                  .configure = &qwen3vlmoe_family::Configure};
  return family;
}

}  // namespace radixlm::model
