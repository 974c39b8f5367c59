// glm4 (GLM-4-0414 dense; llama.cpp's src/models/glm4.cpp): norms on both sides of each block
// (input RMSNorm, and RMSNorm of the block's output before the residual add), the FFN's gate
// and up in one ffn_up.weight (gate rows first), normal RoPE over the first
// rope.dimension_count values of each head (partial rotary), Q/K/V biases where the file has
// them. Multimodal files (rope.dimension_sections, M-RoPE) are refused.
#include "model/families/family.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace glm4_family {
namespace {

Status Configure(const ArchMetadata& metadata, ModelConfig* c) {
  if (metadata.Has("rope.dimension_sections")) {
    return Unimplemented("model metadata: '" + metadata.Key("rope.dimension_sections") +
                         "' (multimodal M-RoPE) is not supported");
  }
  c->rope_layout = RopeLayout::kNormal;
  c->pre_norms = true;
  c->post_norms = true;
  c->fused_gate_up = true;
  return Status::Ok();
}

constexpr std::string_view kArchitectures[] = {"glm4"};

}  // namespace
}  // namespace glm4_family

const ModelFamily& Glm4Family() {
  static const ModelFamily family{.name = "glm4",
                                  .architectures = glm4_family::kArchitectures,
                                  .configure = &glm4_family::Configure};
  return family;
}

}  // namespace radixlm::model
