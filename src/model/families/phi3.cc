// phi3 (Phi-3 / Phi-3.5 mini and medium, Phi-4-mini's text layout; llama.cpp's
// src/models/phi3.cpp): llama's block with Q, K and V in one attn_qkv.weight and the FFN's gate
// and up in one ffn_up.weight (gate rows first), NeoX RoPE with LongRoPE's long / short
// frequency factors and attention factor when the file has them, and Q scaled before Q·K. The
// sliding window some files declare is not applied (llama.cpp disables it for phi3 too).
#include "model/families/family.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace phi3_family {
namespace {

Status Configure(const ArchMetadata&, ModelConfig* c) {
  c->rope_layout = RopeLayout::kNeox;
  c->fused_gate_up = true;
  c->scale_query = true;
  c->sliding_window = 0;
  return Status::Ok();
}

constexpr std::string_view kArchitectures[] = {"phi3"};

}  // namespace
}  // namespace phi3_family

const ModelFamily& Phi3Family() {
  static const ModelFamily family{.name = "phi3",
                                  .architectures = phi3_family::kArchitectures,
                                  .configure = &phi3_family::Configure};
  return family;
}

}  // namespace radixlm::model
