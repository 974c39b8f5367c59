// qwen3moe (Qwen3-30B-A3B, Qwen3-235B-A22B; llama.cpp's src/models/qwen3moe.cpp): qwen3's
// attention (NeoX RoPE, per-head RMSNorm of Q and K) and a mixture-of-experts FFN in every
// layer: softmax routing over expert_count experts, the top expert_used_count per token with
// their weights renormalized, no shared expert.
#include "model/families/family.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace qwen3moe_family {
namespace {

Status Configure(const ArchMetadata& metadata, ModelConfig* c) {
  c->rope_layout = RopeLayout::kNeox;
  c->qk_norm = true;
  // expert_feed_forward_length, else llama.cpp's fallback feed_forward_length / used.
  int64_t used = 1;
  if (metadata.Has("expert_used_count")) {
    RADIXLM_ASSIGN_OR_RETURN(used, metadata.Positive("expert_used_count"));
  }
  RADIXLM_ASSIGN_OR_RETURN(const int64_t expert_ffn,
                           metadata.PositiveOr("expert_feed_forward_length", c->ffn_size / used));
  return ReadExperts(metadata, expert_ffn, /*required=*/true, c);
}

constexpr std::string_view kArchitectures[] = {"qwen3moe"};

}  // namespace
}  // namespace qwen3moe_family

const ModelFamily& Qwen3MoeFamily() {
  static const ModelFamily family{.name = "qwen3moe",
                                  .architectures = qwen3moe_family::kArchitectures,
                                  .configure = &qwen3moe_family::Configure};
  return family;
}

}  // namespace radixlm::model
