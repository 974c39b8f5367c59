// qwen35moe (Qwen 3.5 MoE: 35B-A3B, 122B-A10B, 397B-A17B; llama.cpp's src/models/qwen35moe.cpp):
// qwen35's layers (qwen35.cc) with a mixture-of-experts FFN in every layer: softmax routing
// over expert_count experts of expert_feed_forward_length, the top expert_used_count per token
// with their weights renormalized, plus a shared expert (expert_shared_feed_forward_length wide)
// whose output is scaled by sigmoid(xn · ffn_gate_inp_shexp) per token. See qwen_hybrid.h.
#include "model/families/family.h"
#include "model/families/qwen_hybrid.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace qwen35moe_family {
namespace {

Status Configure(const ArchMetadata& m, ModelConfig* c) {
  return ConfigureQwenHybrid(m, QwenHybridLayout{.experts = true}, c);
}

constexpr std::string_view kArchitectures[] = {"qwen35moe"};

}  // namespace
}  // namespace qwen35moe_family

const ModelFamily& Qwen35MoeFamily() {
  static const ModelFamily family{.name = "qwen35moe",
                                  .architectures = qwen35moe_family::kArchitectures,
                                  .configure = &qwen35moe_family::Configure};
  return family;
}

}  // namespace radixlm::model
