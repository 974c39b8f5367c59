// qwen3next (Qwen3-Next-80B-A3B; llama.cpp's src/models/qwen3next.cpp): the hybrid that
// qwen35 grew from. As qwen35moe (qwen35moe.cc) but: plain NeoX RoPE on the first
// rope.dimension_count values of each head (no sections); the linear layers' beta and alpha
// projections in one ssm_ba.weight, per key head its value heads' beta rows then their alpha
// rows; value head h reading Q/K head h / (value heads / key heads) (the checkpoint's grouped
// order, which llama.cpp repeats each Q/K head into). Files with the older fused ssm_in
// projection are refused by name. See qwen_hybrid.h.
#include "model/families/family.h"
#include "model/families/qwen_hybrid.h"

namespace radixlm::model {

// A namespace of its own: the families share one unity-build translation unit.
namespace qwen3next_family {
namespace {

Status Configure(const ArchMetadata& m, ModelConfig* c) {
  return ConfigureQwenHybrid(
      m,
      QwenHybridLayout{
          .rope_sections = false, .fused_beta_alpha = true, .grouped_heads = true, .experts = true},
      c);
}

constexpr std::string_view kArchitectures[] = {"qwen3next"};

}  // namespace
}  // namespace qwen3next_family

const ModelFamily& Qwen3NextFamily() {
  static const ModelFamily family{.name = "qwen3next",
                                  .architectures = qwen3next_family::kArchitectures,
                                  .configure = &qwen3next_family::Configure};
  return family;
}

}  // namespace radixlm::model
